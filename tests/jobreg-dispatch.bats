#!/usr/bin/env bats
# jobreg-dispatch: SPEC.md §2 (owner=lock), §3 (transitions), §4, §5 jobreg-dispatch, §6.
bats_require_minimum_version 1.5.0
load lib/helper

# ---- local helpers -------------------------------------------------------

load lib/procs

local_setup() {
	# trapper SIG STARTED MARKER: on SIG write SIG to MARKER and exit 0;
	# otherwise give up after ~10 s with exit 9.
	cat >"$T/trapper" <<'EOF'
#!/bin/sh
trap 'echo "$1" >"$3"; exit 0' "$1"
: >"$2"
i=0
while [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
exit 9
EOF
	chmod +x "$T/trapper"
}

is_rfc3339() {
	[[ "$1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]
}

# keys FILE: the record's keys, space-separated, in file order.
keys() {
	sed 's/=.*//' "$1" | tr '\n' ' '
}

# forwarded SIG: SIG sent to the dispatcher reaches the command, which exits 0.
forwarded() {
	env --default-signal=INT,QUIT jobreg-dispatch j "$T/trapper" "$1" "$T/started" "$T/got" \
		3>&- >"$T/out" 2>&1 &
	local d=$!
	BG_PIDS+=("$d")
	poll_until test -e "$T/started"
	kill "-$1" "$d"
	wait_bg "$d"
	[ "$BG_RC" -eq 0 ]
	[ "$(cat "$T/got")" = "$1" ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 0 ]
}

# ---- running the command -------------------------------------------------

@test "dispatch runs the command, passes its output through and exits 0" {
	run --separate-stderr jobreg-dispatch j sh -c 'echo out; echo err >&2'
	[ "$status" -eq 0 ]
	[ "$output" = "out" ]
	[ "$stderr" = "err" ]
}

@test "dispatch gives the command JOBREG_JOB and an absolute JOBREG_DIR" {
	cd "$T"
	export JOBREG_DIR=rel
	run jobreg-dispatch nightly sh -c 'printf "%s|%s\n" "$JOBREG_JOB" "$JOBREG_DIR"'
	[ "$status" -eq 0 ]
	[ "$output" = "nightly|$T/rel" ] || [ "$output" = "nightly|$(cd "$T/rel" && pwd -P)" ]
	unset JOBREG_DIR
	run jobreg-dispatch -d rel2 other sh -c 'printf "%s|%s\n" "$JOBREG_JOB" "$JOBREG_DIR"'
	[ "$status" -eq 0 ]
	[ "$output" = "other|$T/rel2" ] || [ "$output" = "other|$(cd "$T/rel2" && pwd -P)" ]
	[ -e "$T/rel2/other" ]
}

@test "dispatch creates a missing registry and its parents, and ls lists only the job" {
	export JOBREG_DIR="$T/a/b/reg"
	run jobreg-dispatch j true
	[ "$status" -eq 0 ]
	[ -d "$T/a/b/reg" ]
	[ "$(ls "$T/a/b/reg")" = "j" ]
}

@test "during the run the job is RUNNING with owner=lock, host, the dispatcher's pid and started" {
	run jobreg-dispatch j sh -c 'jobreg-get -l "$JOBREG_JOB" >"$0"; cat "$JOBREG_DIR/$JOBREG_JOB" >"$1"; echo $PPID >"$2"' \
		"$T/get" "$T/rec" "$T/ppid"
	[ "$status" -eq 0 ]
	p=$(cat "$T/ppid")
	since=$(sed -n 's/^since=//p' "$T/rec")
	[ "$(cat "$T/get")" = "$(printf 'j\tRUNNING\t%s\tlock\t%s\t%s\t-\t-' "$since" "$HOST" "$p")" ]
	[ "$(head -n 1 "$T/rec")" = "version=1" ]
	[ "$(sed -n 's/^status=//p' "$T/rec")" = RUNNING ]
	[ "$(sed -n 's/^owner=//p' "$T/rec")" = lock ]
	[ "$(sed -n 's/^host=//p' "$T/rec")" = "$HOST" ]
	[ "$(sed -n 's/^pid=//p' "$T/rec")" = "$p" ]
	is_rfc3339 "$(sed -n 's/^started=//p' "$T/rec")"
	is_rfc3339 "$since"
	! grep -Eq '^(ended|exit|signal)=' "$T/rec"
}

@test "after the run the record is DONE with exit=0 and ended, keeping started, host and pid, dropping the owner" {
	run jobreg-dispatch j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"' "$T/rec"
	[ "$status" -eq 0 ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 0 ]
	is_rfc3339 "$(field j ended)"
	is_rfc3339 "$(field j since)"
	[ "$(field j started)" = "$(sed -n 's/^started=//p' "$T/rec")" ]
	[ "$(field j host)" = "$HOST" ]
	[ "$(field j pid)" = "$(sed -n 's/^pid=//p' "$T/rec")" ]
	[ "$(keys "$REG/j")" = "version status since host pid started ended exit outcome cmd runs last_success last_success_started last_success_run " ]
	run jobreg-get -l j
	[ "$output" = "$(printf 'j\tDONE\t%s\t-\t%s\t%s\t0\t-' "$(field j since)" "$HOST" "$(field j pid)")" ]
}

@test "dispatch exits with the command's status and records it" {
	for n in 3 42 255; do
		run jobreg-dispatch j sh -c "exit $n"
		[ "$status" -eq "$n" ]
		[ "$(field j status)" = DONE ]
		[ "$(field j exit)" = "$n" ]
	done
}

@test "a command killed by a signal gives 128+N and is recorded as signal=TERM" {
	run jobreg-dispatch j sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	[ "$(field j status)" = DONE ]
	[ "$(field j signal)" = TERM ]
	! grep -q '^exit=' "$REG/j"
	run jobreg-get -l j
	[ "$(printf '%s\n' "$output" | cut -f7)" = SIGTERM ]
	run jobreg-dispatch j sh -c 'kill -KILL $$'
	[ "$status" -eq 137 ]
	[ "$(field j signal)" = KILL ]
}

@test "a missing command gives 127 and a non-executable one 126, both recorded as DONE with that exit" {
	run -127 --separate-stderr jobreg-dispatch j "$T/no-such-command"
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "* ]]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 127 ]
	run -127 jobreg-dispatch k no-such-command-jobreg-test
	[ "$(field k exit)" = 127 ]
	printf '#!/bin/sh\necho ran\n' >"$T/noexec"
	chmod 644 "$T/noexec"
	run --separate-stderr jobreg-dispatch n "$T/noexec"
	[ "$status" -eq 126 ]
	[ "$output" = "" ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: n: "* ]]
	[ "$(field n status)" = DONE ]
	[ "$(field n exit)" = 126 ]
}

@test "dispatch -m NOTE records the note" {
	run jobreg-dispatch -m "nightly build #7" j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"' "$T/rec"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/^note=//p' "$T/rec")" = "nightly build #7" ]
	[ "$(field j note)" = "nightly build #7" ]
}

# ---- conflicts -----------------------------------------------------------

@test "a second dispatch while the first runs exits 75 with 'already running', does not run, and counts the skip" {
	bg_dispatch j
	cp "$REG/j" "$T/before"
	since=$(field j since)
	t0=$(date -u +%s)
	run --separate-stderr jobreg-dispatch j touch "$T/second"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: already running (pid $BG_PID on $HOST since $since)" ]
	[ ! -e "$T/second" ]
	# The record is the run's, with the skip counted (SPEC §5a Skips).
	[ "$(field j skipped)" = 1 ]
	[ "$(field j skip_reason)" = running ]
	skipped_at=$(date -u -d "$(field j last_skipped)" +%s)
	(( skipped_at >= t0 && skipped_at <= t0 + 2 ))
	diff "$T/before" <(grep -v -e '^skipped=' -e '^last_skipped=' -e '^skip_reason=' "$REG/j")
	run jobreg-dispatch j true
	[ "$status" -eq 75 ]
	[ "$(field j skipped)" = 2 ]
	[ "$(jobreg-get --history j)" = "" ]
}

@test "dispatch -E 3 changes the 'already running' exit code, and -q silences the message" {
	bg_dispatch j
	run --separate-stderr jobreg-dispatch -E 3 j touch "$T/second"
	[ "$status" -eq 3 ]
	[[ "$stderr" == "jobreg-dispatch: j: already running "* ]]
	run --separate-stderr jobreg-dispatch -q j touch "$T/second"
	[ "$status" -eq 75 ]
	[ "$stderr" = "" ]
	[ "$output" = "" ]
	[ ! -e "$T/second" ]
}

@test "dispatch will not run over an operator's ownerless RUNNING record or a live pid-owned run" {
	t=$(now_rfc3339 -30)
	write_record j version=1 status=RUNNING "since=$t" "started=$t"
	run --separate-stderr jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: already running (since $t)" ]
	live_record k
	run --separate-stderr jobreg-dispatch k touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: k: already running (pid $LIVE_PID on $HOST since $LIVE_SINCE)" ]
	[ ! -e "$T/ran" ]
}

@test "dispatch --once on a job DONE with exit 0 exits 0 with 'already done' without running" {
	write_record j version=1 status=DONE "since=$(now_rfc3339 -10)" exit=0
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: already done" ]
	[ ! -e "$T/ran" ]
	cmp "$T/before" "$REG/j"
	run --separate-stderr jobreg-dispatch --once -q j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ ! -e "$T/ran" ]
}

@test "dispatch --once replays a failed run: its exit status and a message naming --retry-failed, which runs it again" {
	run --separate-stderr jobreg-dispatch --once j sh -c 'exit 3'
	[ "$status" -eq 3 ]
	ended=$(field j ended)
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 3 ]
	[ "$stderr" = "jobreg-dispatch: j: already done: failed (exit 3, ended $ended); --retry-failed runs it again" ]
	[ ! -e "$T/ran" ]
	cmp "$T/before" "$REG/j"
	run --separate-stderr jobreg-dispatch --once -q j touch "$T/ran"
	[ "$status" -eq 3 ]
	[ "$stderr" = "" ]
	jobreg-clear j
	run jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ -e "$T/ran" ]
}

@test "dispatch --once replays a run killed by a signal as 128+N and one ended by its time limit as 124" {
	t=$(now_rfc3339 -10)
	write_record j version=1 status=DONE "since=$t" "started=$t" "ended=$t" signal=TERM
	run --separate-stderr jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 143 ]
	[ "$stderr" = "jobreg-dispatch: j: already done: failed (signal TERM, ended $t); --retry-failed runs it again" ]
	write_record k version=1 status=DONE "since=$t" "started=$t" timeout=5 "ended=$t" signal=KILL timed_out=1
	run --separate-stderr jobreg-dispatch --once k touch "$T/ran"
	[ "$status" -eq 124 ]
	[ "$stderr" = "jobreg-dispatch: k: already done: failed (timed out, ended $t); --retry-failed runs it again" ]
	write_record m version=1 status=DONE "since=$t" "ended=$t" signal=RTMIN+3
	run --separate-stderr jobreg-dispatch --once m touch "$T/ran"
	[ "$status" -eq $((128 + $(kill -l RTMIN+3))) ]
	[ ! -e "$T/ran" ]
}

@test "dispatch --once treats a DONE record with no exit status (set by hand) as done" {
	write_record j version=1 status=DONE "since=$(now_rfc3339 -10)"
	run --separate-stderr jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: already done" ]
	[ ! -e "$T/ran" ]
}

@test "dispatch --once replays a cancelled run that exited 0 as a failure, also one whose record names no canceller" {
	write_record j version=1 status=DONE "since=$(now_rfc3339 -10)" exit=0 cancelled=1
	run --separate-stderr jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "jobreg-dispatch: j: already done: cancelled ("* ]]
	[ ! -e "$T/ran" ]
}

@test "dispatch --once --retry-failed runs a failed job again but not a good one" {
	write_record j version=1 status=DONE "since=$(now_rfc3339 -10)" exit=3 runs=1 failures=1
	run jobreg-dispatch --once --retry-failed j sh -c 'echo again >>"$0"' "$T/ran"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/ran")" = again ]
	[ "$(field j exit)" = 0 ]
	[ "$(field j runs)" = 2 ]
	run --separate-stderr jobreg-dispatch --once --retry-failed j sh -c 'echo again >>"$0"' "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: already done" ]
	[ "$(cat "$T/ran")" = again ]
}

@test "dispatch --retry-failed without --once is a usage error" {
	run --separate-stderr jobreg-dispatch --retry-failed j touch "$T/ran"
	[ "$status" -eq 64 ]
	one_line
	[ ! -e "$T/ran" ]
	[ ! -e "$REG" ]
}

@test "dispatch --once waits for the run in progress and replays its result" {
	bg_dispatch j
	jobreg-dispatch --once j touch "$T/second" 3>&- >"$T/w.out" 2>"$T/w.err" &
	w=$!
	BG_PIDS+=("$w")
	sleep 0.5
	! gone "$w"                 # still waiting, not refused
	[ "$(jobreg-get j)" = RUNNING ]
	: >"$T/release"
	wait_bg "$BG_PID"
	wait_bg "$w"
	[ "$BG_RC" -eq 0 ]
	[ "$(cat "$T/w.err")" = "jobreg-dispatch: j: already done" ]
	[ ! -e "$T/second" ]
	[ "$(field j pid)" = "$BG_PID" ]
}

@test "dispatch --once --clear is a usage error (64): --clear removes the result --once replays" {
	run --separate-stderr jobreg-dispatch -q --once --clear job -- sh -c 'echo run >> "$1/L"' sh "$T"
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: --once and --clear exclude each other. Try 'jobreg-dispatch --help'." ]
	[ ! -e "$T/L" ]
	[ ! -e "$REG" ]
	# three callers at once: none runs the job
	for i in 1 2 3; do
		jobreg-dispatch -q --once --clear job -- sh -c 'echo run >> "$1/L"; sleep 1' sh "$T" 2>/dev/null &
	done
	wait
	[ ! -e "$T/L" ]
}

@test "dispatch --once --retry-failed that waited for a run replays its failure rather than run again" {
	jobreg-dispatch j sh -c ': >"$0"; i=0; while [ ! -e "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 3' \
		"$T/started.j" "$T/release" 3>&- >/dev/null 2>&1 &
	first=$!
	BG_PIDS+=("$first")
	poll_until test -e "$T/started.j"
	jobreg-dispatch --once --retry-failed j touch "$T/second" 3>&- >/dev/null 2>"$T/w.err" &
	w=$!
	BG_PIDS+=("$w")
	sleep 0.5
	! gone "$w"
	: >"$T/release"
	wait_bg "$first"
	[ "$BG_RC" -eq 3 ]
	wait_bg "$w"
	[ "$BG_RC" -eq 3 ]
	[[ "$(cat "$T/w.err")" == "jobreg-dispatch: j: already done: failed (exit 3, ended "* ]]
	[ ! -e "$T/second" ]
	[ "$(field j runs)" = 1 ]
}

@test "dispatch --once --wait 0.5 on a long run gives up with 75 and 'still running after --wait 0.5'" {
	bg_dispatch j
	run --separate-stderr jobreg-dispatch --once --wait 0.5 j touch "$T/second"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: still running after --wait 0.5" ]
	[ ! -e "$T/second" ]
}

@test "dispatch --once runs a job with no record or a PENDING record; without --once a DONE job runs again" {
	run jobreg-dispatch --once j sh -c 'exit 4'
	[ "$status" -eq 4 ]
	[ "$(field j exit)" = 4 ]
	write_record k version=1 status=PENDING "since=$(now_rfc3339)"
	run jobreg-dispatch --once k touch "$T/ran"
	[ "$status" -eq 0 ]
	[ -e "$T/ran" ]
	[ "$(field k status)" = DONE ]
	run jobreg-dispatch j sh -c 'exit 0'
	[ "$status" -eq 0 ]
	[ "$(field j exit)" = 0 ]
}

# ---- --clear -------------------------------------------------------------

@test "dispatch --clear removes the record after the run whatever the exit status or signal" {
	run jobreg-dispatch --clear j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"' "$T/rec"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/^status=//p' "$T/rec")" = RUNNING ]
	[ ! -e "$REG/j" ]
	run jobreg-get j
	[ "$output" = PENDING ]
	write_record j version=1 status=DONE exit=0
	run jobreg-dispatch --clear j sh -c 'exit 5'
	[ "$status" -eq 5 ]
	[ ! -e "$REG/j" ]
	run jobreg-dispatch --clear j sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	[ ! -e "$REG/j" ]
	run -127 jobreg-dispatch --clear j "$T/no-such-command"
	[ ! -e "$REG/j" ]
}

# ---- --wait --------------------------------------------------------------

@test "dispatch --wait waits for the running run to end, then runs" {
	bg_dispatch j
	jobreg-dispatch --wait inf j sh -c 'echo second; : >"$0"' "$T/second" 3>&- >"$T/w.out" 2>"$T/w.err" &
	w=$!
	BG_PIDS+=("$w")
	sleep 0.3
	[ ! -e "$T/second" ]
	[ "$(jobreg-get j)" = RUNNING ]
	: >"$T/release"
	wait_bg "$BG_PID"
	wait_bg "$w"
	[ "$BG_RC" -eq 0 ]
	[ "$(cat "$T/w.out")" = second ]
	[ "$(field j status)" = DONE ]
	[ "$(field j pid)" = "$w" ]
}

@test "dispatch --wait=0.5 on a long run times out with 75, or the -E code" {
	bg_dispatch j
	run --separate-stderr jobreg-dispatch --wait=0.5 j touch "$T/second"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: still running after --wait 0.5" ]
	[ ! -e "$T/second" ]
	run jobreg-dispatch --wait=0.5 -E 9 j touch "$T/second"
	[ "$status" -eq 9 ]
	[ ! -e "$T/second" ]
	[ "$(jobreg-get j)" = RUNNING ]
	[ "$(field j pid)" = "$BG_PID" ]
}

@test "dispatch --wait on a pid-owned run runs once the owner dies" {
	live_record j
	jobreg-dispatch --wait=5 j sh -c 'echo ran' 3>&- >"$T/w.out" 2>"$T/w.err" &
	w=$!
	BG_PIDS+=("$w")
	sleep 0.3
	[ "$(cat "$T/w.out")" = "" ]
	kill "$LIVE_PID"
	wait "$LIVE_PID" || true
	wait_bg "$w"
	[ "$BG_RC" -eq 0 ]
	[ "$(cat "$T/w.out")" = ran ]
	[ "$(field j status)" = DONE ]
}

# ---- stale takeover ------------------------------------------------------

@test "dispatch takes over a STALE pid-owned record with a message, and runs" {
	stale_record j
	run --separate-stderr jobreg-dispatch j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"' "$T/rec"
	[ "$status" -eq 0 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "*"$STALE_PID"* ]]
	[ "$(sed -n 's/^owner=//p' "$T/rec")" = lock ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 0 ]
	[ "$(field j pid)" != "$STALE_PID" ]
}

@test "dispatch takes over a lock-owned RUNNING record whose run lock nobody holds (-q: silently)" {
	p=$(dead_pid)
	t=$(now_rfc3339 -30)
	write_record j version=1 status=RUNNING "since=$t" owner=lock "host=$HOST" "pid=$p" "started=$t"
	run --separate-stderr jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 0 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "* ]]
	[ -e "$T/ran" ]
	[ "$(field j status)" = DONE ]
	[ "$(field j pid)" != "$p" ]
	write_record k version=1 status=RUNNING "since=$t" owner=lock "host=$HOST" "pid=$p" "started=$t"
	run --separate-stderr jobreg-dispatch -q --once k touch "$T/ran.k"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ -e "$T/ran.k" ]
}

# ---- option parsing ------------------------------------------------------

@test "dispatch passes options after '--' to the command" {
	run --separate-stderr jobreg-dispatch j -- sh -c 'echo -l'
	[ "$status" -eq 0 ]
	[ "$output" = "-l" ]
	run jobreg-dispatch j -- echo -- x
	[ "$output" = "-- x" ]
	run jobreg-dispatch -- j echo hi
	[ "$output" = "hi" ]
}

@test "dispatch stops option parsing at the job, so 'dispatch job ls -l' gives -l to ls" {
	mkdir "$T/dir"
	: >"$T/dir/file"
	want=$(ls -l "$T/dir")
	run --separate-stderr jobreg-dispatch j ls -l "$T/dir"
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
	run jobreg-dispatch j sh -c 'echo "$*"' sh -q --once -E 3 --clear
	[ "$status" -eq 0 ]
	[ "$output" = "-q --once -E 3 --clear" ]
	[ "$(field j status)" = DONE ]
}

@test "dispatch without a COMMAND is a usage error (64) and creates nothing" {
	for args in "j" "j --" ""; do
		# shellcheck disable=SC2086
		run --separate-stderr jobreg-dispatch $args
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-dispatch: "* ]]
	done
	[ ! -e "$REG" ]
}

@test "dispatch rejects unknown options, bad option values and bad job ids with 64, running and creating nothing" {
	for opt in --bogus "-E 256" "-E -1" "-E x" "--wait=abc" "--wait=-1" "-w x" "-w -1"; do
		# shellcheck disable=SC2086
		run --separate-stderr jobreg-dispatch $opt j touch "$T/ran"
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-dispatch: "* ]]
	done
	run --separate-stderr jobreg-dispatch -m $'two\nlines' j touch "$T/ran"
	[ "$status" -eq 64 ]
	for id in "a/b" ".." ".x" "a b" "é" "$(printf 'a%.0s' $(seq 129))"; do
		run --separate-stderr jobreg-dispatch "$id" touch "$T/ran"
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-dispatch: "* ]]
	done
	run jobreg-dispatch -- "" touch "$T/ran"
	[ "$status" -eq 64 ]
	[ ! -e "$T/ran" ]
	[ ! -e "$REG" ]
}

# ---- signals -------------------------------------------------------------

@test "SIGTERM sent to the dispatcher reaches the command" {
	forwarded TERM
}

@test "SIGINT sent to the dispatcher reaches the command" {
	forwarded INT
}

@test "SIGHUP sent to the dispatcher reaches the command" {
	forwarded HUP
}

@test "SIGUSR1 sent to the dispatcher reaches the command" {
	forwarded USR1
}

@test "SIGQUIT and SIGUSR2 sent to the dispatcher reach the command" {
	forwarded QUIT
	rm -f "$T/started" "$T/got"
	forwarded USR2
}

@test "a command killed by a forwarded SIGTERM gives dispatch exit 143 and signal=TERM" {
	env --default-signal=INT,QUIT jobreg-dispatch j sh -c ': >"$0"; exec sleep 10' "$T/started" \
		3>&- >"$T/out" 2>&1 &
	d=$!
	BG_PIDS+=("$d")
	poll_until test -e "$T/started"
	kill -TERM "$d"
	wait_bg "$d"
	[ "$BG_RC" -eq 143 ]
	[ "$(field j status)" = DONE ]
	[ "$(field j signal)" = TERM ]
	! grep -q '^exit=' "$REG/j"
}

# ---- locks and descriptors -----------------------------------------------

@test "the command holds the run lock while it runs and the job lock is free" {
	run jobreg-dispatch j sh -c '
		if flock -n "$JOBREG_DIR/.$JOBREG_JOB.run" true; then echo free; else echo held; fi
		if flock -n "$JOBREG_DIR/.$JOBREG_JOB.lock" true; then echo free; else echo held; fi'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'held\nfree')" ]
	run flock -n "$REG/.j.run" true
	[ "$status" -eq 0 ]
}

@test "the command inherits only the test's descriptors plus the run lock" {
	# (the glob's own directory descriptor is closed again by the time it is tested)
	list='exec >"$0"; for f in /proc/$$/fd/*; do if [ -e "$f" ]; then printf "%s " "${f##*/}"; readlink "$f"; fi; done'
	sh -c "$list" "$T/fds" </dev/null 2>/dev/null
	mv "$T/fds" "$T/fds.base"
	jobreg-dispatch j sh -c "$list" "$T/fds" </dev/null 2>/dev/null
	regabs=$(cd "$REG" && pwd -P)
	extra=$(comm -13 <(sort "$T/fds.base") <(sort "$T/fds"))
	missing=$(comm -23 <(sort "$T/fds.base") <(sort "$T/fds"))
	[ "$missing" = "" ]
	[[ "$extra" =~ ^[0-9]+\ "$regabs/.j.run"$ ]]
}

@test "no descriptor of the command points at the job lock, the record or the registry directory" {
	jobreg-dispatch j sh -c 'for f in /proc/$$/fd/*; do readlink "$f"; done >"$0"' "$T/links"
	regabs=$(cd "$REG" && pwd -P)
	[ "$(grep -c -x -F "$regabs/.j.run" "$T/links")" -eq 1 ]
	! grep -q -x -F -e "$regabs" -e "$regabs/.j.lock" -e "$regabs/j" "$T/links"
	! grep -q -F "$regabs/.j.tmp" "$T/links"
}

@test "a job lock or run lock held with flock(1) makes dispatch -w 0.2 exit 75, even with -E" {
	mkdir -p "$REG"
	flock "$REG/.j.lock" sleep 3 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.j.lock"
	poll_until eval '! flock -n "$REG/.j.lock" true'
	run --separate-stderr jobreg-dispatch -w 0.2 j touch "$T/ran"
	[ "$status" -eq 75 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "* ]]
	run jobreg-dispatch -w 0.2 -E 3 j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ ! -e "$T/ran" ]
	[ ! -e "$REG/j" ]
	flock "$REG/.k.run" sleep 3 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.k.run"
	poll_until eval '! flock -n "$REG/.k.run" true'
	run --separate-stderr jobreg-dispatch -w 0.2 k touch "$T/ran"
	[ "$status" -eq 75 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: k: "* ]]
	[ ! -e "$T/ran" ]
}

@test "dispatch refuses a symlinked record or run lock with 77 and runs nothing" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\n' >"$T/target"
	cp "$T/target" "$T/before"
	ln -s "$T/target" "$REG/j"
	run jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 77 ]
	cmp "$T/before" "$T/target"
	ln -s "$T/victim" "$REG/.k.run"
	run jobreg-dispatch k touch "$T/ran"
	[ "$status" -eq 77 ]
	[ ! -e "$T/victim" ]
	[ ! -e "$T/ran" ]
}

# ---- the record changing during the run ----------------------------------

@test "a record reset to PENDING during the run is left alone, with a message even under -q" {
	run --separate-stderr jobreg-dispatch -q j sh -c 'jobreg-set "$JOBREG_JOB" PENDING; exit 4'
	[ "$status" -eq 4 ]
	[ "$(field j status)" = PENDING ]
	! grep -Eq '^(exit|ended)=' "$REG/j"
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "* ]]
}

@test "a record reset (even under --clear) or taken over by an operator during the run is left alone" {
	run --separate-stderr jobreg-dispatch --clear j sh -c 'jobreg-set "$JOBREG_JOB" PENDING'
	[ "$status" -eq 0 ]
	[ "$(field j status)" = PENDING ]
	one_line
	run --separate-stderr jobreg-dispatch k sh -c 'jobreg-set "$JOBREG_JOB" RUNNING'
	[ "$status" -eq 0 ]
	[ "$(field k status)" = RUNNING ]
	! grep -q '^owner=' "$REG/k"
	one_line
}

@test "a record cleared during the run is not brought back" {
	run --separate-stderr jobreg-dispatch j sh -c 'jobreg-clear --force "$JOBREG_JOB"'
	[ "$status" -eq 0 ]
	[ ! -e "$REG/j" ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "* ]]
}

@test "dispatch on a corrupt record exits 65 naming it, and does not run the command" {
	write_record j garbage
	cp "$REG/j" "$T/before"
	run --separate-stderr jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 65 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: j: "*"$REG/j"* ]]
	[ ! -e "$T/ran" ]
	cmp "$T/before" "$REG/j"
}

@test "a dispatcher killed with kill -9 leaves RUNNING until its command ends, then STALE" {
	bg_dispatch j
	kill -KILL "$BG_PID"
	wait_bg "$BG_PID"
	[ "$(jobreg-get j)" = RUNNING ]
	: >"$T/release"
	poll_until eval '[ "$(jobreg-get j)" = STALE ]'
	[ "$(field j status)" = RUNNING ]
}

@test "dispatch exits 73 and runs nothing when the registry path is a dangling symlink or too long" {
	ln -s "$T/nowhere" "$T/dangling"
	run --separate-stderr jobreg-dispatch -d "$T/dangling" j touch "$T/ran"
	[ "$status" -eq 73 ]
	[ "$stderr" = "jobreg-dispatch: cannot create registry $T/dangling: it is a symbolic link to a missing directory" ]
	local long
	long=$T/$(printf 'x%.0s' {1..300})/reg
	run --separate-stderr jobreg-dispatch -d "$long" j touch "$T/ran"
	[ "$status" -eq 73 ]
	[ "$stderr" = "jobreg-dispatch: cannot create registry $long: File name too long" ]
	[ ! -e "$T/ran" ]
	[ ! -e "$T/nowhere" ]
}

@test "dispatch exits 77 and runs nothing when a directory sits where the run lock belongs" {
	mkdir -p "$REG/.j.run"
	run --separate-stderr timeout 5 jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 77 ]
	[ "$stderr" = "jobreg-dispatch: j: not a regular file: $REG/.j.run" ]
	[ ! -e "$T/ran" ]
	[ ! -e "$REG/j" ]
}

# ---- misplaced options and option values ---------------------------------

# nothing_written: the registry was not even created, so no record and no lock files.
nothing_written() {
	[ ! -e "$REG" ]
}

@test "an option after JOB is a usage error (64) that runs and writes nothing" {
	for opt in --once -q --wait -E --clear -x -; do
		run --separate-stderr jobreg-dispatch j "$opt" -- touch "$T/ran"
		[ "$status" -eq 64 ]
		one_line
		[[ "$stderr" == "jobreg-dispatch: misplaced option '$opt': options come before the job id"* ]]
	done
	run --separate-stderr jobreg-dispatch j --once touch "$T/ran"
	[ "$status" -eq 64 ]
	[ ! -e "$T/ran" ]
	nothing_written
	# after '--' the command's words are its own
	run jobreg-dispatch j -- sh -c 'echo "$0"' --once
	[ "$status" -eq 0 ]
	[ "$output" = --once ]
}

@test "dispatch --wait takes a required duration: '--wait 60 nightly -- cmd' waits for nightly" {
	run jobreg-dispatch --wait 60 nightly -- sh -c 'echo "$JOBREG_JOB"'
	[ "$status" -eq 0 ]
	[ "$output" = nightly ]
	[ "$(ls "$REG")" = nightly ]
	run jobreg-dispatch --wait inf other -- true
	[ "$status" -eq 0 ]
	run jobreg-dispatch --wait=1m other -- true
	[ "$status" -eq 0 ]
	[ "$(ls "$REG" | tr '\n' ' ')" = "nightly other " ]
	# a bare --wait takes the job id for its duration
	run --separate-stderr jobreg-dispatch --wait j touch "$T/ran"
	[ "$status" -eq 64 ]
	one_line
	[[ "$stderr" == "jobreg-dispatch: bad wait 'j'"* ]]
	run --separate-stderr jobreg-dispatch j --wait 5 touch "$T/ran"
	[ "$status" -eq 64 ]
	[ ! -e "$T/ran" ]
}

@test "every value option takes its value as the next word or after '='" {
	run jobreg-dispatch -E 3 --conflict-exit-code=4 --note=n1 -w 1 --lock-wait=2 --wait=1 j true
	[ "$status" -eq 0 ]
	[ "$(field j note)" = n1 ]
	run jobreg-dispatch --note n2 --conflict-exit-code 5 --lock-wait 2 --wait 1 j true
	[ "$status" -eq 0 ]
	[ "$(field j note)" = n2 ]
}

# ---- the owner and the run's number --------------------------------------

@test "a dispatched run's record names the run lock's inode and the dispatcher's pid, start, boot and namespaces" {
	run jobreg-dispatch j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"; echo $PPID >"$1"; pid_start=$(sed "s/.*) //" /proc/$PPID/stat | cut -d" " -f20); echo "$pid_start" >"$2"' \
		"$T/rec" "$T/ppid" "$T/start"
	[ "$status" -eq 0 ]
	rec() { sed -n "s/^$1=//p" "$T/rec"; }
	[ "$(rec owner)" = lock ]
	[ "$(rec pid)" = "$(cat "$T/ppid")" ]
	[ "$(rec pid_start)" = "$(cat "$T/start")" ]
	[ "$(rec boot_id)" = "$BOOT_ID" ]
	[ "$(rec pid_ns)" = "$(stat -L -c %i /proc/self/ns/pid)" ]
	if [ -e /proc/self/ns/time ]; then
		[ "$(rec time_ns)" = "$(stat -L -c %i /proc/self/ns/time)" ]
	fi
	[ "$(rec run_lock)" = "$(stat -c %i "$REG/.j.run")" ]
	[ "$(keys "$T/rec")" = "version status since owner host pid pid_start boot_id pid_ns $([ -e /proc/self/ns/time ] && echo 'time_ns ')run_lock started cmd runs " ]
	# DONE drops the owner's fields but keeps who ran it
	[ "$(keys "$REG/j")" = "version status since host pid started ended exit outcome cmd runs last_success last_success_started last_success_run " ]
}

@test "JOBREG_RUN is the run's number: it grows with every run, and restarts once the record is cleared" {
	for n in 1 2 3; do
		run jobreg-dispatch j sh -c 'echo "$JOBREG_RUN"'
		[ "$status" -eq 0 ]
		[ "$output" = "$n" ]
		[ "$(field j runs)" = "$n" ]
	done
	run jobreg-dispatch j sh -c 'echo "$JOBREG_RUN"; exit 2'
	[ "$output" = 4 ]
	jobreg-clear j
	run jobreg-dispatch j sh -c 'echo "$JOBREG_RUN"'
	[ "$output" = 1 ]
}

# ---- the run lock: shared holders and leftovers --------------------------

# cpu_seconds FILE: user+system seconds /usr/bin/time -f '%U %S' wrote to FILE.
cpu_seconds() {
	tail -n 1 "$1" | awk '{ print $1 + $2 }'
}

# bats test_tags=serial
@test "a shared flock on the run lock makes dispatch -w 0.5 wait without spinning, exit 75 in time and name the holder" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time (GNU time) is not installed"
	mkdir -p "$REG"
	flock -s "$REG/.backup.run" sleep 6 3>&- >/dev/null 2>&1 &
	holder=$!
	BG_PIDS+=("$holder")
	poll_until eval '! flock -n -x "$REG/.backup.run" true'
	start=$EPOCHREALTIME
	st=0
	/usr/bin/time -o "$T/time" -f '%U %S' jobreg-dispatch -w 0.5 backup -- touch "$T/ran" 2>"$T/err" || st=$?
	took=$(elapsed "$start")
	cpu=$(cpu_seconds "$T/time")
	echo "exit $st, elapsed $took ms, cpu $cpu s: $(cat "$T/err")"
	[ "$st" -eq 75 ]
	[ "$took" -ge 450 ] && [ "$took" -lt 2500 ]
	# (a wait that spins would take most of the 0.5 s; a sanitized build
	# takes up to 0.1 s to start and end)
	[ "$(echo "$cpu < 0.25" | bc)" -eq 1 ]
	[ ! -e "$T/ran" ]
	[ "$(wc -l <"$T/err")" -eq 1 ]
	[[ "$(cat "$T/err")" =~ ^"jobreg-dispatch: backup: lock busy: $REG/.backup.run held by "pids?" "(.*)$ ]]
	[[ ", ${BASH_REMATCH[1]}, " == *", $holder, "* ]]
}

@test "a process the command left behind holding the run lock is named at the end of the run and by the next dispatch" {
	run --separate-stderr jobreg-dispatch j sh -c 'sleep 90 3>&- </dev/null >/dev/null 2>&1 & echo $! >"$0"; exit 3' "$T/left"
	left=$(cat "$T/left")
	BG_PIDS+=("$left")
	[ "$status" -eq 3 ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 3 ]
	[ "$stderr" = "jobreg-dispatch: j: the run lock is still held by pid $left (a process the command left behind); the next run waits for it" ]
	run --separate-stderr jobreg-dispatch -w 0.3 j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: lock busy: $REG/.j.run held by pid $left (left behind by an earlier run)" ]
	[ ! -e "$T/ran" ]
	kill "$left"
	poll_until gone "$left"
	run --separate-stderr jobreg-dispatch -w 5 j true
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
}

@test "someone else's flock on the run lock of a DONE job is named, not called a leftover of its run" {
	run jobreg-dispatch j true
	[ "$status" -eq 0 ]
	flock -s "$REG/.j.run" sleep 6 3>&- >/dev/null 2>&1 &
	holder=$!
	BG_PIDS+=("$holder")
	poll_until eval '! flock -n -x "$REG/.j.run" true'
	run --separate-stderr jobreg-dispatch -w 0.3 j touch "$T/ran"
	[ "$status" -eq 75 ]
	re='^jobreg-dispatch: j: lock busy: .* held by pids? [0-9, ]+$'
	[[ "$stderr" =~ $re ]]
	[[ "$stderr" == "jobreg-dispatch: j: lock busy: $REG/.j.run held by "* ]]
	[[ "$stderr" == *"$holder"* ]]
	[ ! -e "$T/ran" ]
}

@test "a command that leaves nothing behind gets no message about the run lock" {
	run --separate-stderr jobreg-dispatch j sh -c 'sleep 0.1 & wait'
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
}

# ---- the end of the run cannot be recorded -------------------------------

# done_fault CMD...: dispatch CMD with ENOSPC injected into the fsync of the DONE
# record's temp file: the first fsync after the second temp file's creation, found
# on a plain trace of the same run.  Exit status in st, stderr in $T/err.
done_fault() {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null true >/dev/null 2>&1 || skip "strace cannot trace here (ptrace not permitted)"
	# LeakSanitizer cannot work under ptrace (SANITIZE=1 builds)
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	strace -o "$T/trace" -e trace=fsync,openat jobreg-dispatch j "$@" 2>/dev/null || true
	when=$(awk '/^openat\(.*\.j\.tmp/ { tmps++ } /^fsync\(/ { n++; if (tmps == 2) { print n; exit } }' "$T/trace")
	[ -n "$when" ]
	jobreg-clear -q --force j
	st=0
	strace -o /dev/null -e trace=fsync -e inject="fsync:error=ENOSPC:when=$when" \
		jobreg-dispatch j "$@" 2>"$T/err" || st=$?
}

@test "when DONE cannot be written, dispatch says how the command ended and exits with its failed status" {
	done_fault sh -c 'exit 3'
	[ "$st" -eq 3 ]
	[ "$(wc -l <"$T/err")" -eq 1 ]
	[[ "$(cat "$T/err")" == "jobreg-dispatch: j: cannot record DONE (exit 3): fsync $REG/.j.tmp"*": No space left on device" ]]
	[ "$(field j status)" = RUNNING ]
	[ "$(jobreg-get j)" = STALE ]
	done_fault sh -c 'kill -TERM $$'
	[ "$st" -eq 143 ]
	[[ "$(cat "$T/err")" == "jobreg-dispatch: j: cannot record DONE (signal TERM): fsync "*": No space left on device" ]]
}

@test "when DONE cannot be written after a good run, dispatch exits with the error's status" {
	done_fault true
	[ "$st" -eq 74 ]
	[[ "$(cat "$T/err")" == "jobreg-dispatch: j: cannot record DONE (exit 0): fsync "*": No space left on device" ]]
}

@test "a log emptied to make room for DONE: when DONE is then written, no error is said about the first try" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null true >/dev/null 2>&1 || skip "strace cannot trace here (ptrace not permitted)"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	strace -o "$T/trace" -e trace=fsync,openat jobreg-dispatch --log j echo out >/dev/null 2>&1
	when=$(awk '/^openat\(.*\.j\.tmp/ { tmps++ } /^fsync\(/ { n++; if (tmps == 2) { print n; exit } }' "$T/trace")
	[ -n "$when" ]
	jobreg-clear -q --force j
	# the first try of DONE fails (ENOSPC), the one after emptying the log does not
	run --separate-stderr strace -o /dev/null -e trace=fsync -e inject="fsync:error=ENOSPC:when=$when" \
		jobreg-dispatch --log j echo out
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: emptied the run's log to make room for its record" ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 0 ]
	# both tries fail: the second one's error is said, once
	jobreg-clear -q --force j
	run --separate-stderr strace -o /dev/null -e trace=fsync -e inject="fsync:error=ENOSPC:when=$when+" \
		jobreg-dispatch --log j echo out
	[ "$status" -eq 74 ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "jobreg-dispatch: j: emptied the run's log to make room for its record" ]
	[[ ${stderr_lines[1]} == "jobreg-dispatch: j: cannot record DONE (exit 0): fsync "*": No space left on device" ]]
}

# ---- how a failed run ended, in dispatch's own words (cron mails output) ----

@test "-q does not silence a time limit: one line says the run timed out, and with which signals" {
	run --separate-stderr jobreg-dispatch -q --timeout 0.5 j sleep 30
	[ "$status" -eq 124 ]
	[ "$stderr" = "jobreg-dispatch: j: run 1 timed out after 0.5s (TERM)" ]
	run --separate-stderr jobreg-dispatch -q --timeout 1 --kill-after 0.3 j \
		env --ignore-signal=TERM sleep 30
	[ "$status" -eq 124 ]
	[ "$stderr" = "jobreg-dispatch: j: run 2 timed out after 1s (TERM, then KILL)" ]
	# a run that ends within its limit says nothing
	run --separate-stderr jobreg-dispatch -q --timeout 5 j sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[ -z "$stderr" ]
}

@test "--chronic: a failed run's report ends with how it ended, even when the command printed nothing, and with -q" {
	run --separate-stderr jobreg-dispatch -q --chronic j false
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "jobreg-dispatch: j: run 1 failed: exit 1" ]
	run --separate-stderr jobreg-dispatch -q --chronic j sh -c 'echo said; kill -KILL $$'
	[ "$status" -eq 137 ]
	[ "$stderr" = $'said\njobreg-dispatch: j: run 2 killed by SIGKILL' ]
	# a time limit: said once, at the end of the report
	run --separate-stderr jobreg-dispatch -q --chronic --timeout 0.5 j sh -c 'echo said; exec sleep 30'
	[ "$status" -eq 124 ]
	[ "$stderr" = $'said\njobreg-dispatch: j: run 3 timed out after 0.5s (TERM)' ]
	# a --once replay of it prints the same report
	run --separate-stderr jobreg-dispatch -q --once --chronic j true
	[ "$status" -eq 124 ]
	[ "$stderr" = $'said\njobreg-dispatch: j: run 3 timed out after 0.5s (TERM)' ]
	# with --clear too, and after the retries ran out: the last attempt's
	run --separate-stderr jobreg-dispatch -q --chronic --clear --retries 1 --retry-delay 0 j sh -c 'exit 4'
	[ "$status" -eq 4 ]
	[ "$stderr" = "jobreg-dispatch: j: run 5 failed: exit 4, attempt 2 of 2" ]
	# an OK run prints nothing, even after an attempt that the limit ended
	run --separate-stderr jobreg-dispatch -q --chronic --timeout 0.5 --retries 1 --retry-delay 0 j \
		sh -c '[ "$JOBREG_ATTEMPT" = 2 ] || exec sleep 30'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "a STALE lock-owned record whose dead dispatcher had our pid is taken over as a new run: JOBREG_RUN and started move on" {
	t=$(now_rfc3339 -120)
	mkdir -p "$REG"
	# The dispatcher execs in place of this shell, so it has the pid the
	# record names (as in a container, where every dispatcher may be pid 1).
	run --separate-stderr sh -c 'printf "%s\n" version=1 status=RUNNING "since=$1" owner=lock "host=$2" "pid=$$" pid_start=1 "started=$1" runs=7 >"$JOBREG_DIR/j"; exec jobreg-dispatch j sh -c "echo \$JOBREG_RUN"' \
		sh "$t" "$HOST"
	echo "exit $status: $output; $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = 8 ]
	[ "$(field j runs)" = 8 ]
	[ "$(field j started)" != "$t" ]
}

@test "dispatch over a planted .JOB.tmp hard link leaves the linked file outside the registry untouched" {
	mkdir -p "$REG"
	printf 'precious\n' > "$BATS_TEST_TMPDIR/outside"
	ln "$BATS_TEST_TMPDIR/outside" "$REG/.job.tmp"
	run --separate-stderr jobreg-dispatch job -- true
	[ "$status" -eq 0 ]
	[ "$(field job status)" = DONE ]
	[ "$(cat "$BATS_TEST_TMPDIR/outside")" = precious ]
	[ "$(stat -c %h "$BATS_TEST_TMPDIR/outside")" -eq 1 ]
	[ ! -e "$REG/.job.tmp" ]
}

@test "dispatch --wait gives every busy spell of the run lock its -w, also after a wait" {
	mkdir -p "$REG"
	# the run lock busy for 1 s, then a run that ends after 4 s holding it
	# busy again for 1 s as it records DONE
	flock "$REG/.j.run" -c "sleep 1; jobreg-set -d '$REG' j RUNNING" 3>&- &
	BG_PIDS+=("$!")
	poll_until place_held "$REG/.j.run"
	jobreg-dispatch --wait inf -w 3 j -- touch "$T/ran" 3>&- 2>"$T/err" &
	d=$!
	BG_PIDS+=("$d")
	sleep 4
	flock "$REG/.j.run" -c "jobreg-set -d '$REG' --exit 0 j DONE; sleep 1"
	wait_bg "$d"
	[ "$BG_RC" = 0 ] || { cat "$T/err"; false; }
	[ -e "$T/ran" ]
}

@test "a value of -d or -o that reads as the rest of a long option is refused, not taken" {
	cd "$T"
	run --separate-stderr jobreg-dispatch -dir "$T/reg2" nightly true
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: unknown option '-dir': did you mean --dir? Try 'jobreg-dispatch --help'." ]
	[ ! -e ir ]
	run --separate-stderr jobreg-get -long job
	[ "$status" -eq 64 ]
	[[ $stderr == *"did you mean --long?"* ]]
	[ ! -e ng ]
	# a value that only looks like one is taken
	run jobreg-dispatch -m note-of-run j true
	[ "$status" -eq 0 ]
	[ "$(field j note)" = note-of-run ]
}

@test "--log-size takes its unit in either case: 1k and 1K, 1m and 1M, 1g and 1G" {
	local size
	for size in 2k 2K 1m 1M 1g 1G 1048576; do
		run --separate-stderr jobreg-dispatch --log --log-size "$size" j echo "$size"
		[ "$status" -eq 0 ] || { echo "$size: $stderr"; false; }
		[ "$output" = "$size" ]
	done
	# and a unit it does not know, or a size under 1k, is still refused
	for size in 1x 1kb 1000 0K; do
		run --separate-stderr jobreg-dispatch --log --log-size "$size" j true
		[ "$status" -eq 64 ]
		[[ $stderr == "jobreg-dispatch: bad log size '$size' (at least 1k; units k, M, G). Try"* ]] ||
			{ echo "$stderr"; false; }
	done
}

@test "the decision of step 2 reads every row of its truth table as the page says" {
	unit_table decide_table 50
}

@test "a dispatch with --every writes every=SECONDS with RUNNING, for readers, and a call without --every keeps it" {
	jobreg-dispatch --every 1d j sh -c 'grep -x "every=86400" "$JOBREG_DIR/j"'
	[ "$(field j every)" = 86400 ]
	jobreg-dispatch j true
	[ "$(field j every)" = 86400 ]
	jobreg-dispatch --every 90m k true
	[ "$(field k every)" = 5400 ]
}
