#!/usr/bin/env bats
# The run history and lost runs (SPEC §2 Lost runs, §3a): DIR/.JOB.history,
# keep_runs, jobreg-get --history, and a lost run counted as a failure on every
# path that replaces a STALE record.  (The crash rule: faults.bats, crash points.)
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# hist JOB: the history's lines as "RUN:OUTCOME", space-separated.
hist() {
	sed -n 's/^run=\([0-9]*\) outcome=\([A-Z]*\).*/\1:\2/p' "$REG/.$1.history" 2>/dev/null | tr '\n' ' '
}

# ---- what a run leaves ---------------------------------------------------------

@test "a dispatched run adds its line: run, outcome, started, ended, duration, exit, host, pid" {
	jobreg-dispatch job sh -c 'sleep 1.1'
	jobreg-dispatch job sh -c 'exit 3' || true
	[ "$(hist job)" = "1:OK 2:FAILED " ]
	line=$(sed -n 1p "$REG/.job.history")
	[[ $line =~ ^run=1\ outcome=OK\ started=[0-9T:Z-]+\ ended=[0-9T:Z-]+\ duration=[12]\ exit=0\ host=$HOST\ pid=[0-9]+$ ]] ||
		flunk "line: $line"
	[[ $(sed -n 2p "$REG/.job.history") == *" exit=3 host=$HOST "* ]]
}

@test "a run killed by a signal, or by its time limit, has those in its line" {
	jobreg-dispatch job sh -c 'kill -TERM $$' || true
	jobreg-dispatch --timeout 0.2 job sleep 5 || true
	[[ $(sed -n 1p "$REG/.job.history") == *" outcome=FAILED "*" signal=TERM "* ]]
	[[ $(sed -n 2p "$REG/.job.history") == *" signal=TERM timed_out=1 "* ]]
}

@test "the history keeps the last keep_runs runs, oldest first: 20 by default, --keep-runs N, 0 none" {
	for i in $(seq 23); do jobreg-dispatch job true; done
	[ "$(wc -l < "$REG/.job.history")" -eq 20 ]
	[[ $(head -n 1 "$REG/.job.history") == run=4\ * ]]
	[[ $(tail -n 1 "$REG/.job.history") == run=23\ * ]]
	jobreg-dispatch --keep-runs 3 job true
	[ "$(field job keep_runs)" = 3 ]
	[ "$(hist job)" = "22:OK 23:OK 24:OK " ]
	jobreg-set --keep-runs 20 job PENDING
	[ -z "$(field job keep_runs)" ]
	jobreg-set --keep-runs 0 job RUNNING
	jobreg-set --exit 0 job DONE
	[ ! -e "$REG/.job.history" ]
	run jobreg-set --keep-runs 10001 job DONE
	[ "$status" -eq 64 ]
}

@test "set --exit N DONE ends the run it names; DONE without --exit or over no run adds no line" {
	jobreg-set job RUNNING
	jobreg-set --exit 4 job DONE
	[ "$(hist job)" = "1:FAILED " ]
	jobreg-set job RUNNING
	jobreg-set job DONE
	[ "$(hist job)" = "1:FAILED " ]
	jobreg-set --exit 0 fresh DONE
	[ ! -e "$REG/.fresh.history" ]
}

@test "setting the result of a run again changes its line, never adds a second, nor counts it again" {
	jobreg-dispatch job sh -c 'exit 2' || true
	jobreg-set --exit 3 job DONE
	[ "$(hist job)" = "1:FAILED " ]
	[ "$(field job failures)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
	jobreg-set --exit 0 job DONE
	[ "$(hist job)" = "1:OK " ]
	[ "$(field job exit)" = 0 ]
	[ -z "$(field job failures)" ]   # the run did not fail after all
	[ -z "$(field job consecutive_failures)" ]
	[ "$(field job last_success)" = "$(field job ended)" ]
	[ "$(field job last_success_started)" = "$(field job started)" ]
}

# ok_run_5 JOB: a DONE record of OK run 5 and its history: run 3 OK, run 4
# FAILED, run 5 OK.
ok_run_5() {
	write_record "$1" version=1 status=DONE since=2026-12-05T05:00:09Z started=2026-12-05T05:00:00Z \
		ended=2026-12-05T05:00:09Z exit=0 runs=5 failures=7 \
		last_success=2026-12-05T05:00:09Z last_success_started=2026-12-05T05:00:00Z
	printf '%s\n' \
		'run=3 outcome=OK started=2026-12-05T03:00:00Z ended=2026-12-05T03:00:05Z duration=5 exit=0' \
		'run=4 outcome=FAILED started=2026-12-05T04:00:00Z ended=2026-12-05T04:00:01Z duration=1 exit=2' \
		'run=5 outcome=OK started=2026-12-05T05:00:00Z ended=2026-12-05T05:00:09Z duration=9 exit=0' \
		> "$REG/.$1.history"
}

@test "corrections of one run count its failure once; last_success follows its final result" {
	ok_run_5 job
	local e
	for e in 1 0 1 0 1; do jobreg-set --exit "$e" job DONE; done
	[ "$(hist job)" = "3:OK 4:FAILED 5:FAILED " ]
	[ "$(field job failures)" = 8 ]
	# as they were before run 5: run 3 the last OK, run 4 failed since
	[ "$(field job consecutive_failures)" = 2 ]
	[ "$(field job last_success)" = 2026-12-05T03:00:05Z ]
	[ "$(field job last_success_started)" = 2026-12-05T03:00:00Z ]
	[ "$(field job last_success_run)" = 3 ]
	jobreg-set --exit 0 job DONE
	[ "$(hist job)" = "3:OK 4:FAILED 5:OK " ]
	[ "$(field job failures)" = 7 ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(field job last_success)" = "$(field job ended)" ]
	[ "$(field job last_success_started)" = 2026-12-05T05:00:00Z ]
	[ "$(field job last_success_run)" = 5 ]
	# OK again over OK: nothing moves
	jobreg-set --exit 0 job DONE
	[ "$(field job failures)" = 7 ]
}

@test "set --exit 0 over an attempt waiting for its retry takes back the failure counted when it ended" {
	write_record job version=1 status=RUNNING "since=$(now_rfc3339)" "started=$(now_rfc3339 -5)" \
		attempt=1 "retry_at=$(now_rfc3339 60)" runs=3 failures=2 consecutive_failures=2
	jobreg-set --exit 0 job DONE
	[ "$(field job failures)" = 1 ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(field job last_success)" = "$(field job ended)" ]
	[ "$(hist job)" = "3:OK " ]
}

@test "an OK run corrected to FAILED with no OK run before it in the history has no last_success" {
	ok_run_5 job
	sed -i 3d "$REG/.job.history"   # run 5's line
	sed -i 1d "$REG/.job.history"   # run 3's
	jobreg-set --exit 9 job DONE
	[ -z "$(field job last_success)" ]
	[ -z "$(field job last_success_started)" ]
	[ -z "$(field job last_success_run)" ]
	[ "$(field job consecutive_failures)" = 2 ]
	[ "$(hist job)" = "4:FAILED 5:FAILED " ]
}

@test "a WARNING run corrected to FAILED gives back the last success's run number and kind (SPEC §3, §5d)" {
	jobreg-dispatch job true
	jobreg-dispatch --warn-exit 24 job sh -c 'exit 24'
	[ "$(field job last_success_run)" = 2 ]
	[ "$(field job last_success_warning)" = 1 ]
	jobreg-set --exit 3 job DONE
	[ "$(hist job)" = "1:OK 2:FAILED " ]
	[ "$(field job last_success_run)" = 1 ]
	[ -z "$(field job last_success_warning)" ]
	[ "$(field job consecutive_failures)" = 1 ]
}

@test "an OK run corrected to FAILED counts its failure, once" {
	jobreg-dispatch job true
	jobreg-set --exit 3 job DONE
	jobreg-set --exit 4 job DONE
	[ "$(hist job)" = "1:FAILED " ]
	[ "$(field job failures)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
}

@test "a heartbeat that comes after its TTL ran out renews the run: nothing is lost" {
	jobreg-set --owner $$ --ttl 1 job RUNNING
	poll_until eval '[ "$(jobreg-get job)" = STALE ]'
	jobreg-set --owner $$ --ttl 60 job RUNNING
	[ "$(jobreg-get job)" = RUNNING ]
	[ "$(field job runs)" = 1 ]
	jobreg-set --exit 0 job DONE
	[ -z "$(field job failures)" ]
	[ -z "$(field job lost)" ]
	[ "$(hist job)" = "1:OK " ]
}

@test "get --history prints each job's runs as tab-separated lines, -l the same, -j as objects" {
	jobreg-dispatch a true
	jobreg-dispatch a sh -c 'kill -KILL $$' || true
	jobreg-dispatch b sh -c 'exit 5' || true
	run --separate-stderr jobreg-get --history a b none
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} =~ ^a$'\t'1$'\t'OK$'\t'[0-9T:Z-]+$'\t'[0-9T:Z-]+$'\t'[0-9]+$'\t'0$'\t'$HOST$'\t'[0-9]+$ ]] ||
		flunk "${lines[0]}"
	[ "$(cut -f1-3,7 <<< "${lines[1]}")" = $'a\t2\tFAILED\tSIGKILL' ]
	[ "$(cut -f1-3,7 <<< "${lines[2]}")" = $'b\t1\tFAILED\t5' ]
	[ "$(jobreg-get -l --history a b)" = "$output" ]
	run --separate-stderr jobreg-get -j --history b
	[[ $output =~ ^\{\"job\":\ \"b\",\ \"run\":\ 1,\ \"outcome\":\ \"FAILED\",.*\"duration\":\ [0-9]+,\ \"exit\":\ 5,\ \"host\":\ \"$HOST\",\ \"pid\":\ [0-9]+\}$ ]] ||
		flunk "$output"
	run jobreg-get --history -a
	[ "$status" -eq 64 ]
}

# strict_json_lines [--sort]: each JSON line of stdin read back as strict UTF-8
# with no member twice, and printed again (keys sorted with --sort); fails
# on the first line that is not so.
strict_json_lines() {
	python3 -c '
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)
for l in sys.stdin.buffer:
    print(json.dumps(json.loads(l.decode("utf-8"), object_pairs_hook=once), sort_keys=sys.argv[1:] == ["--sort"]))' "$@"
}

@test "get -j --history of a damaged or hand-edited line is valid JSON: bad bytes escaped, a NUL whole, each key once" {
	command -v python3 >/dev/null 2>&1 || skip "python3 is needed to check the JSON"
	mkdir -p "$REG"
	printf 'run=2 outcome=OK run=3 host=a\xffb note=x\0y exit=7 exit=8 \xc3=\xe2\x82 job=b timed_out=1\n' > "$REG/.a.history"
	printf 'run=4 outcome=FAILED\n' >> "$REG/.a.history"
	run --separate-stderr jobreg-get -j --history a
	[ "$status" -eq 0 ]
	# strict UTF-8, and no member twice
	run strict_json_lines --sort <<< "$output"
	[ "$status" -eq 0 ] || flunk "$output"
	[ "${lines[0]}" = '{"exit": 7, "host": "a\ufffdb", "job": "a", "note": "x\u0000y", "outcome": "OK", "run": 2, "timed_out": true, "\ufffd": "\ufffd\ufffd"}' ] ||
		flunk "${lines[0]}"
	[ "${lines[1]}" = '{"job": "a", "outcome": "FAILED", "run": 4}' ]
}

@test "get -j --history: keys that read alike with U+FFFD (bad bytes, or U+FFFD itself) are one member, its first value" {
	command -v python3 >/dev/null 2>&1 || skip "python3 is needed to check the JSON"
	mkdir -p "$REG"
	printf 'run=1 \xff=1 \xfe=2 \xef\xbf\xbd=5 a\xff=3 a\xc3=4 outcome=OK\n' > "$REG/.a.history"
	run --separate-stderr jobreg-get -j --history a
	[ "$status" -eq 0 ]
	run strict_json_lines <<< "$output"
	[ "$status" -eq 0 ] || flunk "$output"
	[ "$output" = '{"job": "a", "run": 1, "\ufffd": "1", "a\ufffd": "3", "outcome": "OK"}' ] || flunk "$output"
}

@test "a correction whose record is in place but not its line (a crash between them) has its line put right by the next write" {
	jobreg-dispatch job true
	jobreg-dispatch job false || true
	cp "$REG/.job.history" "$T/before"
	jobreg-set --exit 0 job DONE
	# the state a crash after the record's rename leaves
	cp "$T/before" "$REG/.job.history"
	grep -q '^run=2 outcome=FAILED ' "$REG/.job.history"
	jobreg-dispatch job true
	run jobreg-get --history job
	[ "$(cut -f2,3 <<< "$output")" = $'1\tOK\n2\tOK\n3\tOK' ] || flunk "$output"
	# and the other way: an OK run corrected to FAILED
	cp "$REG/.job.history" "$T/before"
	jobreg-set --exit 3 job DONE
	cp "$T/before" "$REG/.job.history"
	jobreg-set job PENDING
	run jobreg-get --history job
	[ "$(cut -f2,3,7 <<< "$output")" = $'1\tOK\t0\n2\tOK\t0\n3\tFAILED\t3' ] || flunk "$output"
}

@test "a history over 8 MiB never stops a run: it is begun again, with a warning, and the run's line recorded" {
	jobreg-dispatch job true
	head -c 9000000 /dev/zero | tr '\0' x >> "$REG/.job.history"
	run --separate-stderr jobreg-dispatch job touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -eq 0 ]
	[ -e "$BATS_TEST_TMPDIR/ran" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ ${stderr_lines[0]} == "jobreg-dispatch: job: $REG/.job.history is over 8388608 bytes: begun again" ]] ||
		flunk "$stderr"
	# run 1's line again (put back by the next write), and run 2's
	[ "$(hist job)" = "1:OK 2:OK " ]
	jobreg-dispatch job true
	[ "$(hist job)" = "1:OK 2:OK 3:OK " ]
}

@test "damaged lines of a history are left out when it is next written, with a warning" {
	jobreg-dispatch job true
	printf 'hand-written\nrun=x outcome=OK\nrun=7 host=\xff\nrun=8 a=\0\n' >> "$REG/.job.history"
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: job: $REG/.job.history: 4 damaged lines left out" ] || flunk "$stderr"
	[ "$(hist job)" = "1:OK 2:OK " ]
	[ "$(wc -l < "$REG/.job.history")" -eq 2 ]
	run --separate-stderr jobreg-dispatch job true
	[ -z "$stderr" ]
}

@test "clear, and dispatch --clear, remove the history with the record" {
	jobreg-dispatch job true
	[ -e "$REG/.job.history" ]
	jobreg-clear job
	[ ! -e "$REG/.job.history" ]
	jobreg-dispatch job true
	jobreg-dispatch --clear job true
	[ ! -e "$REG/job" ]
	[ ! -e "$REG/.job.history" ]
}

@test "get -a reads no history and no log" {
	command -v strace >/dev/null 2>&1 || skip "strace is not installed"
	jobreg-dispatch --log a true
	jobreg-dispatch --log b sh -c 'exit 1' || true
	jobreg-dispatch --log b true
	traced -o "$T/trace" -e trace=openat jobreg-get -a >/dev/null
	! grep -E '\.(history|log|faillog)"' "$T/trace"
}

# ---- lost runs (SPEC §2) --------------------------------------------------------

@test "a dispatched run killed with its command is a lost run when the next dispatch takes it over" {
	jobreg-dispatch job true
	( exec jobreg-dispatch job sh -c 'touch "$1/started"; exec sleep 60' sh "$T" ) 3>&- >/dev/null 2>&1 &
	d=$!
	# the command is running (a kill before dispatch forks it would miss it)
	poll_until test -e "$T/started"
	kill_run "$d"
	wait "$d" 2>/dev/null || true
	poll_until eval '[ "$(jobreg-get job)" = STALE ]'
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 0 ]
	[[ $stderr == "jobreg-dispatch: job: taking over stale run "* ]]
	[ "$(field job failures)" = 1 ]
	[ "$(field job lost)" = 1 ]
	[ -z "$(field job consecutive_failures)" ]   # the run that took over succeeded
	[ "$(hist job)" = "1:OK 2:LOST 3:OK " ]
	[[ $(sed -n 2p "$REG/.job.history") =~ ^run=2\ outcome=LOST\ started=[^\ ]+\ ended=[^\ ]+\ host=$HOST\ pid=[0-9]+$ ]]
	run jobreg-get -P job
	grep -qx "jobreg_job_lost_runs_total{name=\"job\",registry=\"$REG\"} 1" <<< "$output"
}

@test "set RUNNING over a dead pid owner counts the lost run; consecutive failures add up" {
	stale_record job runs=4
	jobreg-set job RUNNING
	[ "$(field job failures)" = 1 ]
	[ "$(field job lost)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
	[ "$(field job runs)" = 5 ]
	[ "$(hist job)" = "4:LOST " ]
	jobreg-set --exit 1 job DONE
	[ "$(field job consecutive_failures)" = 2 ]
	[ "$(field job failures)" = 2 ]
	[ "$(hist job)" = "4:LOST 5:FAILED " ]
}

@test "set PENDING over a record of another boot of this host (a reboot) counts the lost run" {
	write_record job version=1 status=RUNNING "since=$(now_rfc3339 -60)" owner=pid "host=$HOST" \
		pid=1 pid_start=1 boot_id=00000000-1111-2222-3333-444444444444 "started=$(now_rfc3339 -60)" runs=2
	[ "$(jobreg-get job)" = STALE ]
	jobreg-set job PENDING
	[ "$(field job status)" = PENDING ]
	[ "$(field job lost)" = 1 ]
	[ "$(hist job)" = "2:LOST " ]
}

@test "set DONE without --exit over an expired TTL counts the lost run; --exit N records N instead" {
	write_record job version=1 status=RUNNING "since=$(now_rfc3339 -60)" "expires=$(now_rfc3339 -5)" \
		"started=$(now_rfc3339 -60)" runs=3
	[ "$(jobreg-get job)" = STALE ]
	jobreg-set job DONE
	[ "$(field job lost)" = 1 ]
	[ "$(field job failures)" = 1 ]
	[ "$(hist job)" = "3:LOST " ]
	write_record other version=1 status=RUNNING "since=$(now_rfc3339 -60)" "expires=$(now_rfc3339 -5)" \
		"started=$(now_rfc3339 -60)" runs=7
	jobreg-set --exit 3 other DONE
	[ -z "$(field other lost)" ]
	[ "$(field other failures)" = 1 ]
	[ "$(field other exit)" = 3 ]
	[ "$(hist other)" = "7:FAILED " ]
}

@test "a live run reset to PENDING or DONE is not a lost run" {
	jobreg-set job RUNNING
	jobreg-set job PENDING
	[ -z "$(field job lost)" ]
	[ -z "$(field job failures)" ]
	[ ! -e "$REG/.job.history" ]
}
