#!/usr/bin/env bats
# jobreg-get: statuses, liveness, output formats, corrupt records (SPEC §1-§5).

bats_require_minimum_version 1.5.0
load lib/helper

load lib/procs

# pid_record JOB PID PID_START BOOT_ID [EXTRA LINES...]: an owner=pid RUNNING
# record, written in this shell's namespaces.
pid_record() {
	local job=$1 pid=$2 ps=$3 boot=$4
	shift 4
	# shellcheck disable=SC2046
	write_record "$job" version=1 status=RUNNING since=2026-01-01T00:00:00Z owner=pid \
		host=build01 "pid=$pid" "pid_start=$ps" "boot_id=$boot" $(ns_fields) "$@" \
		started=2026-01-01T00:00:00Z
}

# json_valid: every stdin line parses as JSON (skipped silently without python3).
json_valid() {
	command -v python3 >/dev/null 2>&1 || return 0
	python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]'
}

# --- common options ---------------------------------------------------------

@test "get -h and --help print usage on stdout and exit 0" {
	run --separate-stderr jobreg-get -h
	[ "$status" -eq 0 ]
	[[ "$output" == *usage* || "$output" == *Usage* ]]
	[[ "$output" == *jobreg-get* ]]
	[ -z "$stderr" ]
	run --separate-stderr jobreg-get --help
	[ "$status" -eq 0 ]
	[[ "$output" == *jobreg-get* ]]
	[ -z "$stderr" ]
}

@test "get -V and --version print the program name and version" {
	run --separate-stderr jobreg-get -V
	[ "$status" -eq 0 ]
	[ "$output" = "jobreg-get 0.4.1" ]
	run --separate-stderr jobreg-get --version
	[ "$status" -eq 0 ]
	[ "$output" = "jobreg-get 0.4.1" ]
}

@test "get rejects an unknown option with exit 64 and one usage line on stderr" {
	run --separate-stderr jobreg-get -x job
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: "*" Try 'jobreg-get --help'." ]]
	run --separate-stderr jobreg-get --bogus job
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: "*" Try 'jobreg-get --help'." ]]
}

@test "get refuses an option after a job id: options come before the job ids" {
	run --separate-stderr jobreg-get job -l
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: misplaced option '-l': options come before the job ids"* ]]
	run --separate-stderr jobreg-get -a -j x --prometheus
	[ "$status" -eq 64 ]
	[[ "$stderr" == "jobreg-get: misplaced option '--prometheus': options come before the job ids"* ]]
	write_record nightly version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get -- nightly
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

@test "a word after -- that begins with '-' is a bad job id, not an option said to be misplaced" {
	local cmd
	for cmd in "jobreg-get -- -x" "jobreg-set -- -x DONE" "jobreg-clear -- -x" "jobreg-dispatch -- -x true"; do
		# shellcheck disable=SC2086  # the command's words
		run --separate-stderr $cmd
		[ "$status" -eq 64 ]
		[ "$stderr" = "${cmd%% *}: bad job id '-x': use 1-128 of [A-Za-z0-9._@+-], not starting with '.' or '-'. Try '${cmd%% *} --help'." ] ||
			flunk "$cmd: $stderr"
	done
	[ ! -e "$REG" ]
	# "--" as an option's value ends no options
	run --separate-stderr jobreg-get -o -- x -l
	[ "$stderr" = "jobreg-get: misplaced option '-l': options come before the job ids. Try 'jobreg-get --help'." ]
}

@test "get without -a or a job, -l with -j, and -a with jobs are usage errors" {
	run --separate-stderr jobreg-get
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	run --separate-stderr jobreg-get -l -j job
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	run --separate-stderr jobreg-get -a job
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
}

# --- §1 job ids ---------------------------------------------------------------

# get_refuses_id ID [named]: exit 64, one stderr line (naming ID when "named"), nothing created.
get_refuses_id() {
	run --separate-stderr jobreg-get -- "$1"
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: "* ]]
	if [ "${2:-}" = named ]; then [[ "$stderr" == *"$1"* ]]; fi
	[ ! -e "$REG" ]
}

@test "get refuses path-like job ids: empty, slash, .., .x, -x" {
	get_refuses_id ""
	get_refuses_id "a/b" named
	get_refuses_id "/" named
	get_refuses_id ".." named
	get_refuses_id ".x" named
	get_refuses_id "-x" named
}

@test "get refuses job ids with a space, a control byte or non-ASCII bytes" {
	get_refuses_id "a b" named
	get_refuses_id $'a\001b'
	get_refuses_id "jöb"
}

@test "get refuses a 129-byte job id and accepts a 128-byte one of every allowed character" {
	local id
	id=$(printf 'a1._@+-Z%.0s' $(seq 16))
	[ "${#id}" -eq 128 ]
	get_refuses_id "${id}x"
	# the message names the id (it may abbreviate one this long)
	[[ "$stderr" == *"${id:0:24}"* ]]
	write_record "$id" version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get "$id"
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

@test "get validates every job id before printing anything" {
	write_record good version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get good "a/b"
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[[ "$stderr" == "jobreg-get: "*"a/b"* ]]
}

# --- §1 registry resolution and missing registry -----------------------------

@test "get reads the registry given by -d before JOBREG_DIR" {
	local other="$BATS_TEST_TMPDIR/other"
	mkdir -p "$other"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$other/job"
	write_record job version=1 status=RUNNING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get -d "$other" job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
	run --separate-stderr jobreg-get --dir "$other" job
	[ "$output" = DONE ]
	run --separate-stderr jobreg-get job
	[ "$output" = RUNNING ]
}

@test "get reads JOBREG_DIR before XDG_STATE_HOME" {
	export XDG_STATE_HOME="$BATS_TEST_TMPDIR/xdg"
	mkdir -p "$XDG_STATE_HOME/jobreg"
	printf 'version=1\nstatus=RUNNING\nsince=2026-01-01T00:00:00Z\n' > "$XDG_STATE_HOME/jobreg/job"
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

@test "get falls back to XDG_STATE_HOME/jobreg without JOBREG_DIR" {
	unset JOBREG_DIR
	export XDG_STATE_HOME="$BATS_TEST_TMPDIR/xdg"
	export HOME="$BATS_TEST_TMPDIR/home"
	mkdir -p "$XDG_STATE_HOME/jobreg" "$HOME/.local/state/jobreg"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$XDG_STATE_HOME/jobreg/job"
	printf 'version=1\nstatus=RUNNING\nsince=2026-01-01T00:00:00Z\n' > "$HOME/.local/state/jobreg/job"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

@test "get falls back to HOME/.local/state/jobreg without JOBREG_DIR and XDG_STATE_HOME" {
	unset JOBREG_DIR XDG_STATE_HOME
	export HOME="$BATS_TEST_TMPDIR/home"
	mkdir -p "$HOME/.local/state/jobreg"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$HOME/.local/state/jobreg/job"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

@test "get on a missing registry reports PENDING and creates nothing" {
	run --separate-stderr jobreg-get a b
	[ "$status" -eq 0 ]
	[ "$output" = $'PENDING\nPENDING' ]
	[ -z "$stderr" ]
	run --separate-stderr jobreg-get -l a
	[ "$status" -eq 0 ]
	[ "$output" = $'a\tPENDING\t-\t-\t-\t-\t-\t-' ]
	run --separate-stderr jobreg-get -j a
	[ "$status" -eq 0 ]
	[ "$output" = '{"job": "a", "status": "PENDING", "health": "OK"}' ]
	[ ! -e "$REG" ]
}

@test "get -a on a missing registry prints nothing and exits 0" {
	run --separate-stderr jobreg-get -a
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr jobreg-get --is DONE a
	[ "$status" -eq 1 ]
	run --separate-stderr jobreg-get --is PENDING a
	[ "$status" -eq 0 ]
	[ ! -e "$REG" ]
}

# --- §2 statuses and liveness -------------------------------------------------

@test "get prints one status per job in the order asked" {
	write_record b version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	write_record a version=1 status=RUNNING since=2026-01-01T00:00:00Z
	write_record c version=1 status=PENDING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get b never a c b
	[ "$status" -eq 0 ]
	[ "$output" = $'DONE\nPENDING\nRUNNING\nPENDING\nDONE' ]
	[ -z "$stderr" ]
}

@test "get trusts an ownerless RUNNING record as written" {
	write_record job version=1 status=RUNNING since=2020-01-01T00:00:00Z started=2020-01-01T00:00:00Z
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = RUNNING ]
}

@test "get reports RUNNING while the owner pid lives and STALE once it is dead" {
	start_sleeper
	jobreg-set --owner "$SLEEPER" job RUNNING
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = RUNNING ]
	kill "$SLEEPER"
	wait "$SLEEPER" || true
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = STALE ]
}

@test "get reports STALE for a record whose owner pid does not exist on this boot" {
	DEAD=$(dead_pid)
	pid_record job "$DEAD" 12345 "$(boot_id)"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = STALE ]
}

@test "get reports STALE when a live pid has another start time (recycled pid)" {
	start_sleeper
	local ps
	ps=$(pid_start "$SLEEPER")
	pid_record job "$SLEEPER" "$((ps + 1))" "$(boot_id)"
	run --separate-stderr jobreg-get job
	[ "$output" = STALE ]
	pid_record job "$SLEEPER" "$ps" "$(boot_id)"
	run --separate-stderr jobreg-get job
	[ "$output" = RUNNING ]
}

@test "get counts an owner from another host and boot as alive even if its pid is gone here" {
	DEAD=$(dead_pid)
	pid_record job "$DEAD" 12345 00000000-1111-2222-3333-444444444444
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = RUNNING ]
}

@test "get counts a zombie owner as dead" {
	make_zombie || { echo "could not make a zombie process" >&2; false; }
	pid_record job "$ZOMBIE" "$(pid_start "$ZOMBIE")" "$(boot_id)"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = STALE ]
}

@test "get reports STALE once expires is in the past, RUNNING before" {
	write_record old version=1 status=RUNNING since=2020-01-01T00:00:00Z \
		"expires=$(now_rfc3339 -60)" started=2020-01-01T00:00:00Z
	write_record new version=1 status=RUNNING since=2020-01-01T00:00:00Z \
		"expires=$(now_rfc3339 3600)" started=2020-01-01T00:00:00Z
	run --separate-stderr jobreg-get old new
	[ "$status" -eq 0 ]
	[ "$output" = $'STALE\nRUNNING' ]
}

@test "get applies expires to a pid-owned record whose pid is alive" {
	start_sleeper
	pid_record job "$SLEEPER" "$(pid_start "$SLEEPER")" "$(boot_id)" "expires=$(now_rfc3339 -60)"
	run --separate-stderr jobreg-get job
	[ "$output" = STALE ]
}

@test "get judges a lock-owned record by its run lock alone" {
	DEAD=$(dead_pid)
	write_record job version=1 status=RUNNING since=2020-01-01T00:00:00Z owner=lock host=build01 \
		"pid=$DEAD" "expires=$(now_rfc3339 -60)" started=2020-01-01T00:00:00Z
	flock "$REG/.job.run" sleep 60 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	local i
	for i in $(seq 100); do flock -n "$REG/.job.run" true || break; sleep 0.05; done
	run --separate-stderr jobreg-get job
	[ "$output" = RUNNING ]
	kill_tree "${BG_PIDS[-1]}"
	for i in $(seq 100); do flock -n "$REG/.job.run" true && break; sleep 0.05; done
	run --separate-stderr jobreg-get job
	[ "$output" = STALE ]
}

@test "get does not wait for a job lock held by a writer" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	flock "$REG/.job.lock" sleep 60 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	local i
	for i in $(seq 100); do flock -n "$REG/.job.lock" true || break; sleep 0.05; done
	run --separate-stderr timeout 5 jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

# --- §5 -l ---------------------------------------------------------------------

@test "get -l prints tab-separated columns with - for empty fields" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:09Z host=build01 pid=41213 \
		started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:09Z exit=3 "note=nightly backup"
	write_record bare version=1 status=PENDING since=2026-01-01T00:00:01Z
	run --separate-stderr jobreg-get -l job bare never
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = $'job\tDONE\t2026-01-01T00:00:09Z\t-\tbuild01\t41213\t3\tnightly backup' ]
	[ "${lines[1]}" = $'bare\tPENDING\t2026-01-01T00:00:01Z\t-\t-\t-\t-\t-' ]
	[ "${lines[2]}" = $'never\tPENDING\t-\t-\t-\t-\t-\t-' ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "get -l shows a signal as SIG plus its name in the exit column" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:09Z host=build01 pid=7 \
		started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:09Z signal=TERM
	run --separate-stderr jobreg-get --long job
	[ "$status" -eq 0 ]
	[ "$output" = $'job\tDONE\t2026-01-01T00:00:09Z\t-\tbuild01\t7\tSIGTERM\t-' ]
}

@test "get -l shows the owner and the derived status of a pid-owned run" {
	DEAD=$(dead_pid)
	pid_record job "$DEAD" 12345 "$(boot_id)"
	run --separate-stderr jobreg-get -l job
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'job\tSTALE\t2026-01-01T00:00:00Z\tpid\tbuild01\t%s\t-\t-' "$DEAD")" ]
}

# --- §5 -j ---------------------------------------------------------------------

@test "get -j prints numbers as numbers and escapes quotes and backslashes" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:09Z host=build01 pid=41213 \
		started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:09Z exit=3 'note=say "hi" \ ok'
	run --separate-stderr jobreg-get -j job
	[ "$status" -eq 0 ]
	[ "$output" = '{"job": "job", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:09Z", "host": "build01", "pid": 41213, "started": "2026-01-01T00:00:00Z", "ended": "2026-01-01T00:00:09Z", "exit": 3, "note": "say \"hi\" \\ ok", "duration": 9, "health": "OK"}' ]
	printf '%s\n' "$output" | json_valid
}

@test "get -j gives pid_start as a number and omits absent fields" {
	start_sleeper
	local ps boot
	ps=$(pid_start "$SLEEPER")
	boot=$(boot_id)
	write_record job version=1 status=RUNNING since=2026-01-01T00:00:00Z owner=pid \
		host=build01 "pid=$SLEEPER" "pid_start=$ps" "boot_id=$boot" started=2026-01-01T00:00:00Z
	write_record bare version=1 status=RUNNING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get --json job bare
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "{\"job\": \"job\", \"version\": 1, \"status\": \"RUNNING\", \"since\": \"2026-01-01T00:00:00Z\", \"owner\": \"pid\", \"host\": \"build01\", \"pid\": $SLEEPER, \"pid_start\": $ps, \"boot_id\": \"$boot\", \"started\": \"2026-01-01T00:00:00Z\", \"health\": \"OK\"}" ]
	[ "${lines[1]}" = '{"job": "bare", "version": 1, "status": "RUNNING", "since": "2026-01-01T00:00:00Z", "health": "OK"}' ]
	printf '%s\n' "$output" | json_valid
}

@test "get -j marks a STALE job with status STALE and stale true" {
	write_record job version=1 status=RUNNING since=2020-01-01T00:00:00Z expires=2020-01-01T00:00:10Z \
		started=2020-01-01T00:00:00Z
	run --separate-stderr jobreg-get -j job
	[ "$status" -eq 0 ]
	[ "$output" = '{"job": "job", "version": 1, "status": "STALE", "since": "2020-01-01T00:00:00Z", "expires": "2020-01-01T00:00:10Z", "started": "2020-01-01T00:00:00Z", "stale": true, "health": "STALE"}' ]
	printf '%s\n' "$output" | json_valid
}

@test "get -j keeps a UTF-8 note intact and gives a signal as a string" {
	command -v python3 >/dev/null 2>&1 || skip "python3 is needed to decode the JSON"
	write_record job version=1 status=DONE since=2026-01-01T00:00:09Z signal=TERM 'note=Grüße — "ok" \ 完了'
	run --separate-stderr jobreg-get -j job
	[ "$status" -eq 0 ]
	run python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["note"]); print(repr(d["signal"])); print(sorted(d))' <<<"$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 'Grüße — "ok" \ 完了' ]
	[ "${lines[1]}" = "'TERM'" ]
	[ "${lines[2]}" = "['health', 'job', 'note', 'signal', 'since', 'status', 'version']" ]
}

@test "get -j gives the duration of a DONE run and the history and owner numbers as numbers" {
	write_record done version=1 status=DONE since=2026-01-01T01:00:00Z host=build01 pid=0041 \
		timeout=1.50 started=2026-01-01T00:00:00Z ended=2026-01-01T01:00:05Z exit=0 \
		timed_out=1 runs=012 failures=3 last_success=2025-12-31T00:00:00Z
	write_record run version=1 status=RUNNING since=2026-01-01T00:00:00Z owner=lock host=build01 \
		pid=7 pid_start=99 pid_ns=4026531836 time_ns=4026531834 run_lock=1234567 timeout=3600 \
		started=2026-01-01T00:00:00Z runs=1 duration=bogus
	run --separate-stderr jobreg-get -j done run
	[ "${lines[0]}" = '{"job": "done", "version": 1, "status": "DONE", "since": "2026-01-01T01:00:00Z", "host": "build01", "pid": 41, "timeout": 1.50, "started": "2026-01-01T00:00:00Z", "ended": "2026-01-01T01:00:05Z", "exit": 0, "timed_out": true, "runs": 12, "failures": 3, "last_success": "2025-12-31T00:00:00Z", "duration": 3605, "health": "OK"}' ]
	# a RUNNING run has no duration, and a record's own "duration" key is left out
	[[ "${lines[1]}" == '{"job": "run", "version": 1, "status": '* ]]
	[[ "${lines[1]}" == *'"pid": 7, "pid_start": 99, "pid_ns": 4026531836, "time_ns": 4026531834, "run_lock": 1234567, "timeout": 3600, "started": "2026-01-01T00:00:00Z", "runs": 1'* ]]
	[[ "${lines[1]}" != *duration* ]]
	printf '%s\n' "$output" | json_valid
}

@test "get -j gives an unknown key as the string it is, also one named as a history key (run)" {
	write_record j version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 run=abc result=7 extra=12
	run --separate-stderr jobreg-get -j j
	[ "$status" -eq 0 ]
	[ "$output" = '{"job": "j", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:00Z", "exit": 0, "run": "abc", "result": "7", "extra": "12", "health": "OK"}' ]
}

@test "get -j gives version as a number and timed_out as a boolean, as every numeric field and flag" {
	command -v python3 >/dev/null 2>&1 || skip "python3 is needed to read the JSON back"
	write_record timed version=1 status=DONE since=2026-01-01T00:00:00Z timeout=60 exit=0 timed_out=1
	write_record hand version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 timed_out=00
	jobreg-dispatch -q --timeout 0.1 run sleep 5 || [ $? -eq 124 ]
	run --separate-stderr jobreg-get -j timed hand run
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"job": "timed", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:00Z", "timeout": 60, "exit": 0, "timed_out": true, "health": "OK"}' ]
	[ "${lines[1]}" = '{"job": "hand", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:00Z", "exit": 0, "timed_out": false, "health": "OK"}' ]
	# read back: every value typed as jq would want it
	run python3 -c '
import json, sys
numbers = {"version", "pid", "pid_start", "exit", "runs", "failures", "pid_ns", "time_ns",
           "run_lock", "timeout", "duration", "attempt", "lost", "consecutive_failures",
           "late_after", "keep_runs"}
flags = {"timed_out", "stale", "corrupt", "unreadable", "late"}
for line in sys.stdin:
    for k, v in json.loads(line).items():
        want = (int, float) if k in numbers else bool if k in flags else str
        if type(v) not in (want if isinstance(want, tuple) else (want,)):
            print(k, repr(v))
print("checked")' <<<"$output"
	[ "$output" = checked ]
	run jobreg-get -j run
	[[ "$output" == *'"version": 1, '*'"timed_out": true, '* ]]
}

@test "get -j gives the counts of 0.4 as numbers, cancelled as a flag, and paused and waiting" {
	write_record done version=1 status=DONE since=2026-01-01T01:00:00Z ended=2026-01-01T01:00:00Z \
		exit=143 cancelled=1 cancelled_by=ops@ops01 "cmd=rsync -a '/srv x/'" cancelled_runs=02 \
		skipped=4 coalesced=2 wait_next=18 wait_head=15 replaced_below=16 \
		paused_until=inf paused_by=ops@ops01
	write_record run version=1 status=RUNNING since=2026-01-01T00:00:00Z cancel_run=13 \
		cancel_signal=TERM cancel_kill_after=10.5 cancel_by=ops@ops01 \
		cancel_at=2026-01-01T00:00:01Z paused_until=2020-01-01T00:00:00Z wait_next=3
	mkdir -p "$REG"
	hold_place done 15   # superseded: below replaced_below
	hold_place done 16
	hold_place done 17
	: >"$REG/.done.wait.18"   # past wait_next
	run --separate-stderr jobreg-get -j done run
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"job": "done", "version": 1, "status": "DONE", "since": "2026-01-01T01:00:00Z", "ended": "2026-01-01T01:00:00Z", "exit": 143, "cancelled": true, "cancelled_by": "ops@ops01", "cmd": "rsync -a '"'/srv x/'"'", "cancelled_runs": 2, "skipped": 4, "coalesced": 2, "wait_next": 18, "wait_head": 15, "replaced_below": 16, "paused_until": "inf", "paused_by": "ops@ops01", "paused": true, "waiting": 2, "health": "OK"}' ]
	# a pause that has ended, and a line with nobody in it, add nothing
	[ "${lines[1]}" = '{"job": "run", "version": 1, "status": "RUNNING", "since": "2026-01-01T00:00:00Z", "cancel_run": 13, "cancel_signal": "TERM", "cancel_kill_after": 10.5, "cancel_by": "ops@ops01", "cancel_at": "2026-01-01T00:00:01Z", "wait_next": 3, "paused_until": "2020-01-01T00:00:00Z", "health": "OK"}' ]
	printf '%s\n' "$output" | json_valid
	# a record's own "paused" or "waiting" key is left out
	write_record hand version=1 status=PENDING since=2026-01-01T00:00:00Z paused=no waiting=7
	run -0 jobreg-get -j hand
	[ "$output" = '{"job": "hand", "version": 1, "status": "PENDING", "since": "2026-01-01T00:00:00Z", "health": "OK"}' ]
}

# -s: the status list filters every format, with -a and with named jobs.
plant_mix() {
	write_record ok version=1 status=DONE since=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z exit=0
	write_record bad version=1 status=DONE since=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z exit=2
	write_record killed version=1 status=DONE since=2026-01-01T00:00:00Z signal=KILL
	write_record unknown version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record run version=1 status=RUNNING since=2026-01-01T00:00:00Z
	write_record stale version=1 status=RUNNING since=2020-01-01T00:00:00Z expires=2020-01-01T00:00:01Z
	write_record wait version=1 status=PENDING since=2026-01-01T00:00:00Z
}

@test "get -s prints only the jobs whose status is listed, with OK and FAILED telling DONE runs apart" {
	plant_mix
	run --separate-stderr jobreg-get -a -s STALE,FAILED
	[ "$status" -eq 0 ]
	[ "$output" = $'bad DONE\nkilled DONE\nstale STALE' ]
	run --separate-stderr jobreg-get -a -s ok
	[ "$output" = "ok DONE" ]
	run --separate-stderr jobreg-get -a -s DONE
	[ "$output" = $'bad DONE\nkilled DONE\nok DONE\nunknown DONE' ]
	run --separate-stderr jobreg-get -s pending,running -a
	[ "$output" = $'run RUNNING\nwait PENDING' ]
	# named jobs (a job with no record is PENDING), in the order asked
	run --separate-stderr jobreg-get -s PENDING,FAILED never ok bad wait
	[ "$status" -eq 0 ]
	[ "$output" = $'PENDING\nDONE\nPENDING' ]
	run --separate-stderr jobreg-get -l -s FAILED ok bad
	[ "$output" = $'bad\tDONE\t2026-01-01T00:00:00Z\t-\t-\t-\t2\t-' ]
	run --separate-stderr jobreg-get -j -a -s FAILED
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == '{"job": "bad", '* ]]
	[[ "${lines[1]}" == '{"job": "killed", '* ]]
	run --separate-stderr jobreg-get -a -s STALE -s RUNNING
	[ "$output" = "run RUNNING" ]
}

@test "get -s refuses an unknown status word, and --is takes no output option" {
	run --separate-stderr jobreg-get -s DONE,BROKEN -a
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == *"BROKEN"* ]]
	run --separate-stderr jobreg-get -s CORRUPT -a
	[ "$status" -eq 64 ]
	for opt in -l -j -P "-s DONE" "-o $BATS_TEST_TMPDIR/out"; do
		run --separate-stderr jobreg-get $opt --is DONE job
		[ "$status" -eq 64 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
	done
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
	run --separate-stderr jobreg-get -l -P job
	[ "$status" -eq 64 ]
	run --separate-stderr jobreg-get -j --prometheus job
	[ "$status" -eq 64 ]
}

@test "get -s leaves out a corrupt record but still reports it and exits 65" {
	plant_mix
	write_record broken version=1 status=DONE junk
	run --separate-stderr jobreg-get -a -s FAILED
	[ "$status" -eq 65 ]
	[ "$output" = $'bad DONE\nkilled DONE' ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: broken: corrupt record $REG/broken"* ]]
}

# --- §5 -a ---------------------------------------------------------------------

@test "get -a lists every job with a record as JOB STATUS sorted by id" {
	write_record b version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record a.b version=1 status=RUNNING since=2026-01-01T00:00:00Z
	write_record C version=1 status=PENDING since=2026-01-01T00:00:00Z
	write_record a version=1 status=DONE since=2026-01-01T00:00:00Z
	: > "$REG/.a.lock"
	: > "$REG/.b.tmp"
	run --separate-stderr jobreg-get -a
	[ "$status" -eq 0 ]
	[ "$output" = $'C PENDING\na DONE\na.b RUNNING\nb DONE' ]
	[ -z "$stderr" ]
}

@test "get -a -j prints one JSON object per job in sorted order" {
	write_record b version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record a version=1 status=RUNNING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get -a -j
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = '{"job": "a", "version": 1, "status": "RUNNING", "since": "2026-01-01T00:00:00Z", "health": "OK"}' ]
	[ "${lines[1]}" = '{"job": "b", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:00Z", "health": "OK"}' ]
	[ "${#lines[@]}" -eq 2 ]
	printf '%s\n' "$output" | json_valid
}

# many_records N: N records of every kind in $REG, with a few that are
# corrupt, a directory in a record's place, and RUNNING owners that are dead
# (a pid that does not exist; a run lock nobody holds).
many_records() {
	local dead
	mkdir -p "$REG"
	dead=$(printf '%s\n' version=1 status=RUNNING since=2026-01-01T00:00:00Z owner=pid \
		"host=$(hostname)" pid=999999999 pid_start=1 "boot_id=$(</proc/sys/kernel/random/boot_id)" \
		$(ns_fields))
	write_many_records "$1" "$dead"
	rm "$REG/j10" && mkdir "$REG/j10"
}

# write_many_records N DEAD: many_records' N files, DEAD the record of a dead pid.
write_many_records() {
	local n=$1 dead=$2 i ino name runs=()
	local -A run_lock=()
	# The run locks first, and their inodes with one stat, not one a record.
	for ((i = 4; i < n; i += 7)); do
		: > "$REG/.j$i.run"
		runs+=("$REG/.j$i.run")
	done
	if [ ${#runs[@]} -gt 0 ]; then
		while read -r ino name; do run_lock[$name]=$ino; done < <(stat -c '%i %n' "${runs[@]}")
	fi
	for ((i = 0; i < n; i++)); do
		case $((i % 7)) in
		0) printf 'version=1\nstatus=PENDING\nsince=2026-01-01T00:00:00Z\n' ;;
		1) printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nexit=%d\nnote=n\t"%d"\\\n' $((i % 3)) "$i" ;;
		2) printf 'version=1\nstatus=RUNNING\nsince=2026-01-01T00:00:00Z\n' ;;
		3) printf '%s\n' "$dead" ;;
		4) printf 'version=1\nstatus=RUNNING\nsince=2026-01-01T00:00:00Z\nowner=lock\nrun_lock=%s\n' \
			"${run_lock[$REG/.j$i.run]}" ;;
		5) printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nsignal=TERM\n' ;;
		6) printf 'version=2\nstatus=DONE\n' ;;
		esac > "$REG/j$i"
	done
}

@test "get -a on 1500 records of every kind prints what get of each job prints, in order" {
	many_records 1500
	local jobs fmt want got ws gs
	jobs=$(cd "$REG" && ls | LC_ALL=C sort)
	for fmt in -l -j; do
		ws=0 gs=0
		# shellcheck disable=SC2086  # one argument per job
		want=$(jobreg-get $fmt $jobs 2> "$T/want.err") || ws=$?
		got=$(jobreg-get $fmt -a 2> "$T/got.err") || gs=$?
		[[ $got == "$want" ]] || flunk "get $fmt -a differs from get $fmt JOB...: $(diff <(echo "$want") <(echo "$got") | head -5)"
		[[ $gs == "$ws" && $gs == 77 ]] || flunk "get $fmt -a exited $gs, get $fmt JOB... $ws"
		cmp -s "$T/want.err" "$T/got.err" || flunk "get $fmt -a said other things: $(diff "$T/want.err" "$T/got.err" | head -5)"
	done
	# of each 7: PENDING, DONE, RUNNING, STALE (pid), STALE (lock), DONE, CORRUPT
	jobreg-get -a 2> /dev/null | cut -d' ' -f2 | sort | uniq -c | tr -s ' ' > "$T/counts" || true
	[[ $(<"$T/counts") == " 214 CORRUPT
 429 DONE
 215 PENDING
 214 RUNNING
 427 STALE
 1 UNREADABLE" ]] || flunk "get -a counted $(<"$T/counts")"
}

@test "get -a with only a few descriptors free prints what it prints with many" {
	many_records 700
	local fmt want got ws gs
	for fmt in -l -j; do
		ws=0 gs=0
		want=$(jobreg-get $fmt -a 2> "$T/want.err") || ws=$?
		# 0-2, the registry, its listing and a lock probe leave a few
		got=$(ulimit -n 12 && jobreg-get $fmt -a 2> "$T/got.err") || gs=$?
		[[ $got == "$want" && $gs == "$ws" ]] || flunk "with ulimit -n 12, get $fmt -a exited $gs (not $ws): $(diff <(echo "$want") <(echo "$got") | head -5)"
		cmp -s "$T/want.err" "$T/got.err" || flunk "with ulimit -n 12 it said $(diff "$T/want.err" "$T/got.err" | head -3)"
	done
}

# done_records N [NOTE]: N plain DONE records, j0 to jN-1, each with NOTE
# when given.
done_records() {
	local i note=${2:+note=$2$'\n'}
	mkdir -p "$REG"
	for ((i = 0; i < $1; i++)); do
		printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nexit=0\n%s' "$note" > "$REG/j$i"
	done
}

@test "get -a held up by a reader that does not read keeps no record open" {
	local pid n=0 held keep call
	# a note of 200 bytes makes each line of -l long: the pipe fills early
	done_records 3000 "$(printf '%0200d' 0)"
	mkfifo "$T/out"
	exec {keep}<> "$T/out"   # a reader that never reads: the pipe fills
	jobreg-get -l -a > "$T/out" &
	pid=$!
	# until it is blocked in write(2) (system call 1 on x86-64, 64 on arm64)
	while read -r call _ < "/proc/$pid/syscall" && [[ $call != 1 && $call != 64 ]] && ((n++ < 500)); do nap 0.01; done
	held=$(find "/proc/$pid/fd" -lname "$REG/*" 2> /dev/null | wc -l)
	kill "$pid"
	wait "$pid" || true
	exec {keep}>&-
	[[ $call == 1 || $call == 64 ]] || flunk "get -a never blocked writing (system call $call)"
	[[ $held == 0 ]] || flunk "get -a kept $held records open while its output was held up"
}

@test "get -a with two descriptors free beyond its registry prints what it prints with many" {
	many_records 70
	# the first RUNNING record read, after a DONE one, has no owner:
	# nothing but this process's identity is probed for it
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nexit=0\n' > "$REG/0"
	printf 'version=1\nstatus=RUNNING\nsince=2026-01-01T00:00:00Z\n' > "$REG/a"
	local n fmt want got ws gs
	for fmt in -l -P; do
		ws=0
		want=$(jobreg-get $fmt -a 2> "$T/want.err") || ws=$?
		# 0-2 and the registry: 6 leaves two free, for a probe of the
		# run lock and the record read again under it (SPEC §2)
		for n in 6 7 8 9; do
			gs=0
			got=$(std_only bash -c 'ulimit -n "$1" && exec jobreg-get "$2" -a' - "$n" "$fmt" 2> "$T/got.err") || gs=$?
			[[ $got == "$want" && $gs == "$ws" ]] || flunk "with ulimit -n $n, get $fmt -a exited $gs (not $ws): $(diff <(echo "$want") <(echo "$got") | head -5)"
			cmp -s "$T/want.err" "$T/got.err" || flunk "with ulimit -n $n it said $(diff "$T/want.err" "$T/got.err" | head -3)"
		done
	done
}


@test "get -a reads each record with one open, one fstat of its descriptor and one read, and no stat of a path" {
	command -v strace > /dev/null || skip "strace is not installed"
	done_records 500
	traced -o "$T/trace" -e trace=openat,newfstatat,fstat,statx,read,close,close_range jobreg-get -a > "$T/out"
	[[ $(wc -l < "$T/out") == 500 ]] || flunk "get -a printed $(wc -l < "$T/out") lines"
	local opens paths
	opens=$(grep -c 'openat(.*"j[0-9]*"' "$T/trace")
	paths=$(grep -E '^(newfstatat|statx)\([0-9]+, "[^"]' "$T/trace" | grep -vc '"/' || true)
	[[ $opens == 500 ]] || flunk "500 records, $opens opens"
	[[ $paths == 0 ]] || flunk "$paths stats of a path in the registry: $(grep -E '^(newfstatat|statx)' "$T/trace" | head -3)"
	# the reads of the records' descriptors (a sanitized build reads files
	# of its own)
	local reads
	reads=$(awk '/^openat\(.*"j[0-9]+"/ { fd[$NF] = 1 }
		/^read\(/ { f = substr($1, 6) + 0; if (f in fd) n++ }
		/^close\(/ { f = substr($1, 7) + 0; delete fd[f] }
		/^close_range\(/ { split(substr($0, 13), r, /[, ]+/); for (f = r[1]; f <= r[2]; f++) delete fd[f] }
		END { print n + 0 }' "$T/trace")
	(( reads <= 510 )) || flunk "$reads reads of records for 500 records"
}

@test "get -a closes each record's descriptor once it is read, and never one it did not open" {
	command -v strace > /dev/null || skip "strace is not installed"
	done_records 300
	# with only 0-2 open and 6 inherited, the registry is 3 and the
	# records get 4, 5, 7 ...: 6 lies among them
	std_only bash -c 'exec 6< /dev/null; "$@"' - env ASAN_OPTIONS=detect_leaks=0 \
		strace -o "$T/trace" -e trace=openat,close,close_range jobreg-get -a > "$T/out"
	[[ $(wc -l < "$T/out") == 300 ]] || flunk "get -a printed $(wc -l < "$T/out") lines"
	# what happens once the registry is open (a sanitized build opens
	# and closes files of its own before)
	sed -n "\|^openat(.*\"${REG//|/\\|}\"|,\$p" "$T/trace" > "$T/after"
	grep -q '^openat(3, "j0"' "$T/after" || flunk "the records are not where the test expects them: $(grep -m1 '"j0"' "$T/after")"
	grep -qE '^close(_range)?\((6|[0-5], *([6-9]|[1-9][0-9]))' "$T/after" &&
		flunk "get -a closed descriptor 6, which it did not open: $(grep -E '^close(_range)?\(6' "$T/after" | head -3)"
	# each record's descriptor is closed before the next record is opened
	awk '/^openat\(3, "j[0-9]+"/ { if (open != "") { print "record " open " still open at " $0; bad = 1 }
			open = $NF; n++ }
		/^close\(/ { fd = substr($0, 7); sub(/\).*/, "", fd); if (fd == open) { open = ""; closed++ } }
		END { if (n != 300 || closed != 300) { print n " records opened, " closed " closed"; bad = 1 }; exit bad }' \
		"$T/after" > "$T/bad" || flunk "$(head -3 "$T/bad")"
}

# --- §5 --is -----------------------------------------------------------------

@test "get --is exits 0 silently when the status is in the list" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get --is DONE job
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr jobreg-get --is RUNNING,DONE job
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "get --is exits 1 silently when the status is not in the list" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get --is RUNNING,PENDING job
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "get --is requires every job to match" {
	write_record a version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record b version=1 status=RUNNING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get --is DONE a b
	[ "$status" -eq 1 ]
	run --separate-stderr jobreg-get --is DONE,RUNNING a b
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "get --is takes status words case-insensitively, STALE included" {
	DEAD=$(dead_pid)
	pid_record job "$DEAD" 12345 "$(boot_id)"
	run --separate-stderr jobreg-get --is stale job
	[ "$status" -eq 0 ]
	run --separate-stderr jobreg-get --is Running job
	[ "$status" -eq 1 ]
	run --separate-stderr jobreg-get --is done,sTaLe job
	[ "$status" -eq 0 ]
}

@test "get --is refuses an unknown status word with 64" {
	run --separate-stderr jobreg-get --is DONE,FINISHED job
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: "* ]]
	run --separate-stderr jobreg-get --is "" job
	[ "$status" -eq 64 ]
}

@test "get --is exits 65 for a corrupt record" {
	write_record job status=DONE
	run --separate-stderr jobreg-get --is DONE job
	[ "$status" -eq 65 ]
	[ -z "$output" ]
	[[ "$stderr" == "jobreg-get: job: "*"$REG/job"* ]]
}

# --- §3 corrupt records --------------------------------------------------------

# get_sees_corrupt: $REG/bad is planted; good (RUNNING) and never (no record) are read
# around it: CORRUPT in place, exit 65, one error line with the path, file untouched.
get_sees_corrupt() {
	write_record good version=1 status=RUNNING since=2026-01-01T00:00:00Z
	cp -p "$REG/bad" "$BATS_TEST_TMPDIR/bad.orig"
	run --separate-stderr jobreg-get good bad never
	[ "$status" -eq 65 ]
	[ "$output" = $'RUNNING\nCORRUPT\nPENDING' ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: bad: "*"$REG/bad"* ]]
	cmp "$REG/bad" "$BATS_TEST_TMPDIR/bad.orig"
}

@test "get reports CORRUPT for a record without a version first line or of version 2" {
	write_record bad status=DONE version=1 since=2026-01-01T00:00:00Z
	get_sees_corrupt
	write_record bad version=2 status=DONE since=2026-01-01T00:00:00Z
	get_sees_corrupt
}

@test "get reports CORRUPT for a missing status, STALE on disk and an unknown status" {
	write_record bad version=1 since=2026-01-01T00:00:00Z
	get_sees_corrupt
	write_record bad version=1 status=STALE since=2026-01-01T00:00:00Z
	get_sees_corrupt
	write_record bad version=1 status=FINISHED since=2026-01-01T00:00:00Z
	get_sees_corrupt
}

@test "get reports CORRUPT for a duplicate key and for a line without =" {
	write_record bad version=1 status=DONE since=2026-01-01T00:00:00Z note=a note=b
	get_sees_corrupt
	write_record bad version=1 status=DONE since=2026-01-01T00:00:00Z garbage
	get_sees_corrupt
}

@test "get reports CORRUPT for a record containing a NUL byte or invalid UTF-8" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\nnote=a\0b\n' > "$REG/bad"
	get_sees_corrupt
	printf 'version=1\nstatus=DONE\nnote=a\377\376b\n' > "$REG/bad"
	get_sees_corrupt
}

@test "get reports CORRUPT for a record over 64 KiB but reads one of exactly 64 KiB" {
	mkdir -p "$REG"
	local head=$'version=1\nstatus=DONE\nx='
	{ printf '%s' "$head"; head -c $((65536 - ${#head} - 1)) /dev/zero | tr '\0' a; echo; } > "$REG/ok"
	[ "$(stat -c %s "$REG/ok")" -eq 65536 ]
	{ printf '%s' "$head"; head -c $((65537 - ${#head} - 1)) /dev/zero | tr '\0' a; echo; } > "$REG/bad"
	[ "$(stat -c %s "$REG/bad")" -eq 65537 ]
	run --separate-stderr jobreg-get ok
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
	get_sees_corrupt
}

@test "get -j and -l keep a corrupt job's line in place" {
	write_record good version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record bad version=1 status=DONE garbage
	run --separate-stderr jobreg-get -j bad good
	[ "$status" -eq 65 ]
	[ "${lines[0]}" = '{"job": "bad", "corrupt": true}' ]
	[ "${lines[1]}" = '{"job": "good", "version": 1, "status": "DONE", "since": "2026-01-01T00:00:00Z", "health": "OK"}' ]
	printf '%s\n' "$output" | json_valid
	[[ "$stderr" == "jobreg-get: bad: "*"$REG/bad"* ]]
	run --separate-stderr jobreg-get -l bad good
	[ "$status" -eq 65 ]
	[ "${lines[0]}" = $'bad\tCORRUPT\t-\t-\t-\t-\t-\t-' ]
	[ "${lines[1]}" = $'good\tDONE\t2026-01-01T00:00:00Z\t-\t-\t-\t-\t-' ]
}

@test "get -a lists a corrupt record as CORRUPT and exits 65" {
	write_record a version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record b version=1
	write_record c version=1 status=RUNNING since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get -a
	[ "$status" -eq 65 ]
	[ "$output" = $'a DONE\nb CORRUPT\nc RUNNING' ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: b: "*"$REG/b"* ]]
}

@test "get: a corrupt record's message comes after the lines of the jobs before it, when both go to one file" {
	write_record a version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record b version=1
	write_record c version=1 status=PENDING since=2026-01-01T00:00:00Z
	local f
	for f in "" -l -j; do
		# shellcheck disable=SC2086  # no format is no word
		run jobreg-get $f a b c
		[ "$status" -eq 65 ]
		[ "${#lines[@]}" -eq 4 ]
		[[ ${lines[0]} == *DONE* ]] || flunk "$f: $output"
		[[ ${lines[1]} == "jobreg-get: b: "* ]] || flunk "$f: $output"
		[[ ${lines[2]} == *CORRUPT* || ${lines[2]} == *corrupt* ]] || flunk "$f: $output"
		[[ ${lines[3]} == *PENDING* ]] || flunk "$f: $output"
	done
	run jobreg-get -a
	[ "$output" = $'a DONE\njobreg-get: b: corrupt record '"$REG/b"$': no status\nb CORRUPT\nc PENDING' ] || flunk "$output"
}

# --- §4 non-regular entries, permissions ---------------------------------------

@test "get refuses a symlink planted as the record with 77 and does not follow it" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$REG/job"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 77 ]
	[ "$output" != DONE ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: job: "* ]]
}

@test "get refuses a FIFO planted as the record with 77 without blocking" {
	mkdir -p "$REG"
	mkfifo "$REG/job"
	run --separate-stderr timeout 5 jobreg-get job
	[ "$status" -eq 77 ]
	[ "$output" = UNREADABLE ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: job: "* ]]
}

@test "get exits with the first failure in the order the jobs were given" {
	write_record bad version=1
	mkfifo "$REG/fifo"
	run --separate-stderr timeout 5 jobreg-get bad fifo
	[ "$status" -eq 65 ]
	run --separate-stderr timeout 5 jobreg-get fifo bad
	[ "$status" -eq 77 ]
}

@test "get reads through a registry directory that is a symlink" {
	mkdir -p "$BATS_TEST_TMPDIR/real"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$BATS_TEST_TMPDIR/real/job"
	ln -s "$BATS_TEST_TMPDIR/real" "$REG"
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
	run --separate-stderr jobreg-get -a
	[ "$output" = "job DONE" ]
}

# bats test_tags=multiuser
@test "get exits 77 when the registry or record cannot be read" {
	need_setpriv
	public_dir jobreg-get-perm
	PERMDIR=$PUBLIC
	mkdir -m 755 "$PERMDIR/open" "$PERMDIR/closed"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$PERMDIR/open/job"
	chmod 600 "$PERMDIR/open/job"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$PERMDIR/closed/job"
	chmod 700 "$PERMDIR/closed"
	run --separate-stderr as_nobody jobreg-get -d "$PERMDIR/open" job
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: job: "* ]]
	run --separate-stderr as_nobody jobreg-get -d "$PERMDIR/closed" job
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: "* ]]
}

# --- §5 UNREADABLE and vanished records -------------------------------------------

@test "get prints UNREADABLE for a directory or FIFO where a record should be, CORRUPT only for one that does not parse" {
	write_record good version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record bad version=1 status=DONE garbage
	mkdir "$REG/dir"
	mkfifo "$REG/fifo"
	run --separate-stderr timeout 5 jobreg-get dir fifo bad good
	[ "$status" -eq 77 ]
	[ "$output" = $'UNREADABLE\nUNREADABLE\nCORRUPT\nDONE' ]
	[ "${#stderr_lines[@]}" -eq 3 ]
	[[ "${stderr_lines[0]}" == "jobreg-get: dir: not a regular file: $REG/dir" ]]
	run --separate-stderr timeout 5 jobreg-get -a
	[ "$status" -eq 65 ]
	[ "$output" = $'bad CORRUPT\ndir UNREADABLE\nfifo UNREADABLE\ngood DONE' ]
	run --separate-stderr timeout 5 jobreg-get -l fifo good
	[ "$status" -eq 77 ]
	[ "${lines[0]}" = $'fifo\tUNREADABLE\t-\t-\t-\t-\t-\t-' ]
	run --separate-stderr timeout 5 jobreg-get -j dir bad good
	[ "$status" -eq 77 ]
	[ "${lines[0]}" = '{"job": "dir", "unreadable": true}' ]
	[ "${lines[1]}" = '{"job": "bad", "corrupt": true}' ]
	printf '%s\n' "$output" | json_valid
}

# bats test_tags=multiuser
@test "get prints UNREADABLE and exits 77 for a record its user may not read" {
	need_setpriv
	public_dir jobreg-get-perm
	PERMDIR=$PUBLIC
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$PERMDIR/secret"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$PERMDIR/open"
	chmod 600 "$PERMDIR/secret"
	chmod 644 "$PERMDIR/open"
	run --separate-stderr as_nobody jobreg-get -d "$PERMDIR" -a
	[ "$status" -eq 77 ]
	[ "$output" = $'open DONE\nsecret UNREADABLE' ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: secret: "*"$PERMDIR/secret: Permission denied" ]]
	run --separate-stderr as_nobody jobreg-get -d "$PERMDIR" -j secret open
	[ "$status" -eq 77 ]
	[ "${lines[0]}" = '{"job": "secret", "unreadable": true}' ]
}

@test "get prints UNREADABLE and exits 74 for a record whose read fails with EIO" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1 ||
		skip "this strace cannot inject faults"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr strace -o /dev/null -P "$REG/job" -e trace=read -e inject=read:error=EIO \
		"$JOBREG_ROOT/bin/jobreg-get" job
	[ "$status" -eq 74 ]
	[ "$output" = UNREADABLE ]
	[[ "$stderr" == "jobreg-get: job: read $REG/job: Input/output error" ]]
	run --separate-stderr strace -o /dev/null -P "$REG/job" -e trace=read -e inject=read:error=EIO \
		"$JOBREG_ROOT/bin/jobreg-get" -j job
	[ "$output" = '{"job": "job", "unreadable": true}' ]
}

# listings_partly_cleared: 300 listings (get -a) of a registry whose 200
# DONE records come and go; fails on a listing that fails or prints anything
# but DONE; prints how many listed some of the jobs but not all (one awk
# reads them; see listings).
listings_partly_cleared() {
	listings 300 -a 2>&1 |
	awk '
		$0 == "// 0" { if (n > 0 && n < 200) seen++; n = 0; listings++; next }
		/ DONE$/ { n++; next }
		{ print > "/dev/stderr"; failed = 1; exit 1 }
		END {
			if (failed) exit 1
			if (listings != 300 || n != 0) { printf "%d listings, %d lines after the last\n", listings, n > "/dev/stderr"; exit 1 }
			print seen + 0
		}'
}

@test "get -a leaves out a record that is cleared between the listing and its read" {
	# A loop links 200 complete records in and clears them all again, while
	# get -a runs many times: a job it lists may be gone when it reads it.
	local stage="$BATS_TEST_TMPDIR/stage" i seen=0 stop="$BATS_TEST_TMPDIR/stop"
	mkdir -p "$stage" "$REG"
	for i in $(seq 200); do
		printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$stage/j$i"
	done
	# (a pause of 10 ms a round leaves the listings a share of the CPU)
	sh -c 'while [ ! -e "$1" ]; do
		ln "$2"/j* "$3"/ 2>/dev/null
		jobreg-clear -q -a >/dev/null 2>&1
		sleep 0.01
	done' sh "$stop" "$stage" "$REG" 3>&- &
	BG_PIDS+=("$!")
	seen=$(listings_partly_cleared) || { : > "$stop"; false; }
	: > "$stop"
	echo "runs that saw a partly cleared registry: $seen" >&3
	[ "$seen" -gt 0 ]
}

# --- /proc that cannot be read (issue 19, A2) ----------------------------------

# dead_recycled JOB: a RUNNING record owned by pid 1 of this boot and namespaces,
# but with another start time: a recycled pid, so the owner is dead.
dead_recycled() {
	write_record "$1" version=1 status=RUNNING "since=$(now_rfc3339 -60)" owner=pid "host=$(uname -n)" \
		pid=1 pid_start=999999999 "boot_id=$(cat /proc/sys/kernel/random/boot_id)" $(ns_fields)
}

need_inject() {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1 ||
		skip "this strace cannot inject faults"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
}

@test "a dead pid owner whose /proc entry cannot be opened (EMFILE) reads UNREADABLE with exit 74, never RUNNING" {
	need_inject
	for i in 1 2 3; do dead_recycled "j$i"; done
	[ "$(jobreg-get j1)" = STALE ]
	run --separate-stderr strace -o /dev/null -P /proc/1/stat -e trace=openat -e inject=openat:error=EMFILE \
		"$JOBREG_ROOT/bin/jobreg-get" -a
	[ "$status" -eq 74 ]
	[ "$output" = $'j1 UNREADABLE\nj2 UNREADABLE\nj3 UNREADABLE' ]
	[ "${stderr_lines[0]}" = "jobreg-get: j1: read /proc/1/stat: Too many open files" ]
	run --separate-stderr strace -o /dev/null -P /proc/1/stat -e trace=openat -e inject=openat:error=ENFILE \
		"$JOBREG_ROOT/bin/jobreg-get" -j j2
	[ "$status" -eq 74 ]
	[ "$output" = '{"job": "j2", "unreadable": true}' ]
}

@test "a reader that cannot read its own boot id (EMFILE) says so and guesses no status" {
	need_inject
	dead_recycled job
	run --separate-stderr strace -o /dev/null -P /proc/sys/kernel/random/boot_id -e trace=openat \
		-e inject=openat:error=EMFILE "$JOBREG_ROOT/bin/jobreg-get" job
	[ "$status" -eq 74 ]
	[ "$output" = UNREADABLE ]
	[[ "$stderr" == "jobreg-get: job: "*"Too many open files" ]]
}

# --- -o FILE (issue 19, A12) ----------------------------------------------------

@test "get -o replacing a file keeps its mode and group" {
	jobreg-set --exit 0 job DONE
	echo old > "$T/out.prom"
	chmod 0600 "$T/out.prom"
	chgrp daemon "$T/out.prom" 2>/dev/null || true
	local group
	group=$(stat -c %G "$T/out.prom")
	jobreg-get -P -o "$T/out.prom" job
	[ "$(stat -c '%a %G' "$T/out.prom")" = "600 $group" ]
	grep -q '^jobreg_job_status' "$T/out.prom"
	chmod 0640 "$T/out.prom"
	jobreg-get -o "$T/out.prom" job
	[ "$(stat -c %a "$T/out.prom")" = 640 ]
	[ "$(cat "$T/out.prom")" = DONE ]
}

@test "get -o writes a FILE whose name has 255 bytes" {
	jobreg-set --exit 0 job DONE
	local name
	name=$(printf 'x%.0s' $(seq 249)).prom
	[ "${#name}" -eq 254 ] && name=y$name
	[ "${#name}" -eq 255 ]
	run --separate-stderr jobreg-get -o "$T/$name" job
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(cat "$T/$name")" = DONE ]
	[ "$(ls -A "$T" | grep -c '^\.')" -eq 0 ]
}

# --- memory (issue 19, B1) -------------------------------------------------------

# need_ulimit_v: skip under AddressSanitizer, whose address space ulimit -v
# cannot bound.
need_ulimit_v() {
	if ldd "$JOBREG_ROOT/bin/jobreg-get" 2>/dev/null | grep -q libasan; then
		skip "AddressSanitizer reserves terabytes of address space: ulimit -v cannot bound a SANITIZE=1 build"
	fi
}

# big_records: 2000 records of 60 KB each (hard links of one file), 120 MB in
# all.
big_records() {
	need_ulimit_v
	mkdir -p "$REG"
	{ printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nexit=0\nx-pad='
	  head -c 61000 /dev/zero | tr '\0' x
	  printf '\n'; } > "$T/big"
	python3 -c 'import os, sys
for i in range(1, 2001): os.link(sys.argv[1], "%s/j%04d" % (sys.argv[2], i))' "$T/big" "$REG"
}

@test "get -a over records of 60 KB keeps its memory to the names, not the records' contents" {
	big_records
	# 2000 x 60 KB is 120 MB: more than the 48 MB the listing may use
	run --separate-stderr bash -c 'ulimit -v 49152 && exec jobreg-get -a'
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "${#lines[@]}" -eq 2000 ]
	[ "${lines[1999]}" = "j2000 DONE" ]
}

# --- day-one rough edges (issue 19, A15) ------------------------------------------

@test "a bundled short option whose value reads as a long option asks whether that was meant" {
	run --separate-stderr jobreg-get -wait 5 x
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-get: unknown option '-wait': did you mean --wait? Try 'jobreg-get --help'." ]
	run --separate-stderr jobreg-get -status DONE -a
	[ "$status" -eq 64 ]
	[[ $stderr == *"did you mean --status?"* ]]
	run --separate-stderr jobreg-dispatch -wait 5 j true
	[ "$status" -eq 64 ]
	[[ $stderr == *"did you mean --wait?"* ]]
	# a plain bad value gets no such question
	run --separate-stderr jobreg-get -w x job
	[[ $stderr != *"did you mean"* ]]
}

@test "a value given to a long option that takes none names that option" {
	local cmd want
	for cmd in "jobreg-get --json=1 x:--json" "jobreg-get --js=1 x:--json" "jobreg-get --help=x:--help" \
		   "jobreg-set --force=1 x DONE:--force" "jobreg-clear --dry-run=1 -a:--dry-run" \
		   "jobreg-dispatch --once=1 j true:--once"; do
		want=${cmd##*:}
		# shellcheck disable=SC2086  # the command's words
		run --separate-stderr ${cmd%:*}
		[ "$status" -eq 64 ]
		[[ $stderr == *": option '$want' takes no value. Try '"*" --help'." ]] || { echo "${cmd%:*}: $stderr"; false; }
	done
	# an unknown short option is still named as itself, also inside a
	# bundle after a word that reads as such a long option
	run --separate-stderr jobreg-get --json -xq x
	[ "$stderr" = "jobreg-get: unknown option '-x'. Try 'jobreg-get --help'." ]
	run --separate-stderr jobreg-set -m --force=yes -Fq x DONE
	[ "$stderr" = "jobreg-set: unknown option '-F'. Try 'jobreg-set --help'." ]
	[ ! -e "$REG" ]
}

# --- options (issue 31, A7) ----------------------------------------------------

# operands CMD: what CMD needs after its options to go on.
operands() {
	case $1 in
	jobreg-set) echo "x DONE" ;;
	jobreg-dispatch) echo "j true" ;;
	*) echo x ;;
	esac
}

@test "a single-dash word that spells a long option asks for the two dashes, and is never read as short options" {
	local cmd opt n=0
	# -history was -h (the help, exit 0), then -i, -s ... never looked at
	run --separate-stderr jobreg-get -history x
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[[ $stderr == *"did you mean --history?"* ]]
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		for opt in $("$cmd" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
			# shellcheck disable=SC2046  # the operands are words
			run --separate-stderr "$cmd" "${opt#-}" $(operands "$cmd")
			[ "$status" -eq 64 ] || { echo "$cmd ${opt#-}: $status: $output $stderr"; false; }
			[ -z "$output" ]
			[ "${#stderr_lines[@]}" -eq 1 ]
			[ "$stderr" = "$cmd: unknown option '${opt#-}': did you mean $opt? Try '$cmd --help'." ] ||
				{ echo "$cmd ${opt#-}: $stderr"; false; }
			n=$((n + 1))
		done
	done
	[ "$n" -ge 40 ]
	# with a value after '=' too, and nothing is run or written
	run --separate-stderr jobreg-dispatch -log-size=1M j touch "$T/ran"
	[ "$status" -eq 64 ]
	[[ $stderr == *"did you mean --log-size?"* ]]
	[ ! -e "$T/ran" ]
	[ ! -e "$REG" ]
	# a bundle of short options that spells no long option is still one
	jobreg-set --exit 0 x DONE
	run --separate-stderr jobreg-get -lq x
	[ "$status" -eq 0 ]
	[[ $output == "x"$'\t'"DONE"* ]]
}

@test "a single-dash word that abbreviates a long option asks for it too, and a bundle that is one stays one" {
	local cmd
	cd "$T"
	# -hist was -h: the help, exit 0, the job never looked at
	for cmd in "jobreg-get -hist x:--history" "jobreg-get -fo=1 --log x:--follow" \
		   "jobreg-set -forc x DONE:--force" "jobreg-clear -stal x:--stale" \
		   "jobreg-dispatch -ti 5 j true:--timeout" "jobreg-dispatch -hel j true:--help" \
		   "jobreg-get -out x:--output" "jobreg-clear -dry x:--dry-run"; do
		# shellcheck disable=SC2086  # the command's words
		run --separate-stderr ${cmd%:*}
		[ "$status" -eq 64 ] || flunk "${cmd%:*}: $status $output"
		[ -z "$output" ]
		[ "$stderr" = "${cmd%% *}: unknown option '${cmd#* }': did you mean ${cmd##*:}? Try '${cmd%% *} --help'." ] ||
			[[ $stderr == "${cmd%% *}: unknown option '"*"': did you mean ${cmd##*:}? Try '${cmd%% *} --help'." ]] ||
			flunk "${cmd%:*}: $stderr"
	done
	[ ! -e "$REG" ]
	[ ! -e ut ] && [ ! -e ry ]
	# -al is -a -l (a prefix of --all, and a bundle as it stands)
	jobreg-set --exit 0 x DONE
	run --separate-stderr jobreg-get -al
	[ "$status" -eq 0 ]
	[[ $output == "x"$'\t'"DONE"* ]]
	# -ou is -o u: under three letters, a short option and its value
	run --separate-stderr jobreg-get -ou x
	[ "$status" -eq 0 ]
	[ "$(cat u)" = DONE ]
}

@test "a usage error is one short line that points to --help, not the synopsis" {
	local cmd
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		run --separate-stderr "$cmd" --bogus
		[ "$status" -eq 64 ]
		[ -z "$output" ]
		[ "$stderr" = "$cmd: unknown option '--bogus'. Try '$cmd --help'." ] || { echo "$stderr"; false; }
		run --separate-stderr "$cmd"
		[ "$status" -eq 64 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == "$cmd: "*". Try '$cmd --help'." ]] || { echo "$stderr"; false; }
		[ "${#stderr}" -lt 100 ]
	done
}

@test "a bad status list names the words a list may hold" {
	local cmd
	for cmd in "jobreg-get -s OKK -a" "jobreg-get --is OKK job" "jobreg-set --if OKK job DONE" \
		   "jobreg-clear --if OKK job"; do
		run --separate-stderr $cmd
		[ "$status" -eq 64 ]
		[[ $stderr == *"bad status list 'OKK' (PENDING, RUNNING, STALE, DONE, CANCELLED, OK, WARNING, FAILED, LATE, PAUSED, OVERDUE)"* ]] ||
			{ echo "$cmd: $stderr"; false; }
	done
}

@test "--status and --output are the long forms of -s and -o" {
	jobreg-set --exit 0 a DONE
	jobreg-set b RUNNING
	run jobreg-get --status DONE -a
	[ "$output" = "a DONE" ]
	run jobreg-get --status=RUNNING --output "$T/out" -a
	[ "$status" -eq 0 ]
	[ "$(cat "$T/out")" = "b RUNNING" ]
}

@test "get -o of records of 60 KB streams into FILE: memory bounded by the names, not the contents" {
	big_records
	run --separate-stderr bash -c 'ulimit -v 49152 && exec jobreg-get -a -j -o "$1"' _ "$T/out.json"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(wc -l < "$T/out.json")" -eq 2000 ]
}

@test "get -P gives its text as it goes: memory holds a job's values, not its series" {
	need_ulimit_v
	# The registry's path labels every series: at 3500 bytes, 1000 jobs
	# make 15,000 series and 53 MB of text, more than the 48 MB get may use.
	local deep=$T i part
	for ((i = 1; i <= 14; i++)); do printf -v part '%0250d' "$i"; deep+=/$part; done
	mkdir -p "$deep"
	cd "$deep"   # (each record's open then walks no path)
	REG=. done_records 1000
	run --separate-stderr bash -c 'set -o pipefail; ulimit -v 49152 &&
		jobreg-get -P -a -d "$1" | grep -c "^jobreg_job_runs_total{"' _ "$deep"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$output" = 1000 ]
}

# --- --report: a view for people (SPEC §5, issue 31) --------------------------

# plant_report: a registry with a job of each kind, times relative to now.
plant_report() {
	local h2 h3 m5 m8 old=2020-01-01T00:00:00Z base=$EPOCHSECONDS
	# (every time from one instant: a second ticking between two would
	# change a duration)
	TZ=UTC0 printf -v h2 '%(%Y-%m-%dT%H:%M:%SZ)T' $((base - 7800))
	TZ=UTC0 printf -v h3 '%(%Y-%m-%dT%H:%M:%SZ)T' $((base - 11400))
	TZ=UTC0 printf -v m5 '%(%Y-%m-%dT%H:%M:%SZ)T' $((base - 300))
	TZ=UTC0 printf -v m8 '%(%Y-%m-%dT%H:%M:%SZ)T' $((base - 485))
	write_record ok version=1 status=DONE "since=$m5" "started=$m8" "ended=$m5" exit=0 \
		runs=3 "last_success=$h2"
	write_record failed version=1 status=DONE "since=$m5" "started=$m5" "ended=$m5" exit=3 runs=2 \
		failures=1 consecutive_failures=1
	write_record killed version=1 status=DONE "since=$m5" "started=$m5" "ended=$m5" signal=KILL runs=1 \
		failures=1 consecutive_failures=1
	write_record timed version=1 status=DONE "since=$m5" "started=$h2" "ended=$m5" timeout=3600 exit=0 \
		timed_out=1 runs=1 failures=1 consecutive_failures=1
	write_record stale version=1 status=RUNNING "since=$old" host=build01 pid=1 "expires=$old" \
		"started=$old" runs=1
	write_record late version=1 status=PENDING "since=$h3" late_after=3600 "late_from=$h3"
	write_record running version=1 status=RUNNING "since=$m5" "started=$m5" runs=1
	write_record pending version=1 status=PENDING "since=$m5"
	# a lost run, reset by jobreg-set -a --if STALE PENDING
	write_record lost version=1 status=PENDING "since=$m5" runs=1 failures=1 lost=1 \
		consecutive_failures=1
	echo "run=1 outcome=LOST started=$old ended=$m5 host=build01 pid=1" > "$REG/.lost.history"
	printf 'starting\nhalfway\nall done\n' > "$REG/.ok.log"
	printf 'oops: \033[31mdisk full\r\n' > "$REG/.failed.log"
}

@test "get --report gives a line a job, why it is so, worst health first by id, and a summary by health" {
	plant_report
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the first word of a line is its job: worst health first, then by id
	[ "$(printf '%s\n' "${lines[@]}" | cut -d' ' -f1 | paste -sd' ' -)" = \
		"stale failed killed lost timed late ok pending running 9" ]
	local line
	for line in "stale +STALE +STALE since 2020-01-01T00:00:00Z on build01 +never ok +-$" \
		"failed +DONE +FAILED exit 3 +never ok +took 0s +oops: \\\\x1b\[31mdisk full$" \
		"killed +DONE +killed by SIGKILL " \
		"lost +PENDING +lost " \
		"timed +DONE +timed out after 1h +never ok +took 2h5m$" \
		"late +PENDING +LATE by 2h10m +never ok +-$" \
		"running +RUNNING +running for 5m[0-9]*s? +never ok +-$" \
		"pending +PENDING +pending +never ok +-$" \
		"ok +DONE +OK +last ok 2h10m ago +took 3m5s +all done$"; do
		printf '%s\n' "${lines[@]}" | grep -qE "^$line" || flunk "no line like '$line' in: $output"
	done
	[ "${lines[9]}" = "9 jobs: 1 stale, 4 failed, 1 late, 3 ok; 1 running" ]
	# the columns line up
	[ "$(printf '%s\n' "${lines[@]:0:9}" | awk '{ print index($0, $2) }' | sort -u | wc -l)" -eq 1 ]
}

@test "get --report says who cancelled a run, until when a job is paused and how many wait, and counts the running and paused" {
	write_record cancelled version=1 status=DONE since=2026-01-01T00:00:30Z \
		started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:30Z exit=143 cancelled=1 \
		cancelled_by=ops@ops01 cancelled_runs=1
	write_record held version=1 status=PENDING since=2026-01-01T00:00:00Z \
		paused_until=2999-01-01T00:00:00Z paused_by=ops@ops01 "paused_note=kernel upgrade"
	write_record okheld version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 \
		paused_until=inf paused_by=ops@ops01 "paused_note=$(printf 'x%.0s' {1..41})"
	write_record badheld version=1 status=DONE since=2026-01-01T00:00:00Z exit=2 paused_until=inf \
		consecutive_failures=1
	write_record over version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 \
		paused_until=2020-01-01T00:00:00Z
	write_record busy version=1 status=RUNNING since=2026-01-01T00:00:00Z wait_next=3 wait_head=1
	hold_place busy 1
	hold_place busy 2
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -d' ' -f1 | paste -sd' ' -)" = \
		"badheld busy cancelled held okheld over 6" ]
	local line
	for line in "badheld +DONE +FAILED exit 2, paused until resumed +never ok" \
		"cancelled +DONE +cancelled by ops@ops01 +never ok +took 30s$" \
		"held +PENDING +paused until 2999-01-01T00:00:00Z \(by ops@ops01: kernel upgrade\) +never ok" \
		"okheld +DONE +OK, paused until resumed \(by ops@ops01: x{41}\) +never ok" \
		"busy +RUNNING +running, 2 waiting +never ok" \
		"over +DONE +OK +never ok"; do
		printf '%s\n' "${lines[@]}" | grep -qE "^$line" || flunk "no line like '$line' in: $output"
	done
	[ "${lines[6]}" = "6 jobs: 1 failed, 5 ok; 1 running, 3 paused" ]
}

@test "get --report gives a time limit that is not whole seconds as it was given" {
	jobreg-dispatch -q --timeout 0.5 half sleep 5 || true
	jobreg-dispatch -q --timeout 1.5 more sleep 5 || true
	run jobreg-get --report half more
	[[ ${lines[0]} =~ ^half\ +DONE\ +timed\ out\ after\ 0.5s\  ]] || flunk "$output"
	[[ ${lines[1]} =~ ^more\ +DONE\ +timed\ out\ after\ 1.5s\  ]] || flunk "$output"
}

@test "get --report takes -s and JOBs like any listing, and -o" {
	plant_report
	run --separate-stderr jobreg-get --report -a -s FAILED,LATE
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -d' ' -f1 | paste -sd' ' -)" = "failed killed timed late 4" ]
	[ "${lines[4]}" = "4 jobs: 3 failed, 1 late" ]
	run --separate-stderr jobreg-get --report ok nosuch
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "nosuch  PENDING  pending"* ]]
	[ "${lines[2]}" = "2 jobs: 2 ok" ]
	jobreg-get --report -a -o "$T/report"
	[ "$(tail -n 1 "$T/report")" = "9 jobs: 1 stale, 4 failed, 1 late, 3 ok; 1 running" ]
	run --separate-stderr jobreg-get --report -d "$T/none" -a
	[ "$status" -eq 0 ]
	[ "$output" = "0 jobs" ]
}

@test "get --report shows a corrupt record first as CORRUPT and exits 65" {
	plant_report
	write_record broken version=1 junk
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 65 ]
	[[ "$stderr" == "jobreg-get: broken: corrupt record $REG/broken"* ]]
	[[ "${lines[0]}" =~ ^broken\ +CORRUPT\ +corrupt\ record\ +-\ +-$ ]]
	[ "${lines[10]}" = "10 jobs: 1 corrupt, 1 stale, 4 failed, 1 late, 3 ok; 1 running" ]
}

@test "get --report reads only the tail of a job's log for its last line" {
	command -v strace >/dev/null || skip "strace is not installed"
	write_record big version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	# 64 MiB of lines, then the last one
	head -c 67108864 /dev/zero | tr '\0' 'x' | fold -w 1023 > "$REG/.big.log"
	echo 'the last line' >> "$REG/.big.log"
	# (LeakSanitizer cannot run under ptrace)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -o "$T/trace" -e trace=read,pread64 jobreg-get --report big > "$T/out"
	grep -qE '^big +DONE +OK .*the last line$' "$T/out"
	# what was read: the record, and no more than a few KiB of the log
	local bytes
	bytes=$(awk -F' = ' '/^(read|pread64)\(/ { n += $NF } END { print n + 0 }' "$T/trace")
	[ "$bytes" -lt 65536 ] || flunk "read $bytes bytes"
	# a line longer than the tail: its end
	head -c 10000 /dev/zero | tr '\0' 'y' > "$REG/.big.log"
	run jobreg-get --report big
	[[ "${lines[0]}" == *" yyyy"* ]]
	[ "${#lines[0]}" -lt 300 ]
}

@test "get --report colours only a terminal, and not with NO_COLOR set" {
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	plant_report
	local esc=$'\033['
	# through a pipe: no colour
	run jobreg-get --report -a
	[[ "$output" != *"$esc"* ]]
	# on a terminal (a pty): colour, the escapes of the log line still replaced
	run script -qec "jobreg-get --report -a" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *"${esc}1;31mFAILED exit 3${esc}0m"* ]]
	[[ "$output" == *"${esc}32mOK${esc}0m"* ]]
	[[ "$output" == *'oops: \x1b[31mdisk full'* ]]
	# NO_COLOR, even empty, and -o: none
	# shellcheck disable=SC1007  # an empty NO_COLOR, on purpose
	NO_COLOR= run script -qec "jobreg-get --report -a" /dev/null
	[ "$status" -eq 0 ]
	[[ "$output" == *"FAILED exit 3"* ]]
	[[ "$output" != *"$esc"* ]]
	NO_COLOR=1 run script -qec "jobreg-get --report -a" /dev/null
	[[ "$output" != *"$esc"* ]]
	run script -qec "jobreg-get --report -a -o '$T/file'" /dev/null
	[ "$status" -eq 0 ]
	[ -s "$T/file" ]
	if grep -qF "$esc" "$T/file"; then flunk "colour in -o FILE"; fi
}

@test "get --report with -l, -j, -P, --is or --history is a usage error" {
	local args
	for args in "--report -l -a" "--report -j -a" "-P --report -a" "--report --is OK job" \
		"--report --history job"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-get $args
		[ "$status" -eq 64 ] || flunk "jobreg-get $args: exit $status"
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == *--report* ]] || flunk "jobreg-get $args: $stderr"
	done
}

@test "get --report tells a lost last run from a failed one by the history, and reports a history it cannot read" {
	write_record reset version=1 status=PENDING since=2026-01-01T00:00:00Z runs=2 failures=1 \
		consecutive_failures=1
	echo "run=2 outcome=FAILED started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z exit=1" > "$REG/.reset.history"
	write_record lost version=1 status=DONE since=2026-01-01T00:00:00Z runs=1 failures=1 lost=1 \
		consecutive_failures=1
	printf 'run=1 outcome=LOST started=2026-01-01T00:00:00Z ended=2026-01-01T00:00:00Z\n' > "$REG/.lost.history"
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^lost\ +DONE\ +lost\  ]]
	[[ "${lines[1]}" =~ ^reset\ +PENDING\ +failed\  ]]
	[ "${lines[2]}" = "2 jobs: 2 failed" ]
	rm "$REG/.lost.history"
	mkdir "$REG/.lost.history"
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 77 ]
	[ "$stderr" = "jobreg-get: lost: not a regular file: $REG/.lost.history" ]
	[[ "${lines[0]}" =~ ^lost\ +DONE\ +failed\  ]]
	[ "${lines[2]}" = "2 jobs: 2 failed" ]
}
