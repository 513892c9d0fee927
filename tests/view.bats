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
	[[ ${lines[0]} == *'cancelled by ops\u009b31m@h, paused by u\u009b0m@h (n\u009b1m)'* ]] || flunk "$output"
}

@test "get --history shows ESC, BEL and CSI of a history line escaped, plain, -l and -j" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	printf 'run=1 outcome=OK started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z exit=0 host=h%s]0;owned%s pid=1%s2J\n' \
		"$ESC" "$BEL" "$CSI" > "$REG/.job.history"
	local opt
	for opt in "" -l; do
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
