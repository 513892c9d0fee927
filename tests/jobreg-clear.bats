#!/usr/bin/env bats
# jobreg-clear: SPEC.md §1, §3, §4 (clear), §5 jobreg-clear, §6.
bats_require_minimum_version 1.5.0
load lib/helper

# ---- local helpers -------------------------------------------------------

load lib/procs

# done_record JOB [SECONDS_AGO]: a DONE record whose since lies SECONDS_AGO in the past.
done_record() {
	local t
	t=$(now_rfc3339 "-${2:-0}")
	write_record "$1" version=1 status=DONE "since=$t" "started=$t" "ended=$t" exit=0
}

# ---- removing records ----------------------------------------------------

@test "clear removes the named records and the jobs read PENDING again" {
	done_record nightly
	write_record p version=1 status=PENDING "since=$(now_rfc3339)"
	done_record keep
	run --separate-stderr jobreg-clear nightly p
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ ! -e "$REG/nightly" ]
	[ ! -e "$REG/p" ]
	[ -e "$REG/keep" ]
	run jobreg-get nightly p
	[ "$output" = "$(printf 'PENDING\nPENDING')" ]
}

@test "clear of a job with no record succeeds and creates no file, even with filters or --force" {
	done_record other
	for opts in "" "--force" "--stale" "--if DONE" "--older-than 1d"; do
		# shellcheck disable=SC2086
		run --separate-stderr jobreg-clear $opts j
		[ "$status" -eq 0 ]
		[ "$stderr" = "" ]
		[ "$(ls -A "$REG")" = "other" ]
	done
}

@test "clear on a missing registry succeeds and never creates it" {
	export JOBREG_DIR="$T/no/such/reg"
	for args in "j" "-a" "--stale -a" "--force j k" "--if DONE j"; do
		# shellcheck disable=SC2086
		run --separate-stderr jobreg-clear $args
		[ "$status" -eq 0 ]
		[ "$stderr" = "" ]
		[ ! -e "$T/no" ]
	done
}

@test "clear -d DIR works in that directory, also through a symlink, and not in \$JOBREG_DIR" {
	done_record j
	mkdir -p "$T/other"
	printf 'version=1\nstatus=DONE\n' >"$T/other/j"
	printf 'version=1\nstatus=DONE\n' >"$T/other/k"
	run jobreg-clear -d "$T/other" j
	[ "$status" -eq 0 ]
	[ ! -e "$T/other/j" ]
	[ -e "$REG/j" ]
	ln -s "$T/other" "$T/link"
	run jobreg-clear -d "$T/link" k
	[ "$status" -eq 0 ]
	[ ! -e "$T/other/k" ]
	[ -L "$T/link" ]
}

# ---- live runs -----------------------------------------------------------

@test "clear refuses a live run started by a background dispatcher, naming its owner" {
	bg_dispatch j
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-clear j
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "* ]]
	[[ "$stderr" == *"pid $BG_PID"* ]]
	[[ "$stderr" == *"$HOST"* ]]
	cmp "$T/before" "$REG/j"
	run jobreg-get j
	[ "$output" = "RUNNING" ]
}

@test "clear refuses a RUNNING record whose owner pid is alive (or on another host), naming the pid" {
	live_record j
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-clear j
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "* ]]
	[[ "$stderr" == *"pid $LIVE_PID"* ]]
	cmp "$T/before" "$REG/j"
	write_record k version=1 status=RUNNING "since=$(now_rfc3339)" owner=pid "host=other-$HOST" \
		"pid=$(dead_pid)" pid_start=1 boot_id=00000000-0000-0000-0000-000000000000 "started=$(now_rfc3339)"
	run jobreg-clear k
	[ "$status" -eq 1 ]
	[ -e "$REG/k" ]
}

@test "clear removes an operator's ownerless RUNNING record" {
	write_record j version=1 status=RUNNING "since=$(now_rfc3339)" "started=$(now_rfc3339)"
	run --separate-stderr jobreg-clear j
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ ! -e "$REG/j" ]
}

@test "clear --force removes a live pid-owned record" {
	live_record j
	run jobreg-clear --force j
	[ "$status" -eq 0 ]
	[ ! -e "$REG/j" ]
}

@test "clear --force removes a live dispatched run's record, keeps its held run lock, and the run's end does not bring it back" {
	bg_dispatch j
	run jobreg-clear --force j
	[ "$status" -eq 0 ]
	[ ! -e "$REG/j" ]
	# the run lock is still held by the live run, so it must not have been removed
	[ -e "$REG/.j.run" ]
	run flock -n "$REG/.j.run" true
	[ "$status" -ne 0 ]
	: >"$T/release"
	wait_bg "$BG_PID"
	[ "$BG_RC" -eq 0 ]
	[ ! -e "$REG/j" ]
	run jobreg-get j
	[ "$output" = "PENDING" ]
}

@test "clear -a refuses a live run with exit 1 but clears the other records" {
	live_record live
	done_record old
	run --separate-stderr jobreg-clear -a
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: live: "* ]]
	[ -e "$REG/live" ]
	[ ! -e "$REG/old" ]
}

# ---- filters -------------------------------------------------------------

@test "clear --stale removes STALE records: dead pid owner, free run lock, expired ttl" {
	stale_record deadpid
	write_record freelock version=1 status=RUNNING "since=$(now_rfc3339 -5)" owner=lock "host=$HOST" \
		"pid=$(dead_pid)" "started=$(now_rfc3339 -5)"
	write_record expired version=1 status=RUNNING "since=$(now_rfc3339 -60)" \
		"expires=$(now_rfc3339 -30)" "started=$(now_rfc3339 -60)"
	run --separate-stderr jobreg-clear --stale deadpid freelock expired
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(ls "$REG")" = "" ]
}

@test "clear --stale leaves a named DONE job or live run alone with exit 1 (-q: silently)" {
	done_record j
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-clear --stale j
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "*DONE* ]]
	cmp "$T/before" "$REG/j"
	run --separate-stderr jobreg-clear -q --stale j
	[ "$status" -eq 1 ]
	[ "$stderr" = "" ]
	cmp "$T/before" "$REG/j"
	live_record live
	run jobreg-clear --stale live
	[ "$status" -eq 1 ]
	[ -e "$REG/live" ]
}

@test "clear --stale -a sweeps only the STALE records and exits 0" {
	stale_record s1
	stale_record s2
	done_record d
	write_record p version=1 status=PENDING "since=$(now_rfc3339)"
	write_record r version=1 status=RUNNING "since=$(now_rfc3339)"
	live_record live
	run --separate-stderr jobreg-clear --stale -a
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(ls "$REG" | tr '\n' ' ')" = "d live p r " ]
}

@test "clear --if DONE clears DONE records and leaves a named PENDING one alone with exit 1" {
	done_record d
	write_record p version=1 status=PENDING "since=$(now_rfc3339)"
	run --separate-stderr jobreg-clear --if DONE d p
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: p: "*PENDING* ]]
	[ ! -e "$REG/d" ]
	[ -e "$REG/p" ]
}

@test "clear --if takes a case-insensitive list of derived statuses, STALE included" {
	done_record d
	write_record p version=1 status=PENDING "since=$(now_rfc3339)"
	write_record r version=1 status=RUNNING "since=$(now_rfc3339)"
	stale_record s
	run jobreg-clear --if done,Pending -a
	[ "$status" -eq 0 ]
	[ "$(ls "$REG" | tr '\n' ' ')" = "r s " ]
	run jobreg-clear --if stale -a
	[ "$status" -eq 0 ]
	[ "$(ls "$REG")" = "r" ]
}

@test "clear rejects a bad status list with 64 and touches nothing" {
	done_record j
	for s in BOGUS "" "DONE," "DONE,,PENDING" "CORRUPT"; do
		run --separate-stderr jobreg-clear --if "$s" j
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-clear: "* ]]
		[ -e "$REG/j" ]
	done
}

# older_sweep SPEC OLD_AGE NEW_AGE: --older-than SPEC -a clears the record OLD_AGE
# seconds old and keeps the one NEW_AGE seconds old.
older_sweep() {
	rm -f "$REG/old" "$REG/new"
	done_record old "$2"
	done_record new "$3"
	run --separate-stderr jobreg-clear --older-than "$1" -a
	[ "$status" -eq 0 ] || { echo "--older-than $1: status $status" >&2; return 1; }
	[ "$stderr" = "" ]
	[ ! -e "$REG/old" ] || { echo "--older-than $1: old record kept" >&2; return 1; }
	[ -e "$REG/new" ] || { echo "--older-than $1: new record cleared" >&2; return 1; }
}

@test "clear --older-than takes plain seconds and the units s, m, h, d, with fractions" {
	older_sweep 90 150 30
	older_sweep 90s 150 30
	older_sweep 2m 180 60
	older_sweep 2h 10800 3600
	older_sweep 1.5h 7200 3600
	older_sweep 7d $((8 * 86400)) $((6 * 86400))
}

@test "clear --older-than leaves a named newer job, or one without since, alone with exit 1" {
	done_record j 60
	run --separate-stderr jobreg-clear --older-than 1h j
	[ "$status" -eq 1 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "* ]]
	[ -e "$REG/j" ]
	write_record nosince version=1 status=DONE exit=0
	run jobreg-clear --older-than 1s nosince
	[ "$status" -eq 1 ]
	[ -e "$REG/nosince" ]
}

@test "clear filters are ANDed: --if DONE --older-than 1d clears only old DONE records" {
	done_record olddone $((2 * 86400))
	done_record newdone 60
	write_record oldpending version=1 status=PENDING "since=$(now_rfc3339 -$((2 * 86400)))"
	run jobreg-clear --if DONE --older-than 1d -a
	[ "$status" -eq 0 ]
	[ "$(ls "$REG" | tr '\n' ' ')" = "newdone oldpending " ]
}

@test "clear rejects bad durations and lock waits with 64 naming them, and touches nothing" {
	done_record j 86400
	for d in "" 7x -1 1e3 0x10 inf nan d 1..5h 1h30m "5s " 99999999999999999999999999d; do
		run --separate-stderr jobreg-clear --older-than "$d" j
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-clear: "*"'$d'"* ]]
		[ -e "$REG/j" ]
	done
	for w in abc -1 "" 1x; do
		run --separate-stderr jobreg-clear -w "$w" j
		[ "$status" -eq 64 ]
		one_line
		[ -e "$REG/j" ]
	done
}

# ---- -a ------------------------------------------------------------------

@test "clear -a removes every record and leaves an empty listing" {
	done_record a
	done_record b
	stale_record c
	write_record d version=1 status=RUNNING "since=$(now_rfc3339)"
	run --separate-stderr jobreg-clear -a
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(ls "$REG")" = "" ]
	run jobreg-get -a
	[ "$output" = "" ]
}

@test "clear -a handles the jobs in sorted (byte) order" {
	mkdir -p "$REG"
	ids="b B a1 a.2 a-3 A 9 10 z@x a+b"
	for id in $ids; do printf 'garbage\n' >"$REG/$id"; done
	run --separate-stderr jobreg-clear -a
	[ "$status" -eq 65 ]
	[ "${#stderr_lines[@]}" -eq 10 ]
	got=$(printf '%s\n' "${stderr_lines[@]}" | sed 's/^jobreg-clear: \([^:]*\): .*/\1/')
	want=$(printf '%s\n' $ids | LC_ALL=C sort)
	[ "$got" = "$want" ]
}

@test "clear -a exits with the status of the first failure in sorted order" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\n' >"$T/target"
	printf 'garbage\n' >"$REG/a"
	ln -s "$T/target" "$REG/b"
	run jobreg-clear -a
	[ "$status" -eq 65 ]
	rm -f "$REG/a" "$REG/b"
	ln -s "$T/target" "$REG/a"
	printf 'garbage\n' >"$REG/b"
	run jobreg-clear -a
	[ "$status" -eq 77 ]
}

# ---- corrupt and non-regular records -------------------------------------

@test "clear refuses a corrupt record with 65 naming its path and keeps it; --force removes it" {
	mkdir -p "$REG"
	for content in 'garbage' 'version=1\nstatus=STALE' 'version=1\nstatus=DONE\nstatus=DONE' 'version=1\nstatus=DONE\nnoequals'; do
		printf "$content\n" >"$REG/j"
		cp "$REG/j" "$T/before"
		run --separate-stderr jobreg-clear j
		[ "$status" -eq 65 ]
		one_line
		[[ "$stderr" == "jobreg-clear: j: "*"$REG/j"* ]]
		cmp "$T/before" "$REG/j"
	done
	run jobreg-clear --force j
	[ "$status" -eq 0 ]
	[ ! -e "$REG/j" ]
}

@test "clear refuses a symlink record with 77 and leaves it and its target untouched" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\n' >"$T/target"
	cp "$T/target" "$T/before"
	ln -s "$T/target" "$REG/j"
	run --separate-stderr jobreg-clear j
	[ "$status" -eq 77 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "* ]]
	[ -L "$REG/j" ]
	cmp "$T/before" "$T/target"
	run jobreg-clear --force j
	[ "$status" -ne 0 ]
	cmp "$T/before" "$T/target"
}

@test "clear refuses a FIFO or directory record, or a symlinked job lock, with 77 and without blocking" {
	mkdir -p "$REG/d"
	mkfifo "$REG/f"
	run timeout 5 jobreg-clear f
	[ "$status" -eq 77 ]
	[ -p "$REG/f" ]
	run timeout 5 jobreg-clear d
	[ "$status" -eq 77 ]
	[ -d "$REG/d" ]
	done_record j
	ln -s "$T/victim" "$REG/.j.lock"
	run jobreg-clear j
	[ "$status" -eq 77 ]
	[ ! -e "$T/victim" ]
	[ -e "$REG/j" ]
}

# ---- lock and temp files -------------------------------------------------

@test "clear of a finished dispatched job also removes its lock files" {
	jobreg-dispatch j true
	[ -e "$REG/.j.lock" ]
	[ -e "$REG/.j.run" ]
	run jobreg-clear j
	[ "$status" -eq 0 ]
	[ "$(ls -A "$REG" | grep -v '^\.-audit')" = "" ]   # (the audit log stays, SPEC §3c)
}

@test "clear sweeps exactly the job's leftover temp file" {
	done_record j
	done_record k
	cd "$REG"
	touch .j.tmp .j.tmp.AbC123 .j.tmpx .k.tmp .jj.tmp
	run jobreg-clear j
	[ "$status" -eq 0 ]
	[ ! -e j ]
	[ ! -e .j.tmp ]
	[ -e .j.tmp.AbC123 ]
	[ -e .j.tmpx ]
	[ -e .k.tmp ]
	[ -e .jj.tmp ]
	[ -e k ]
	touch .j.tmp .k.tmp
	done_record j
	run jobreg-clear -a
	[ "$status" -eq 0 ]
	[ ! -e .j.tmp ]
	[ ! -e .k.tmp ]
	[ -e .jj.tmp ]
}

@test "a sweep removes the 0.1 leftover temp files of every job it visits, matched or not, only under its lock" {
	done_record j
	done_record old 172800
	cd "$REG"
	touch .j.tmp.AbC123 .old.tmp.XyZ789 .j.tmp.AbC12 .j.tmp.AbC1234 .j.tmp.AbC-23 .jj.tmp.AbC123
	# -n changes nothing
	run jobreg-clear -n -a --older-than 1d
	[ "$status" -eq 0 ]
	[ "$output" = old ]
	[ -e .j.tmp.AbC123 ]
	[ -e .old.tmp.XyZ789 ]
	# j's lock is busy: its leftover stays, the other job's goes
	flock .j.lock sleep 3 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until eval '! flock -n .j.lock true'
	run -75 jobreg-clear -w 0 -a --older-than 1d
	[ -e .j.tmp.AbC123 ]
	[ ! -e .old.tmp.XyZ789 ]
	[ ! -e old ]
	kill_tree "${BG_PIDS[0]}" TERM
	poll_until flock -n .j.lock true
	# j does not match the filter: its record stays, its leftover goes
	run -0 jobreg-clear -a --older-than 1d
	[ -e j ]
	[ ! -e .j.tmp.AbC123 ]
	# only mkstemp's six letters and digits after .JOB.tmp., and only j's
	[ -e .j.tmp.AbC12 ]
	[ -e .j.tmp.AbC1234 ]
	[ -e .j.tmp.AbC-23 ]
	[ -e .jj.tmp.AbC123 ]
}

@test "a sweep unlinks a planted 0.1 temp name that is a symlink or hard link, never the file it names" {
	done_record j
	printf 'precious\n' > "$T/outside"
	ln -s "$T/outside" "$REG/.j.tmp.Sym123"
	ln "$T/outside" "$REG/.j.tmp.Hrd123"
	ln -s "$T/nowhere" "$REG/.j.tmp.Dng123"
	run -0 jobreg-clear -a --stale
	[ -e "$REG/j" ]
	[ ! -L "$REG/.j.tmp.Sym123" ]
	[ ! -e "$REG/.j.tmp.Hrd123" ]
	[ ! -L "$REG/.j.tmp.Dng123" ]
	[ "$(cat "$T/outside")" = precious ]
	[ "$(stat -c %h "$T/outside")" = 1 ]
	[ ! -e "$T/nowhere" ]
}

@test "a sweep whose record is removed while it takes the job lock leaves no lock file behind" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e inject=flock:delay_enter=1:when=1 true 2>/dev/null ||
		skip "this strace cannot delay system calls"
	done_record j
	# the sweep made .j.lock for the record it listed, and is held up in its flock
	# (LeakSanitizer cannot work under ptrace: no leak check in a SANITIZE=1 build)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -o /dev/null -e trace=flock -e inject=flock:delay_enter=3000000:when=1 \
			jobreg-clear -a >"$T/out" 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.j.lock"
	rm "$REG/j"
	wait_bg "${BG_PIDS[0]}"
	[ "$BG_RC" -eq 0 ]
	[ ! -s "$T/out" ]
	[ "$(ls -A "$REG")" = "" ]
}

@test "a sweep leaves the run lock that a process left behind by a DONE run still holds" {
	jobreg-dispatch -q j -- sh -c 'sleep 30 </dev/null >/dev/null 2>&1 3>&- & echo $! >"$1"' sh "$T/pid"
	BG_PIDS+=("$(cat "$T/pid")")
	[ "$(jobreg-get j)" = DONE ]
	run -0 jobreg-clear -a
	[ ! -e "$REG/j" ]
	[ -e "$REG/.j.run" ]
	# it keeps blocking the next run
	run -75 jobreg-dispatch -w 0 j -- true
}

@test "clear waits at most -w for a job lock held by flock(1), then exits 75" {
	done_record j
	flock "$REG/.j.lock" sleep 3 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.j.lock"
	poll_until eval '! flock -n "$REG/.j.lock" true'
	run --separate-stderr jobreg-clear -w 0.2 j
	[ "$status" -eq 75 ]
	one_line
	[[ "$stderr" == "jobreg-clear: j: "* ]]
	[ -e "$REG/j" ]
}

# ---- several jobs, bad ids, usage ----------------------------------------

@test "clear exits with the first failure's status in the order the jobs were given, and still clears the rest" {
	printf 'version=1\nstatus=DONE\n' >"$T/target"
	write_record bad garbage
	ln -s "$T/target" "$REG/link"
	done_record d1
	run --separate-stderr jobreg-clear bad link d1
	[ "$status" -eq 65 ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ ! -e "$REG/d1" ]
	done_record d2
	run jobreg-clear link bad d2
	[ "$status" -eq 77 ]
	[ ! -e "$REG/d2" ]
}

@test "clear reports a refused live run (1) or a corrupt record (65), whichever job comes first" {
	live_record live
	write_record bad garbage
	run jobreg-clear live bad
	[ "$status" -eq 1 ]
	run jobreg-clear bad live
	[ "$status" -eq 65 ]
	write_record p version=1 status=PENDING
	run jobreg-clear --if DONE p bad
	[ "$status" -eq 1 ]
	run jobreg-clear --if DONE bad p
	[ "$status" -eq 65 ]
	[ -e "$REG/live" ]
	[ -e "$REG/bad" ]
	[ -e "$REG/p" ]
}

@test "clear rejects bad job ids with 64 naming them, touching nothing and creating no registry" {
	done_record good
	long=$(printf 'a%.0s' $(seq 129))
	for id in "a/b" ".." "." ".hidden" "a b" "a:b" "é" "$long"; do
		run --separate-stderr jobreg-clear good "$id"
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-clear: "* ]]
		# printable ASCII ids are named as given (others may be escaped)
		[ "$id" = "$long" ] || [ "$id" = "é" ] || [[ "$stderr" == *"$id"* ]]
		[ -e "$REG/good" ]
	done
	for id in "" $'a\nb' $'a\tb' $'a\x01b' "-x"; do
		run --separate-stderr jobreg-clear -- good "$id"
		[ "$status" -eq 64 ]
		one_line
		[ -e "$REG/good" ]
	done
	[ "$(ls -A "$REG")" = "good" ]
	export JOBREG_DIR="$T/none"
	run jobreg-clear ok "a/b"
	[ "$status" -eq 64 ]
	[ ! -e "$T/none" ]
}

@test "clear accepts a 128-byte job id built from every allowed character class" {
	id="Az09._@+-$(printf 'x%.0s' $(seq 119))"
	[ "${#id}" -eq 128 ]
	write_record "$id" version=1 status=DONE
	run jobreg-clear "$id"
	[ "$status" -eq 0 ]
	[ ! -e "$REG/$id" ]
}

@test "clear without a job or -a, or with an unknown option, is a usage error (64, one line)" {
	done_record j
	run --separate-stderr jobreg-clear
	[ "$status" -eq 64 ]
	one_line
	run --separate-stderr jobreg-clear --bogus j
	[ "$status" -eq 64 ]
	one_line
	[[ "$stderr" == "jobreg-clear: "* ]]
	[ -e "$REG/j" ]
}

@test "clear refused for a FIFO, directory or symlink planted as the record leaves no lock file behind" {
	refused_without_lock jobreg-clear JOB
}

@test "clear exits 77 when a directory or a socket sits where the job lock belongs" {
	done_record dir
	done_record sock
	mkdir "$REG/.dir.lock"
	make_socket "$REG/.sock.lock"
	run --separate-stderr timeout 5 jobreg-clear dir sock
	[ "$status" -eq 77 ]
	[ "${stderr_lines[0]}" = "jobreg-clear: dir: not a regular file: $REG/.dir.lock" ]
	[ "${stderr_lines[1]}" = "jobreg-clear: sock: not a regular file: $REG/.sock.lock" ]
	[ -e "$REG/dir" ]
	[ -e "$REG/sock" ]
}

# ---- dry run and verbose -------------------------------------------------

# mixed_registry: one record of each kind a clear decides on, with the
# leftovers and lock files that a real clear would remove.
mixed_registry() {
	local old new
	old=$(now_rfc3339 -172800)
	new=$(now_rfc3339)
	rm -rf "$REG"
	write_record a-old version=1 status=DONE "since=$old" "started=$old" "ended=$old" exit=0
	write_record b-fail version=1 status=DONE "since=$old" "started=$old" "ended=$old" exit=3
	write_record c-new version=1 status=DONE "since=$new" "started=$new" "ended=$new" exit=0
	stale_record d-stale
	live_record e-live
	write_record f-manual version=1 status=RUNNING "since=$old"
	write_record g-corrupt 'not a record'
	write_record h-pend version=1 status=PENDING "since=$old"
	ln -s a-old "$REG/z-link"
	: >"$REG/.a-old.tmp"
	: >"$REG/.a-old.tmp.AbC123"
	: >"$REG/.c-new.lock"
	: >"$REG/.c-new.run"
}

# snapshot FILE: every entry of the registry (dot files included) with its
# type, inode, size, mode, mtime and link target, and every file's bytes.
snapshot() {
	{
		(cd "$REG" && find . -printf '%p %y %i %s %m %T@ %l\n' | LC_ALL=C sort)
		(cd "$REG" && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
	} >"$1"
}

# records: the job records in the registry, one per line.
records() {
	(cd "$REG" && ls | LC_ALL=C sort)
}

# dry_then_real EXPECTED_STATUS EXPECTED_LIST ARGS...: -n prints
# EXPECTED_LIST, exits EXPECTED_STATUS and changes nothing; then the real
# call with -v exits the same, prints the same list, and removes exactly
# those records.
dry_then_real() {
	local want_status=$1 want_list=$2 gone_list
	shift 2
	echo "jobreg-clear $*"
	snapshot "$T/before"
	run --separate-stderr jobreg-clear -n "$@"
	echo "dry run: status $status, output '$output', stderr '$stderr'"
	[ "$status" -eq "$want_status" ]
	[ "$output" = "$want_list" ]
	local dry_stderr=$stderr
	snapshot "$T/after"
	diff "$T/before" "$T/after"
	records >"$T/records.before"
	run --separate-stderr jobreg-clear -v "$@"
	echo "real call: status $status, output '$output', stderr '$stderr'"
	[ "$status" -eq "$want_status" ]
	[ "$output" = "$want_list" ]
	[ "$stderr" = "$dry_stderr" ]
	records >"$T/records.after"
	gone_list=$(LC_ALL=C comm -23 "$T/records.before" "$T/records.after")
	[ "$gone_list" = "$want_list" ]
}

@test "clear -n of an -a sweep prints what would go, changes no file, and exits as the sweep does; -v prints what went" {
	mixed_registry
	dry_then_real 1 "$(printf '%s\n' a-old b-fail c-new d-stale f-manual h-pend)" -a
	mixed_registry
	dry_then_real 77 "$(printf '%s\n' a-old b-fail c-new d-stale e-live f-manual g-corrupt h-pend)" --force -a
	mixed_registry
	dry_then_real 65 d-stale --stale -a
	mixed_registry
	dry_then_real 65 "$(printf '%s\n' a-old b-fail)" --if DONE --older-than 1d -a
	mixed_registry
	dry_then_real 65 "$(printf '%s\n' a-old b-fail f-manual h-pend)" --older-than 1h -a
	mixed_registry
	dry_then_real 65 b-fail --if FAILED -a
	mixed_registry
	dry_then_real 65 "$(printf '%s\n' a-old c-new d-stale)" --if ok,STALE -a
	mixed_registry
	# Filters with --force: a live run goes, a corrupt record is left alone.
	dry_then_real 77 "$(printf '%s\n' d-stale e-live f-manual)" --force --if RUNNING,STALE --older-than 30s -a -q
}

@test "clear -n of named jobs prints what would go, changes no file, and exits as the real call does" {
	mixed_registry
	dry_then_real 1 "$(printf '%s\n' a-old c-new)" a-old e-live c-new
	mixed_registry
	dry_then_real 1 a-old --if DONE h-pend a-old
	mixed_registry
	dry_then_real 0 d-stale --stale d-stale x-none
	mixed_registry
	dry_then_real 1 a-old --if OK --older-than 1d a-old b-fail c-new
	mixed_registry
	dry_then_real 65 "" g-corrupt
	mixed_registry
	dry_then_real 0 g-corrupt --force g-corrupt
	mixed_registry
	dry_then_real 77 "" z-link
	mixed_registry
	dry_then_real 1 "" --older-than 1h c-new
}

@test "clear -n creates no lock file, removes no temp file, and never creates the registry" {
	done_record j
	: >"$REG/.j.tmp"
	run jobreg-clear -n j
	[ "$status" -eq 0 ]
	[ "$output" = j ]
	[ "$(ls -A "$REG" | LC_ALL=C sort | tr '\n' ' ')" = ".j.tmp j " ]
	run jobreg-clear --dry-run -a -d "$T/none"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ ! -e "$T/none" ]
}

@test "clear -n of a live dispatched run refuses as the real call would and leaves its locks" {
	bg_dispatch j
	snapshot "$T/before"
	run --separate-stderr jobreg-clear -n j
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[[ "$stderr" == "jobreg-clear: j: running (pid $BG_PID "* ]]
	run --separate-stderr jobreg-clear --force --dry-run j
	[ "$status" -eq 0 ]
	[ "$output" = j ]
	snapshot "$T/after"
	diff "$T/before" "$T/after"
	run jobreg-get j
	[ "$output" = RUNNING ]
}

@test "clear -n waits for a busy job lock as the real call does, then exits 75" {
	command -v flock >/dev/null || skip "flock(1) not installed"
	done_record j
	: >"$REG/.j.lock"
	flock "$REG/.j.lock" sleep 30 3>&- &
	BG_PIDS+=("$!")
	poll_until sh -c '! flock -n "$0" true' "$REG/.j.lock"
	run --separate-stderr jobreg-clear -n -w 0.2 j
	[ "$status" -eq 75 ]
	[ -z "$output" ]
	[[ "$stderr" == *"lock busy"* ]]
	[ -e "$REG/j" ]
}

@test "clear -v prints nothing for a job that had no record or was left alone" {
	done_record j
	run --separate-stderr jobreg-clear -v nothing j
	[ "$status" -eq 0 ]
	[ "$output" = j ]
	run --separate-stderr jobreg-clear -v j
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# --- lock files whose job has no record (issue 19, A11) ----------------------

@test "a sweep removes the lock files of a job that has no record, as a clear killed halfway leaves them" {
	jobreg-dispatch a true
	jobreg-set --exit 0 b DONE
	rm "$REG/a"   # as if clear -a was killed between the record's unlink and the locks'
	run --separate-stderr jobreg-clear -a --stale
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ ! -e "$REG/.a.lock" ]
	[ ! -e "$REG/.a.run" ]
	# b has a record that does not match: it keeps everything
	[ -e "$REG/b" ]
	[ -e "$REG/.b.lock" ]
}

@test "clear of a job with no record removes its leftover lock files" {
	jobreg-set --exit 0 a DONE
	rm "$REG/a"
	run --separate-stderr jobreg-clear a
	[ "$status" -eq 0 ]
	[ ! -e "$REG/.a.lock" ]
	[ -z "$(ls -A "$REG" | grep -v '^\.-audit')" ]
}

@test "a sweep leaves the lock files of a job whose lock is held, and those of a dry run" {
	jobreg-set --exit 0 a DONE
	rm "$REG/a"
	run jobreg-clear -n -a
	[ "$status" -eq 0 ]
	[ -e "$REG/.a.lock" ]
	flock "$REG/.a.lock" sleep 3 3>&- &
	BG_PIDS+=("$!")
	poll_until eval '! flock -n "$REG/.a.lock" true'
	run --separate-stderr jobreg-clear -a
	[ "$status" -eq 0 ]
	[ -e "$REG/.a.lock" ]
}

@test "a sweep removes a run lock left alone, and the lock files of ids that hold .tmp." {
	mkdir -p "$REG"
	: > "$REG/.b.run"
	: > "$REG/.x.tmp.a.lock"
	: > "$REG/.y.tmp.ab.run"
	jobreg-set --exit 0 keep DONE
	run --separate-stderr jobreg-clear -a --stale
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(ls -A "$REG" | sort | tr '\n' ' ')" = ".-audit .-audit.lock .keep.lock keep " ]
}

@test "on a read-only registry, a clear of a job with no record but lock files says one line, no false claim" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	mkdir "$T/ro"
	mount -t tmpfs -o size=1m tmpfs "$T/ro" 2>/dev/null || skip "cannot mount a tmpfs on $T/ro"
	MOUNTED=$T/ro
	: > "$T/ro/.b.lock"
	: > "$T/ro/.b.run"
	mount -o remount,ro "$T/ro"
	run --separate-stderr jobreg-clear -d "$T/ro" b
	[ "${#stderr_lines[@]}" -le 1 ]
	[[ $stderr != *"the record is removed"* ]]
}

local_teardown() {
	if [ -n "${MOUNTED:-}" ]; then umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" || true; fi
}

@test "every sweep (clear -a with any filter, set -a) removes the places nobody holds below wait_head, also of jobs it leaves alone" {
	local sweep
	for sweep in "jobreg-clear --if FAILED -a" "jobreg-clear --stale -a" "jobreg-set --if FAILED -a DONE"; do
		done_record j
		printf '%s\n' wait_next=4 wait_head=4 >>"$REG/j"
		# a waiter killed between the write that ended its turn and its unlink
		: >"$REG/.j.wait.2"
		: >"$REG/.j.wait.3"
		hold_place j 1
		run $sweep
		[ "$status" -eq 0 ] || [ "$status" -eq 1 ] || flunk "$sweep: $status $output"
		[ ! -e "$REG/.j.wait.2" ] && [ ! -e "$REG/.j.wait.3" ] || flunk "$sweep left $(ls -A "$REG")"
		place_held "$REG/.j.wait.1"
		[ "$(field j status)" = DONE ]
		kill_tree "${BG_PIDS[-1]}" KILL
		rm -f "$REG/.j.wait.1"
	done
}
