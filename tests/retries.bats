#!/usr/bin/env bats
# jobreg-dispatch --retries (SPEC §5 Retries): each attempt a run of its own, the
# run lock held across attempts, the delay doubling up to an hour, and no retry
# after 126/127 or after dispatch was told to stop.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# flaky N: a command that fails until its Nth attempt, noting each in $T/attempts.
flaky() {
	cat > "$T/flaky" <<-'EOF'
	#!/bin/sh
	echo "$JOBREG_ATTEMPT $JOBREG_RUN" >> "$1/attempts"
	[ "$JOBREG_ATTEMPT" -ge "$2" ]
	EOF
	chmod +x "$T/flaky"
}

@test "a FAILED run is run again: each attempt a run, with JOBREG_ATTEMPT and a new JOBREG_RUN" {
	flaky
	run --separate-stderr jobreg-dispatch --retries 2 --retry-delay 0.1 job "$T/flaky" "$T" 3
	[ "$status" -eq 0 ]
	[ "$(cat "$T/attempts")" = $'1 1\n2 2\n3 3' ]
	[ "${stderr_lines[0]}" = "jobreg-dispatch: job: attempt 1 failed; attempt 2 in 0.1s" ]
	[ "${stderr_lines[1]}" = "jobreg-dispatch: job: attempt 2 failed; attempt 3 in 0.2s" ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 0 ]
	[ "$(field job attempt)" = 3 ]
	[ "$(field job runs)" = 3 ]
	[ "$(field job failures)" = 2 ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(sed 's/ started=.*//' "$REG/.job.history")" = $'run=1 outcome=FAILED attempt=1\nrun=2 outcome=FAILED attempt=2\nrun=3 outcome=OK attempt=3' ]
}

@test "the last attempt's result stands when the retries run out" {
	flaky
	run --separate-stderr jobreg-dispatch -q --retries 1 --retry-delay 0.1 job "$T/flaky" "$T" 9
	[ "$status" -eq 1 ]
	[ "$(field job exit)" = 1 ]
	[ "$(field job failures)" = 2 ]
	[ "$(field job consecutive_failures)" = 2 ]
}

@test "the delay doubles from --retry-delay, and is never more than an hour" {
	flaky
	t0=$EPOCHREALTIME
	jobreg-dispatch -q --retries 2 --retry-delay 0.5 job "$T/flaky" "$T" 9 || true
	elapsed_between "$t0" 1.5 4   # (three attempts)
	# 2 hours asked: an hour waited; TERM during the wait ends it
	jobreg-dispatch --retries 1 --retry-delay 2h long sh -c 'exit 6' 3>&- 2>"$T/err" &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'attempt 2 in 3600s' "$T/err"
	kill -TERM "$d"
	wait_bg "$d"
	[ "$BG_RC" = 6 ]
}

@test "between attempts the record is RUNNING with attempt and retry_at; others wait or are refused" {
	( exec jobreg-dispatch -q --retries 1 --retry-delay 3 job sh -c '[ -e "$1/ok" ] || { touch "$1/ok"; exit 3; }' sh "$T" ) 3>&- &
	d=$!
	BG_PIDS+=("$d")
	poll_until eval '[ -n "$(field job retry_at)" ]'
	[ "$(field job status)" = RUNNING ]
	[ "$(field job attempt)" = 1 ]
	[ "$(jobreg-get job)" = RUNNING ]
	run jobreg-dispatch job true
	[ "$status" -eq 75 ]
	# a --once caller waits for the final result
	run jobreg-dispatch --once job sh -c 'echo ran >> "$1/once"' sh "$T"
	[ "$status" -eq 0 ]
	[ ! -e "$T/once" ]
	wait_bg "$d"
	[ "$BG_RC" = 0 ]
	[ "$(field job attempt)" = 2 ]
}

@test "no retry after 127 (not found) or 126 (not executable)" {
	run -127 jobreg-dispatch -q --retries 3 --retry-delay 0.1 job /nonexistent
	[ "$(field job runs)" = 1 ]
	: > "$T/noexec"
	run -126 jobreg-dispatch -q --retries 3 --retry-delay 0.1 other "$T/noexec"
	[ "$(field other runs)" = 1 ]
}

@test "no retry when the command itself exits 127 or 126" {
	run -127 jobreg-dispatch -q --retries 2 --retry-delay 0 job sh -c 'exit 127'
	[ "$(field job runs)" = 1 ]
	run -126 jobreg-dispatch -q --retries 2 --retry-delay 0 other sh -c 'exit 126'
	[ "$(field other runs)" = 1 ]
}

@test "kill -9 of dispatch during the delay: the failed attempt is counted once, and no run was lost" {
	( exec jobreg-dispatch --retries 2 --retry-delay 30 job false ) 3>&- 2>"$T/err" &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'attempt 2 in' "$T/err"
	kill -KILL "$d"
	wait "$d" 2>/dev/null || true
	[ "$(jobreg-get job)" = STALE ]
	jobreg-dispatch -q job true
	[ "$(field job failures)" = 1 ]
	[ -z "$(field job lost)" ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(cut -d ' ' -f 1-2 "$REG/.job.history")" = $'run=1 outcome=FAILED\nrun=2 outcome=OK' ]
}

@test "JOBREG_ATTEMPT is only the dispatch's own: not passed on from the caller without --retries" {
	JOBREG_ATTEMPT=9 run jobreg-dispatch job sh -c 'echo "${JOBREG_ATTEMPT-unset}"'
	[ "$output" = unset ]
	JOBREG_ATTEMPT=9 run jobreg-dispatch --retries 0 --retry-delay 5 job sh -c 'echo "${JOBREG_ATTEMPT-unset}"'
	[ "$status" -eq 0 ]
	[ "$output" = unset ]
}

@test "TERM during an attempt ends the run: no retry, that attempt's result recorded and returned" {
	jobreg-dispatch --retries 3 --retry-delay 0.1 job sh -c 'trap "exit 7" TERM; touch "$1/started"; while :; do sleep 0.05; done' sh "$T" 3>&- 2>/dev/null &
	d=$!
	BG_PIDS+=("$d")
	poll_until test -e "$T/started"
	kill -TERM "$d"
	wait_bg "$d"
	[ "$BG_RC" = 7 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 7 ]
	[ "$(field job runs)" = 1 ]
}

@test "TERM during the delay ends it: the last attempt's result recorded once and returned" {
	jobreg-dispatch --retries 3 --retry-delay 30 job sh -c 'exit 5' 3>&- 2>"$T/err" &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'attempt 2 in' "$T/err"
	kill -TERM "$d"
	wait_bg "$d"
	[ "$BG_RC" = 5 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 5 ]
	[ -z "$(field job retry_at)" ]
	[ "$(field job failures)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
	[ "$(wc -l < "$REG/.job.history")" -eq 1 ]
}

@test "--timeout holds for each attempt" {
	run jobreg-dispatch -q --retries 1 --retry-delay 0.1 --timeout 0.3 job sleep 5
	[ "$status" -eq 124 ]
	[ "$(field job runs)" = 2 ]
	[ "$(field job timed_out)" = 1 ]
	[ "$(grep -c 'timed_out=1' "$REG/.job.history")" -eq 2 ]
}

@test "bad --retries or --retry-delay, or --retry-delay alone, are usage errors (64)" {
	for args in "--retries x" "--retries 1001" "--retries 1 --retry-delay soon" "--retry-delay 5"; do
		run --separate-stderr jobreg-dispatch $args job true
		[ "$status" -eq 64 ] || flunk "$args: $status"
	done
	[ ! -e "$REG" ]
}

@test "a cancel between attempts ends the retries and takes nothing back: the failed attempt stands in the record, the history and the counters" {
	jobreg-dispatch --retries 3 --retry-delay 30 job sh -c 'exit 3' 3>&- 2>"$T/err" &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'attempt 2 in' "$T/err"
	jobreg-get -P job | grep '^jobreg_job_failures_total' >"$T/before"
	[ "$(cut -d ' ' -f 2 "$T/before")" = 1 ]
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	wait_bg "$d"
	[ "$BG_RC" = 3 ]
	grep -qx "jobreg-dispatch: job: retries cancelled by $(id -un)@$HOST" "$T/err"
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 3 ]
	[ "$(field job runs)" = 1 ]
	[ "$(field job failures)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
	[ "$(field job retries_cancelled_by)" = "$(id -un)@$HOST" ]
	[ -z "$(field job cancelled)" ]
	[ -z "$(field job cancelled_runs)" ]
	[ -z "$(grep '^cancel_' "$REG/job")" ]
	[ "$(cut -d ' ' -f 1-2 "$REG/.job.history")" = "run=1 outcome=FAILED" ]
	jobreg-get --is FAILED job
	# no counter went down
	jobreg-get -P job | grep '^jobreg_job_failures_total' | cmp - "$T/before"
}
