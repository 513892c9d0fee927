#!/usr/bin/env bats
# What readers show of who waits and of text other writers put in a shared
# registry (SPEC §5 jobreg-get --line, --slots, --report; §5a Who waits;
# §5b): the calls in a job's line and a slot group's, why a job waits, when
# it is next due, and control characters (C0, DEL, C1) escaped in every
# output for people, as JSON escapes them in -j.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# ---- local helpers ------------------------------------------------------------

ESC=$'\e' BEL=$'\a' CSI=$'\xc2\x9b'

# raw_free TEXT: TEXT holds no ESC, BEL or C1 CSI byte (nothing a terminal obeys).
raw_free() {
	[[ $1 != *"$ESC"* && $1 != *"$BEL"* && $1 != *"$CSI"* ]] || flunk "raw control bytes in: $(printf '%q' "$1")"
}

# in_line JOB: jobreg-get --line lists a place of JOB's.
in_line() {
	[ -n "$(jobreg-get --line "$1")" ]
}

# place_file JOB N LINE: a waiter's place N in JOB's line whose file holds LINE
# (as given: no newline added), locked by a background process as a waiting
# dispatcher holds it (SPEC §5a Who waits).
place_file() {
	[ -d "$REG" ] || mkdir -p "$REG"
	printf '%s' "$3" > "$REG/.$1.wait.$2"
	hold_place "$1" "$2"
}

# slot_waiter GROUP M LINE: a call's place M in slot group GROUP's line, its
# file holding LINE, locked in the background.
slot_waiter() {
	[ -d "$REG" ] || mkdir -p "$REG"
	printf '%s' "$3" > "$REG/.$1.slotwait.$2"
	flock -x "$REG/.$1.slotwait.$2" sleep 60 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until place_held "$REG/.$1.slotwait.$2"
}

# ---- control characters ---------------------------------------------------------

@test "-m refuses a C1 control character (CSI) with 64, as it refuses ESC" {
	local m
	for m in "a${CSI}2Jb" "a${ESC}[2Jb" $'a\xc2\x85b'; do
		run --separate-stderr jobreg-set -m "$m" job PENDING
		[ "$status" -eq 64 ] || flunk "set -m $(printf %q "$m"): $status"
		[[ $stderr == *"bad note: a newline or other control character"* ]]
		run --separate-stderr jobreg-set --pause -m "$m" job
		[ "$status" -eq 64 ]
		run --separate-stderr jobreg-dispatch -m "$m" job true
		[ "$status" -eq 64 ]
	done
	[ ! -e "$REG/job" ]
	# a character past U+009F is text
	jobreg-set -m $'caf\xc3\xa9 \xc2\xa0ok' job PENDING
	[ "$(field job note)" = $'caf\xc3\xa9 \xc2\xa0ok' ]
}

@test "get -l, -j and --report show C1 controls another writer put in a record escaped" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z \
		"host=h${CSI}2J" exit=0 cancelled=1 "cancelled_by=ops${CSI}31m@h" \
		"paused_until=inf" "paused_by=u${CSI}0m@h" "paused_note=n${CSI}1m" "note=x${CSI}2Jy"
	run --separate-stderr jobreg-get -l job
	[ "$status" -eq 0 ]
	raw_free "$output"
	[ "$output" = $'job\tDONE\t2026-01-01T00:00:00Z\t-\th\\u009b2J\t-\t0\tx\\u009b2Jy' ]
	run --separate-stderr jobreg-get -j job
	[ "$status" -eq 0 ]
	raw_free "$output"
	[[ $output == *'"note": "x\u009b2Jy"'* && $output == *'"paused_by": "u\u009b0m@h"'* ]]
	python3 -c 'import json, sys; assert json.loads(sys.argv[1])["note"] == "x\u009b2Jy"' "$output"
	run --separate-stderr jobreg-get --report job
	[ "$status" -eq 0 ]
	raw_free "$output"
	[[ ${lines[0]} == *'cancelled by ops\u009b31m@h, paused until resumed (by u\u009b0m@h: n\u009b1m)'* ]] || flunk "$output"
}

@test "get --history shows ESC, BEL and CSI of a history line escaped, plain, -l and -j" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	printf 'run=1 outcome=OK started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z exit=0 host=h%s]0;owned%s pid=1%s2J\n' \
		"$ESC" "$BEL" "$CSI" > "$REG/.job.history"
	local opt
	for opt in "" -l; do
		# shellcheck disable=SC2086  # no word for plain, on purpose
		run --separate-stderr jobreg-get $opt --history job
		[ "$status" -eq 0 ]
		raw_free "$output"
		[ "$(cut -f8,9 <<< "$output")" = $'h\\x1b]0;owned\\x07\t1\\u009b2J' ] || flunk "$output"
	done
	run --separate-stderr jobreg-get -j --history job
	[ "$status" -eq 0 ]
	raw_free "$output"
	[[ $output == *'"host": "h\u001b]0;owned\u0007", "pid": "1\u009b2J"'* ]] || flunk "$output"
}

@test "dispatch's messages show control characters of a record escaped: the paused refusal" {
	write_record job version=1 status=PENDING since=2026-01-01T00:00:00Z paused_until=inf \
		"paused_by=u${CSI}2J@h" "paused_note=n${CSI}31m"
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 75 ]
	raw_free "$stderr"
	[[ $stderr == *'u\u009b2J@h'* && $stderr == *'n\u009b31m'* ]] || flunk "$stderr"
	# a message that names what the user typed, too
	run --separate-stderr jobreg-get "a${ESC}[2Jb"
	[ "$status" -eq 64 ]
	raw_free "$stderr"
	[[ $stderr == *"'a\\x1b[2Jb'"* ]]
}

@test "get --line and --slots show control characters of a waiter's line escaped, -j as JSON" {
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=2 wait_head=1
	place_file j 1 "kind=wait pid=1 host=h${ESC}]0;x${BEL} since=t${CSI}2J"$'\n'
	: > "$REG/.g.slot.1"
	printf 'next=2\nhead=1\n' > "$REG/.g.slotline"
	slot_waiter g 1 "job=j pid=2 host=h${ESC}[2J since=t${CSI}1m"$'\n'
	run --separate-stderr jobreg-get --line j
	[ "$status" -eq 0 ]
	raw_free "$output"
	[ "$output" = $'j\t1\twait\th\\x1b]0;x\\x07\t1\tt\\u009b2J' ] || flunk "$output"
	run --separate-stderr jobreg-get -j --line j
	raw_free "$output"
	[[ $output == *'"host": "h\u001b]0;x\u0007", "pid": 1, "since": "t\u009b2J"'* ]] || flunk "$output"
	run --separate-stderr jobreg-get --slots g
	[ "$status" -eq 0 ]
	raw_free "$output"
	[ "${lines[1]}" = $'g\t1\twaiting\tj\t-\th\\x1b[2J\t2\tt\\u009b1m' ] || flunk "$output"
}

# ---- jobreg-get --line --------------------------------------------------------

@test "get --line lists the live places of a job's line in order: job place kind host pid since" {
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=7 wait_head=2 \
		replaced_below=3
	place_file j 2 $'kind=wait pid=12 host=h2 since=2026-01-01T00:00:02Z\n'      # superseded
	place_file j 3 $'kind=once pid=13 host=h3 since=2026-01-01T00:00:03Z\n'
	printf 'kind=wait pid=14 host=h4 since=2026-01-01T00:00:04Z\n' > "$REG/.j.wait.4"   # dead
	place_file j 6 $'kind=replace pid=16 host=h6 since=2026-01-01T00:00:06Z\n'
	place_file j 5 $'kind=coalesce pid=15 host=h5 since=2026-01-01T00:00:05Z\n'
	run --separate-stderr jobreg-get --line j
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = $'j\t3\tonce\th3\t13\t2026-01-01T00:00:03Z\nj\t5\tcoalesce\th5\t15\t2026-01-01T00:00:05Z\nj\t6\treplace\th6\t16\t2026-01-01T00:00:06Z' ] ||
		flunk "$output"
	run --separate-stderr jobreg-get -j --line j
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"job": "j", "place": 3, "kind": "once", "host": "h3", "pid": 13, "since": "2026-01-01T00:00:03Z"}' ]
	[ "${#lines[@]}" -eq 3 ]
	python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' <<< "$output"
}

@test "get --line lists a place whose line is missing or torn with - fields" {
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=4 wait_head=1
	place_file j 1 ''                                    # made, its line not yet written
	place_file j 2 'kind=once pid=13 host=h'             # torn: no newline
	place_file j 3 $'kind=wait pid=14 job=other\n'       # whole, but short
	run --separate-stderr jobreg-get --line j
	[ "$status" -eq 0 ]
	[ "$output" = $'j\t1\t-\t-\t-\t-\nj\t2\t-\t-\t-\t-\nj\t3\twait\t-\t14\t-' ] || flunk "$output"
	run --separate-stderr jobreg-get -j --line j
	[ "$output" = $'{"job": "j", "place": 1}\n{"job": "j", "place": 2}\n{"job": "j", "place": 3, "kind": "wait", "pid": 14}' ] ||
		flunk "$output"
}

@test "get --line reads no directory: a place outside wait_head..wait_next is not listed" {
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=3 wait_head=2
	place_file j 1 $'kind=wait pid=11 host=h since=2026-01-01T00:00:01Z\n'
	place_file j 2 $'kind=wait pid=12 host=h since=2026-01-01T00:00:02Z\n'
	place_file j 3 $'kind=wait pid=13 host=h since=2026-01-01T00:00:03Z\n'
	run --separate-stderr jobreg-get --line j
	[ "$output" = $'j\t2\twait\th\t12\t2026-01-01T00:00:02Z' ] || flunk "$output"
	command -v strace >/dev/null || skip "strace is not installed"
	traced -f -qq -e trace=getdents64,getdents -o "$T/trace" jobreg-get --line j >/dev/null
	if [ -s "$T/trace" ]; then flunk "a directory read: $(cat "$T/trace")"; fi
}

@test "get --line of a job with no record or no waiter prints nothing; a corrupt record is 65" {
	write_record idle version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	run --separate-stderr jobreg-get --line idle none
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	write_record bad version=1 status=WHAT
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=2 wait_head=1
	place_file j 1 $'kind=wait pid=11 host=h since=2026-01-01T00:00:01Z\n'
	run --separate-stderr jobreg-get --line bad j
	[ "$status" -eq 65 ]
	[[ $stderr == "jobreg-get: bad: corrupt record $REG/bad"* ]]
	[ "$output" = $'j\t1\twait\th\t11\t2026-01-01T00:00:01Z' ]
}

@test "get --line reports a place it cannot probe (74) and never leaves it out silently" {
	command -v strace >/dev/null || skip "strace is not installed"
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=3 wait_head=1
	place_file j 1 $'kind=wait pid=11 host=h since=2026-01-01T00:00:01Z\n'
	place_file j 2 $'kind=wait pid=12 host=h since=2026-01-01T00:00:02Z\n'
	run --separate-stderr traced -qq -o /dev/null -e inject=flock:error=ENOLCK:when=1 \
		jobreg-get --line j
	[ "$status" -eq 74 ]
	[[ $stderr == "jobreg-get: j: cannot look at place 1: $REG/.j.wait.1: "* ]] || flunk "$stderr"
	[ "$output" = $'j\t2\twait\th\t12\t2026-01-01T00:00:02Z' ]
}

@test "get --line with -l, -P, --report, -a, -s, -o or no JOB is a usage error" {
	local args
	run jobreg-get --line j
	[ "$status" -eq 0 ]
	for args in "--line -l j" "--line -P j" "--line --report j" "--line -a" "--line -s OK j" \
		"--line -o $T/f j" "--line" "--line --history j" "--line --slots"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-get $args
		[ "$status" -eq 64 ] || flunk "jobreg-get $args: exit $status"
		one_line
		[[ $stderr == *--line* || $stderr == *"no JOB"* ]] || flunk "jobreg-get $args: $stderr"
	done
}

@test "get --line lists a dispatcher waiting in the job's line while a run goes on" {
	bg_dispatch j
	jobreg-dispatch --wait 30 j true 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	# (its place is locked before its record says wait_next=2)
	poll_until in_line j
	run --separate-stderr jobreg-get --line j
	[ "$status" -eq 0 ]
	[[ $output == $'j\t1\t'* ]] || flunk "$output"
	[ "${#lines[@]}" -eq 1 ]
	: > "$T/release"
	wait_bg "$BG_PID"
	poll_until test ! -e "$REG/.j.wait.1"
	run jobreg-get --line j
	[ -z "$output" ]
}

# ---- jobreg-get --slots: the waiters ----------------------------------------------

@test "get --slots lists the calls waiting in a group's line, in order, under its slots" {
	mkdir -p "$REG"
	: > "$REG/.heavy.slot.1"
	: > "$REG/.light.slot.1"
	printf 'next=5\nhead=1\n' > "$REG/.heavy.slotline"
	slot_waiter heavy 3 $'job=b pid=23 host=h since=2026-01-01T00:00:03Z\n'
	slot_waiter heavy 2 $'job=a pid=22 host=h since=2026-01-01T00:00:02Z\n'
	printf 'job=x pid=24 host=h since=2026-01-01T00:00:04Z\n' > "$REG/.heavy.slotwait.4"  # dead
	run --separate-stderr jobreg-get --slots
	[ "$status" -eq 0 ]
	[ "$output" = $'heavy\t1\tfree\t-\t-\t-\t-\nheavy\t2\twaiting\ta\t-\th\t22\t2026-01-01T00:00:02Z\nheavy\t3\twaiting\tb\t-\th\t23\t2026-01-01T00:00:03Z\nlight\t1\tfree\t-\t-\t-\t-' ] ||
		flunk "$output"
	run --separate-stderr jobreg-get -j --slots heavy
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = '{"group": "heavy", "place": 2, "state": "waiting", "job": "a", "host": "h", "pid": 22, "since": "2026-01-01T00:00:02Z"}' ] ||
		flunk "$output"
	[ "${#lines[@]}" -eq 3 ]
	python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' <<< "$output"
}

# ---- jobreg-get --report ----------------------------------------------------------

@test "get --report says a job waits for a slot: waiting for slot heavy, 2nd in line" {
	write_record a version=1 status=PENDING since=2026-01-01T00:00:00Z
	write_record b version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 \
		started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z
	: > "$REG/.heavy.slot.1"
	printf 'next=4\nhead=1\n' > "$REG/.heavy.slotline"
	slot_waiter heavy 1 $'job=a pid=21 host=h since=2026-01-01T00:00:01Z\n'
	slot_waiter heavy 2 ''                                           # not yet written
	slot_waiter heavy 3 $'job=b pid=23 host=h since=2026-01-01T00:00:03Z\n'
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^a\ +PENDING\ +waiting\ for\ slot\ heavy,\ 1st\ in\ line\  ]] || flunk "$output"
	[[ ${lines[1]} =~ ^b\ +DONE\ +OK,\ waiting\ for\ slot\ heavy,\ 3rd\ in\ line\  ]] || flunk "$output"
	run --separate-stderr jobreg-get --report b
	[[ ${lines[0]} == *"OK, waiting for slot heavy, 3rd in line "* ]] || flunk "$output"
}

@test "get --report says how many calls wait in a job's line: 3 waiting" {
	write_record j version=1 status=PENDING since=2026-01-01T00:00:00Z wait_next=4 wait_head=1
	place_file j 1 $'kind=wait pid=11 host=h since=2026-01-01T00:00:01Z\n'
	place_file j 2 $'kind=once pid=12 host=h since=2026-01-01T00:00:02Z\n'
	place_file j 3 ''
	run --separate-stderr jobreg-get --report j
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^j\ +PENDING\ +3\ waiting\  ]] || flunk "$output"
}

@test "get --report and -j say when a job run with --every is next due; never ok: due now" {
	write_record daily version=1 status=DONE since=2026-01-02T00:30:00Z exit=0 \
		started=2026-01-02T00:00:00Z ended=2026-01-02T00:30:00Z last_success=2026-01-02T00:30:00Z \
		last_success_started=2026-01-02T00:00:00Z every=86400
	write_record fresh version=1 status=DONE since=2026-01-02T00:30:00Z exit=1 every=3600 \
		failures=1 consecutive_failures=1
	write_record plain version=1 status=DONE since=2026-01-02T00:30:00Z exit=0 \
		last_success_started=2026-01-02T00:00:00Z
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[[ $output == *"OK, next due 2026-01-03T00:00:00Z "* ]] || flunk "$output"
	[[ $output == *"FAILED exit 1, due now "* ]] || flunk "$output"
	[[ $output != *"plain "*"due"* ]] || flunk "$output"
	run --separate-stderr jobreg-get -j daily fresh plain
	[[ ${lines[0]} == *'"every": 86400, "duration": 1800, "next_due": "2026-01-03T00:00:00Z", "health": "OK"}' ]] || flunk "$output"
	[[ ${lines[1]} != *next_due* && ${lines[2]} != *next_due* ]]
}

@test "get --report shows a skip since the last transition and its reason: skipped 5m ago: no-slot" {
	local m5 h1 h2
	m5=$(now_rfc3339 -300) h1=$(now_rfc3339 -3600) h2=$(now_rfc3339 -7200)
	write_record refused version=1 status=DONE "since=$h1" exit=0 skipped=3 "last_skipped=$m5" \
		skip_reason=no-slot
	write_record old version=1 status=DONE "since=$h1" exit=0 skipped=1 "last_skipped=$h2" \
		skip_reason=running
	write_record bare version=1 status=PENDING "since=$h1" skipped=1 "last_skipped=$m5"
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[[ $output =~ refused\ +DONE\ +OK,\ skipped\ 5m[0-9]*s?\ ago:\ no-slot\  ]] || flunk "$output"
	[[ $output =~ bare\ +PENDING\ +skipped\ 5m[0-9]*s?\ ago\  ]] || flunk "$output"
	[[ $output != *"running"* ]] || flunk "$output"
}
