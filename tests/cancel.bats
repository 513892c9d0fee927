#!/usr/bin/env bats
# jobreg-set --cancel, the canceller's side: SPEC §2 Cancelled runs, §3 (the
# cancel_* keys), §5 jobreg-set --cancel, §5a Cancelling, §7.

bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# fake_dispatch JOB: a stand-in for a live run's dispatcher: flock(1) holds
# DIR/.JOB.run (FLOCK_PID) for a shell (DISP_PID) that notes each SIGURG it
# gets in $T/urg.JOB; the record is RUNNING owner=lock naming that shell
# with this host, boot and namespaces, run 3.
fake_dispatch() {
	local job=$1 t
	mkdir -p "$REG"
	: > "$REG/.$job.run"
	flock "$REG/.$job.run" bash -c 'trap "echo urg >> \"\$0\"" URG; : > "$1"
		while [ ! -e "$2" ]; do sleep 0.1; done' "$T/urg.$job" "$T/ready.$job" "$T/release" \
		3>&- >/dev/null 2>&1 &
	FLOCK_PID=$!
	BG_PIDS+=("$FLOCK_PID")
	poll_until test -e "$T/ready.$job"
	read -r DISP_PID _ < "/proc/$FLOCK_PID/task/$FLOCK_PID/children" || [ -n "$DISP_PID" ]
	t=$(now_rfc3339 -30)
	write_record "$job" version=1 status=RUNNING "since=$t" owner=lock "host=$HOST" \
		"pid=$DISP_PID" "pid_start=$(pid_start "$DISP_PID")" "boot_id=$BOOT_ID" $(ns_fields) \
		"run_lock=$(stat -c %i "$REG/.$job.run")" "started=$t" runs=3
}

# answer JOB [end]: a stand-in for the dispatcher's answer: once JOB's record
# holds a request, it adds cancel_seen (with "end", it writes the run's DONE
# record instead, after half a second).
answer() {
	local job=$1 how=${2:-seen}
	(
		until grep -q '^cancel_run=' "$REG/$job"; do nap 0.02; done
		if [ "$how" = end ]; then
			nap 0.5
			printf '%s\n' version=1 status=DONE "since=$(now_rfc3339)" "host=$HOST" \
				"started=$(now_rfc3339 -30)" "ended=$(now_rfc3339)" signal=TERM cancelled=1 \
				cancelled_by=x@y runs=3 cancelled_runs=1 > "$REG/.$job.answer"
		else
			{ cat "$REG/$job"; echo "cancel_seen=$(now_rfc3339)"; } > "$REG/.$job.answer"
		fi
		mv "$REG/.$job.answer" "$REG/$job"
	) 3>&- &
	BG_PIDS+=("$!")
}

# --- the request --------------------------------------------------------------

@test "cancel writes the request for the live run: cancel_run its number, TERM, 10 s, by user@host, at now; the status stays RUNNING" {
	fake_dispatch job
	answer job
	local before=$EPOCHSECONDS
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	[ -z "$stderr" ]
	[ "$(field job status)" = RUNNING ]
	[ "$(field job cancel_run)" = 3 ]
	[ "$(field job cancel_signal)" = TERM ]
	[ "$(field job cancel_kill_after)" = 10 ]
	[ "$(field job cancel_by)" = "$(me)" ]
	local at
	at=$(date -u -d "$(field job cancel_at)" +%s)
	[ "$at" -ge "$before" ] && [ "$at" -le "$EPOCHSECONDS" ]
	[ "$(jobreg-get job)" = RUNNING ]
}

@test "cancel --signal and --kill-after are written as a signal name and seconds" {
	fake_dispatch job
	answer job
	run --separate-stderr jobreg-set --cancel --signal 2 --kill-after 1.5m job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	[ "$(field job cancel_signal)" = INT ]
	[ "$(field job cancel_kill_after)" = 90 ]
}

@test "cancel -m replaces the record's note in the same write" {
	fake_dispatch job
	answer job
	run --separate-stderr jobreg-set --cancel -m 'wrong branch' job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	[ "$(field job note)" = 'wrong branch' ]
}

@test "cancelling again replaces the request, its cancel_seen dropped until the dispatcher answers again" {
	fake_dispatch job
	answer job
	jobreg-set --cancel job
	[ -n "$(field job cancel_seen)" ]
	run --separate-stderr jobreg-set --cancel --signal KILL --kill-after 1 job
	[ "$status" -eq 75 ]
	[ "$(field job cancel_signal)" = KILL ]
	[ "$(field job cancel_kill_after)" = 1 ]
	[ -z "$(field job cancel_seen)" ]
	[ "$(grep -c '^cancel_run=' "$REG/job")" -eq 1 ]
}

# --- the answer ---------------------------------------------------------------

# bats test_tags=serial
@test "cancel exits 0 as soon as the dispatcher writes cancel_seen" {
	fake_dispatch job
	answer job
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	# (an answer, not the 2 s of no answer; slack for a loaded or sanitized run)
	elapsed_between "$t0" 0 2
}

# bats test_tags=serial
@test "no answer within 2 s: one line naming the host and the pids holding the run lock, exit 75, the request stays" {
	fake_dispatch job
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 75 ]
	one_line
	# (the holders in pid order, which a wrapped pid counter may change)
	[[ "$stderr" == "jobreg-set: job: run 3: no answer from its dispatcher on $HOST within 2 s (run lock held by pids "*"); the request stays" &&
	   "$stderr" == *"pids "*"$FLOCK_PID"*")"* && "$stderr" == *"pids "*"$DISP_PID"*")"* ]] ||
		flunk "$stderr"
	elapsed_between "$t0" 2 5
	[ "$(field job cancel_run)" = 3 ]
	[ "$(field job status)" = RUNNING ]
}

@test "a run that ends before its dispatcher takes the request up was not cancelled: 1, saying so" {
	fake_dispatch job
	# the run ends on its own, with the request unseen: DONE, OK, not cancelled
	(
		until grep -q '^cancel_run=' "$REG/job"; do nap 0.02; done
		nap 0.3
		printf '%s\n' version=1 status=DONE "since=$(now_rfc3339)" "host=$HOST" \
			"started=$(now_rfc3339 -30)" "ended=$(now_rfc3339)" exit=0 runs=3 >"$REG/.job.answer"
		mv "$REG/.job.answer" "$REG/job"
	) 3>&- &
	BG_PIDS+=("$!")
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 1 ]
	[ "$stderr" = "jobreg-set: job: run 3 ended before the cancel reached it" ]
	# one that ends cancelled, its request seen or not, was cancelled: 0
	: >"$T/release"
	wait_bg "$FLOCK_PID"
	rm "$T/release"
	fake_dispatch other
	answer other end
	run --separate-stderr jobreg-set --cancel other
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
}

@test "cancel --wait returns once the run has ended, not when the request is seen" {
	fake_dispatch job
	answer job end
	run --separate-stderr jobreg-set --cancel --wait 10 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	[ "$(field job status)" = DONE ]
}

# bats test_tags=serial
@test "cancel --wait D: 75 when the run is still going after D, though the request was seen" {
	fake_dispatch job
	answer job
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --wait 0.5 job
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-set: job: run 3 has not ended within --wait" ]
	elapsed_between "$t0" 0 2
}

@test "cancel wakes the dispatcher with SIGURG when its pid and start time match" {
	fake_dispatch job
	answer job
	jobreg-set --cancel job
	poll_until 5 test -s "$T/urg.job"
}

@test "cancel never signals a pid whose start time or boot is not the dispatcher's" {
	fake_dispatch start
	sed -i "s/^pid_start=.*/pid_start=$(( $(pid_start "$DISP_PID") + 1 ))/" "$REG/start"
	answer start
	jobreg-set --cancel start
	fake_dispatch boot
	sed -i "s/^boot_id=.*/boot_id=00000000-0000-0000-0000-000000000000/" "$REG/boot"
	answer boot
	jobreg-set --cancel boot
	nap 0.5
	[ ! -e "$T/urg.start" ]
	[ ! -e "$T/urg.boot" ]
}

# --- no live dispatched run: a false condition ----------------------------------

@test "cancel of a job with no live dispatched run is a false condition: one line, exit 1, nothing written" {
	local t
	t=$(now_rfc3339 -30)
	write_record pending version=1 status=PENDING "since=$t"
	write_record done version=1 status=DONE "since=$t" exit=0 runs=2
	stale_record stale runs=4
	live_record pid
	write_record manual version=1 status=RUNNING "since=$t" runs=1
	local job
	for job in pending done stale pid manual; do
		save "$job"
		run --separate-stderr jobreg-set --cancel "$job"
		[ "$status" -eq 1 ] || flunk "$job: exit $status"
		one_line
		[[ "$stderr" == "jobreg-set: $job: nothing to cancel: "* ]] || flunk "$stderr"
		unchanged "$job"
	done
	run --separate-stderr jobreg-set --cancel stale
	[ "$stderr" = "jobreg-set: stale: nothing to cancel: the job is STALE (its run's owner is dead)" ]
	run --separate-stderr jobreg-set --cancel pid
	[ "$stderr" = "jobreg-set: pid: nothing to cancel: its run was not started by jobreg-dispatch (owner=pid)" ]
}

@test "cancel of a job with no record writes no record and no lock file, and makes no registry" {
	run --separate-stderr jobreg-set --cancel none
	[ "$status" -eq 1 ]
	[ "$stderr" = "jobreg-set: none: nothing to cancel: the job is PENDING" ]
	[ ! -e "$REG" ]
	mkdir "$REG"
	run --separate-stderr jobreg-set --cancel none
	[ "$status" -eq 1 ]
	[ -z "$(ls -A "$REG")" ]
}

@test "cancel of a lock-owned record whose run lock is free (STALE) is refused and writes nothing" {
	fake_dispatch job
	kill_tree "$FLOCK_PID" KILL
	poll_until flock -n "$REG/.job.run" true
	save job
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 1 ]
	unchanged job
}

@test "cancel of several jobs: each in turn, the exit status of the first failure" {
	fake_dispatch live
	answer live
	run --separate-stderr jobreg-set --cancel none live
	[ "$status" -eq 1 ]
	[ "$(field live cancel_run)" = 3 ]
	run --separate-stderr jobreg-set --cancel live none
	[ "$status" -eq 75 ]
}

@test "cancel reports a corrupt record with 65 and leaves it as it was" {
	write_record bad version=1 status=BOGUS
	save bad
	run --separate-stderr jobreg-set --cancel bad
	[ "$status" -eq 65 ]
	unchanged bad
}

# --- usage ------------------------------------------------------------------

@test "cancel usage errors exit 64 and write nothing" {
	fake_dispatch job
	save job
	local args
	for args in "--cancel job DONE" "--cancel job running" "--cancel -a" "--cancel" \
		"--signal TERM job" "--kill-after 5 job" "--wait 5 job" "--cancel --signal NOPE job" \
		"--cancel --kill-after 5x job" "--cancel --wait soon job" "--cancel --if RUNNING job" \
		"--cancel --owner $$ job" "--cancel --for 1m job" "--cancel --pause job" \
		"--cancel --resume job" "--cancel --force job"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-set $args
		[ "$status" -eq 64 ] || flunk "jobreg-set $args: exit $status"
		one_line || flunk "jobreg-set $args: $stderr"
		unchanged job
	done
	run --separate-stderr jobreg-set --cancel job DONE
	[[ "$stderr" == "jobreg-set: --cancel takes no STATUS ('DONE'). Try"* ]]
	run --separate-stderr jobreg-set --signal TERM job
	[[ "$stderr" == "jobreg-set: --signal is for --cancel only. Try"* ]]
}

# --- the round trip with jobreg-dispatch ---------------------------------------

# bats test_tags=serial
@test "a cancel stops a dispatched run with TERM within a second: DONE cancelled=1 by whom, history CANCELLED, cancelled_runs 1" {
	dispatch_bg job job sleep 30
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --wait 5 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	# (SIGURG wakes it at once; slack for a loaded or sanitized run)
	elapsed_between "$t0" 0 2.5
	wait_bg "$DISPATCH_PID"
	[ "$BG_RC" -eq 143 ] || flunk "dispatch exit $BG_RC"
	grep -q "job: run 1 cancelled by $(me)" "$T/out.job"
	[ "$(field job status)" = DONE ]
	[ "$(field job signal)" = TERM ]
	[ "$(field job cancelled)" = 1 ]
	[ "$(field job cancelled_by)" = "$(me)" ]
	[ "$(field job cancelled_runs)" = 1 ]
	[ -z "$(field job failures)" ]
	[ -z "$(field job cancel_run)" ]
	grep -q '^run=1 outcome=CANCELLED ' "$REG/.job.history"
	jobreg-get --is CANCELLED job
}

# bats test_tags=serial
@test "a cancel without --wait exits 0 once the dispatcher has taken it up, before the run has ended" {
	dispatch_bg job job sh -c 'trap "sleep 2; exit 3" TERM; : >"$0"; sleep 30 & wait' "$T/trapped"
	poll_until test -e "$T/trapped"
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 0 1.5
	[ -n "$(field job cancel_seen)" ]
	wait_bg "$DISPATCH_PID"
	[ "$(field job cancelled)" = 1 ]
}

@test "cancel --kill-after: a command that ignores the signal is killed after that long" {
	dispatch_bg job job env --ignore-signal=TERM sleep 30
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --kill-after 1 --wait 10 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 1 3   # (killed after --kill-after)
	[ "$(field job signal)" = KILL ]
	[ "$(field job cancelled)" = 1 ]
}

@test "a stale cancel, asked of run N after run N ended and N+1 began, stops nothing" {
	jobreg-dispatch job true
	dispatch_bg job job sleep 30
	[ "$(field job runs)" = 2 ]
	local sleeper
	read -r sleeper _ < "/proc/$DISPATCH_PID/task/$DISPATCH_PID/children" || [ -n "$sleeper" ]
	# the request of run 1, as a canceller that read the record before run 2 began writes it
	flock "$REG/.job.lock" sh -c 'printf "%s\n" cancel_run=1 cancel_signal=TERM cancel_kill_after=10 \
		cancel_by=x@y "cancel_at=$1" >> "$2"' sh "$(now_rfc3339)" "$REG/job"
	kill -URG "$DISPATCH_PID"
	nap 1.5
	[ "$(field job status)" = RUNNING ]
	[ -z "$(field job cancel_seen)" ]
	! gone "$sleeper"
	[ "$(field job cancel_run)" = 1 ]
}

@test "cancelling again with a shorter --kill-after: the dispatcher takes the new request up and kills sooner" {
	dispatch_bg job job env --ignore-signal=TERM sleep 30
	jobreg-set --cancel --kill-after 60 job
	[ "$(field job cancel_kill_after)" = 60 ]
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --kill-after 1 --wait 10 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 0 3
	[ "$(field job signal)" = KILL ]
	[ "$(field job cancelled_runs)" = 1 ]
}

# dispatch_leaving_child JOB: dispatch_bg of a command that ends on TERM, leaving a
# child that ignores TERM and holds the run lock.
dispatch_leaving_child() {
	dispatch_bg "$1" "$1" sh -c '(trap "" TERM; exec sleep 30) & trap "exit 0" TERM; while :; do sleep 0.05; done'
}

@test "cancelling again while the dispatcher gives what the command left its delay: answered, and the KILL comes sooner" {
	dispatch_leaving_child job
	run --separate-stderr jobreg-set --cancel --kill-after 60 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --kill-after 0.5 --wait 10 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 0 4
	wait_bg "$DISPATCH_PID"
	[ "$(field job cancelled)" = 1 ]
	flock -n "$REG/.job.run" true   # (the leftover was killed)
}

@test "a cancel that asks for no KILL (--kill-after 0) leaves what the command left running, and says it holds the run lock" {
	dispatch_leaving_child job
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-set --cancel --kill-after 0 --wait 10 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 0 3
	wait_bg "$DISPATCH_PID"
	[ "$(field job cancelled)" = 1 ]
	grep -q "the run lock is still held by pid" "$T/out.job" || flunk "$(cat "$T/out.job")"
	! flock -n "$REG/.job.run" true
	local p
	p=$(sed -nE 's/.*the run lock is still held by pid ([0-9]+).*/\1/p' "$T/out.job")
	kill -KILL "$p"
}

@test "a job lock held long while the dispatcher would take a cancel up holds up no --timeout of the run" {
	dispatch_bg job --timeout 2 job sh -c 'trap "date +%s.%N >\"\$0\"; exit 1" TERM; while :; do sleep 0.05; done' "$T/term"
	local t0=$EPOCHREALTIME
	# a request written by hand, then the job lock held on for 6 s
	flock "$REG/.job.lock" sh -c 'printf "%s\n" cancel_run=1 cancel_signal=USR1 cancel_kill_after=10 \
		cancel_by=x@y "cancel_at=$0" >>"$1"; : >"$2"; sleep 6' "$(now_rfc3339)" "$REG/job" "$T/held" 3>&- &
	BG_PIDS+=("$!")
	poll_until 5 test -s "$T/term"
	elapsed_between "$t0" 0 4.5 || flunk "the limit's TERM came only after the job lock was let go"
	wait_bg "$DISPATCH_PID"
	[ "$BG_RC" -eq 124 ] || flunk "exit $BG_RC"
}

@test "dispatch --replace whose cancel nobody takes up within 2 s says so, naming the run lock's holders, and goes on waiting" {
	fake_dispatch job
	local t0=$EPOCHREALTIME
	run --separate-stderr jobreg-dispatch --replace --wait 3 job touch "$T/ran"
	[ "$status" -eq 75 ]
	[ ! -e "$T/ran" ]
	elapsed_between "$t0" 0 6
	[[ ${stderr_lines[0]} == "jobreg-dispatch: job: run 3: no answer from its dispatcher on $HOST within 2 s (run lock held by pids "*"); the request stays" ]] ||
		flunk "$stderr"
	# the holders in pid order, which a wrapped pid counter may change;
	# the stand-in's sleep may hold the lock too
	local held=" ${stderr_lines[0]#*held by pids } "
	held=${held%%)*}
	[[ "$held, " == *" $FLOCK_PID, "* && "$held, " == *" $DISP_PID, "* ]] || flunk "$stderr"
	[ "${stderr_lines[1]}" = "jobreg-dispatch: job: still running after --wait 3" ]
	[ "$(field job cancel_run)" = 3 ]
	[ "$(field job replaced_below)" = 1 ]
	# its SIGURG reached the stand-in dispatcher
	[ -s "$T/urg.job" ]
}

# bats test_tags=serial
@test "a cancel stops a shell-wrapped command within a second also without --timeout, and dispatch says which pids it signalled" {
	dispatch_bg job job sh -c ': >"$0"; sleep 60' "$T/started"
	poll_until test -e "$T/started"
	local sh sleeper t0=$EPOCHREALTIME
	read -r sh _ < "/proc/$DISPATCH_PID/task/$DISPATCH_PID/children" || [ -n "$sh" ]
	poll_until eval 'read -r sleeper _ < "/proc/$sh/task/$sh/children" || [ -n "$sleeper" ]'
	# the sleep holds the run lock too: it gets the TERM, not only sh
	run --separate-stderr jobreg-set --cancel --wait 5 job
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
	elapsed_between "$t0" 0 1.5
	wait_bg "$DISPATCH_PID"
	grep -qx "jobreg-dispatch: job: run 1 cancelled by $(me) (TERM to pids $sh, $sleeper)" "$T/out.job" ||
		flunk "$(cat "$T/out.job")"
	[ "$(field job cancelled)" = 1 ]
	flock -n "$REG/.job.run" true
}

@test "a cancel racing the run's natural end never records an OK run as cancelled: the canceller is told it ended first" {
	# the command ends as soon as it sees the request: 30 races of its end and
	# the dispatcher's signal
	local i rc cancelled=0 missed=0
	for ((i = 1; i <= 30; i++)); do
		dispatch_bg job job sh -c 'until grep -q "^cancel_run=" "$0"; do :; done' "$REG/job"
		rc=0
		jobreg-set --cancel --wait 5 job 2>"$T/err" || rc=$?
		wait_bg "$DISPATCH_PID"
		if [ "$(field job cancelled)" = 1 ]; then
			# the signal reached it: it did not end by itself
			[ "$(field job signal)" = TERM ] || flunk "race $i: cancelled, yet $(grep -E '^(exit|signal)=' "$REG/job")"
			[ "$rc" -eq 0 ] || flunk "race $i: cancelled, the canceller exited $rc"
			cancelled=$((cancelled + 1))
		else
			[ "$(field job exit)" = 0 ] && [ -z "$(field job cancel_missed)" ]
			[ "$rc" -eq 1 ] || flunk "race $i: ended first, the canceller exited $rc"
			[ "$(cat "$T/err")" = "jobreg-set: job: run $i ended before the cancel reached it" ]
			grep -q "^run=$i outcome=OK " "$REG/.job.history"
			missed=$((missed + 1))
		fi
	done
	echo "# $cancelled cancelled, $missed ended first" >&3
	[ "$(field job cancelled_runs)" = "${cancelled/#0/}" ]
	[ -z "$(field job failures)" ]
}
