#!/usr/bin/env bats
# Notifications (SPEC §5c): the one notifier of jobreg-get --notify (the
# sweep) and jobreg-dispatch --notify / JOBREG_NOTIFY: a change of health
# announced once, no flapping, --notify-after, the back-off of a failing
# CMD, CMD's environment, standard input and descriptors, the dispatcher's
# overdue notice (§5 Outcomes), clear and the claim file.  Crash points are
# in faults.bats; exactly once across hosts in sharedfs/notify.bats.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

local_setup() {
	CALLS=$T/calls
	# CMD: one line a call, "JOB EVENT", appended
	N="echo \"\$JOBREG_JOB \$JOBREG_EVENT\" >> '$CALLS'"
}

# calls: the lines CMD appended, one a call ("" for none).
calls() { if [ -e "$CALLS" ]; then cat "$CALLS"; fi; }

# overdue_after JOB SECONDS: put overdue_after into JOB's record as an
# operator would by hand, under its job lock (the option is jobreg-set's).
overdue_after() {
	flock "$REG/.$1.lock" sh -c 'awk -v s="$1" "/^runs=/ { print \"overdue_after=\" s } { print }" "$2" > "$2.x" && mv "$2.x" "$2"' sh "$2" "$REG/$1"
}

@test "notify: ten failures then a success make two calls: failed, then recovered" {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		run jobreg-dispatch -q --notify "$N" job false
		[ "$status" -eq 1 ]
	done
	[ "$(calls)" = "job failed" ]
	jobreg-dispatch -q --notify "$N" job true
	[ "$(calls)" = $'job failed\njob recovered' ]
	field_is job notified OK
	# nothing changed: a sweep calls nothing
	jobreg-get --notify "$N" -a
	[ "$(calls)" = $'job failed\njob recovered' ]
}

@test "notify: with --notify-after 3, two failures then a success call nothing; three failures call once" {
	jobreg-dispatch -q --notify-after 3 --notify "$N" job false || true
	field_is job notify_after 3
	jobreg-dispatch -q --notify "$N" job false || true
	jobreg-dispatch -q --notify "$N" job true
	[ -z "$(calls)" ]
	for i in 1 2; do jobreg-dispatch -q --notify "$N" job false || true; done
	[ -z "$(calls)" ]
	jobreg-dispatch -q --notify "$N" job false || true
	[ "$(calls)" = "job failed" ]
	# readers still say FAILED from the first failure
	[[ $(jobreg-get -j job) == *'"health": "FAILED"'* ]] || [[ $(jobreg-get -j job) != *'"health"'* ]]
	# --notify-after 1 removes the setting, without a CMD too
	jobreg-dispatch -q --notify-after 1 job false || true
	field_is job notify_after ''
}

@test "notify: the first sweep announces every job whose health is not OK, and only those" {
	jobreg-dispatch -q bad false || true
	jobreg-dispatch -q good true
	stale_record gone runs=1
	run jobreg-get -q --notify "$N" -a
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(calls | sort)" = $'bad failed\ngone stale' ]
	field_is bad notified FAILED
	field_is gone notified STALE
	field_is good notified ''
	# each announced once
	jobreg-get --notify "$N" -a
	[ "$(calls | wc -l)" -eq 2 ]
}

@test "notify: a job past --late-after is announced late at the next sweep" {
	local t
	t=$(now_rfc3339 -10)
	write_record job version=1 status=DONE "since=$t" "started=$t" "ended=$t" exit=0 outcome=OK \
		runs=1 "last_success=$t" late_after=5 "late_from=$t"
	jobreg-get --notify "$N" job
	[ "$(calls)" = "job late" ]
	field_is job notified LATE
}

@test "notify: the run of a dispatcher killed with kill -9 is announced stale by the sweep" {
	bg_dispatch job --notify "$N"
	kill -9 "$BG_PID"
	wait "$BG_PID" 2>/dev/null || true
	: > "$T/release"
	poll_until gone_run_lock job
	jobreg-get --notify "$N" -a
	[ "$(calls)" = "job stale" ]
}

# gone_run_lock JOB: nobody holds JOB's run lock.
gone_run_lock() { flock -n "$REG/.$1.run" true; }

@test "notify: a dispatch that takes over a STALE run announces the lost run as its run begins, then its own end" {
	bg_dispatch job
	kill -9 "$BG_PID"
	wait "$BG_PID" 2>/dev/null || true
	: > "$T/release"
	poll_until gone_run_lock job
	# the lost run is announced while the new run still goes: before it ends
	run jobreg-dispatch -q --notify "$N" job sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$0" ] && exit 0; sleep 0.2; done; exit 9' "$CALLS"
	[ "$status" -eq 0 ]
	[ "$(calls)" = $'job failed\njob recovered' ]
	field_is job lost 1
	field_is job notified OK
}

# bats test_tags=serial
@test "notify: a run past overdue_after is announced by its own dispatcher within a second, no sweep running" {
	dispatch_bg job --notify "$N" job sleep 3.5
	overdue_after job 1
	local started
	started=$(date -d "$(field job started)" +%s)
	poll_until 5 test -s "$CALLS"
	local now=$EPOCHREALTIME
	[ "$(calls)" = "job overdue" ]
	# the moment is started + overdue_after + 1 s; "within 1 s" of it
	awk -v n="$now" -v s="$started" 'BEGIN { exit !(n > s + 2 && n < s + 3.5) }'
	grep -q 'job: run 1 overdue: running for 1s' "$T/out.job"
	[ "$(field job status)" = RUNNING ]
	wait "$DISPATCH_PID"
	[ "$(calls)" = $'job overdue\njob recovered' ]
}

@test "notify: the overdue notice is said with -q too, once per attempt, without a CMD" {
	dispatch_bg job -q job sleep 3
	overdue_after job 1
	wait "$DISPATCH_PID"
	[ "$(grep -c 'overdue: running for 1s' "$T/out.job")" -eq 1 ]
	field_is job notified ''
	field_is job notifying ''
}

@test "notify: a failing CMD backs off 1 minute, the sweep exits 1, and the next sweep waits" {
	jobreg-dispatch -q job false || true
	run jobreg-get --notify 'exit 3' job
	[ "$status" -eq 1 ]
	[[ $output == "jobreg-get: job: notify failed (exit 3): tried again after "* ]]
	field_is job notify_failures 1
	field_is job notified ''
	field_is job notifying ''
	local at
	at=$(date -d "$(field job notify_retry_at)" +%s)
	[ $((at - EPOCHSECONDS)) -ge 58 ] && [ $((at - EPOCHSECONDS)) -le 61 ]
	# before notify_retry_at, no notifier tries
	run jobreg-get --notify "$N" job
	[ "$status" -eq 0 ]
	[ -z "$(calls)" ]
	# the second failure doubles the wait
	write_record job $(grep -v '^notify_retry_at=' "$REG/job")
	run jobreg-get --notify 'exit 3' job
	[ "$status" -eq 1 ]
	field_is job notify_failures 2
	at=$(date -d "$(field job notify_retry_at)" +%s)
	[ $((at - EPOCHSECONDS)) -ge 118 ] && [ $((at - EPOCHSECONDS)) -le 121 ]
	# a success drops both
	write_record job $(grep -v '^notify_retry_at=' "$REG/job")
	jobreg-get --notify "$N" job
	[ "$(calls)" = "job failed" ]
	field_is job notify_failures ''
	field_is job notify_retry_at ''
}

@test "notify: CMD gets the job's facts in its environment, the failed run's log on stdin, and no descriptor of jobreg's" {
	jobreg-dispatch -q --log job sh -c 'echo one; echo two; exit 4' >/dev/null || true
	cat > "$T/cmd" <<-'SH'
		env | grep '^JOBREG_' | sort > "$0.env"
		cat > "$0.stdin"
		ls -l /proc/self/fd/ > "$0.fds.l"
	SH
	JOBREG_SLOTS=x jobreg-get --notify "sh $T/cmd" job 3>&- 4>&- 5>&-
	local e=$T/cmd.env
	grep -qx 'JOBREG_JOB=job' "$e"
	grep -qx "JOBREG_DIR=$REG" "$e"
	grep -qx 'JOBREG_EVENT=failed' "$e"
	grep -qx 'JOBREG_HEALTH=FAILED' "$e"
	grep -qx 'JOBREG_PREVIOUS_HEALTH=OK' "$e"
	grep -qx 'JOBREG_STATUS=DONE' "$e"
	grep -qx 'JOBREG_RUN=1' "$e"
	grep -qx 'JOBREG_OUTCOME=FAILED' "$e"
	grep -qx 'JOBREG_EXIT=4' "$e"
	grep -qx 'JOBREG_CONSECUTIVE_FAILURES=1' "$e"
	grep -qx 'JOBREG_LAST_SUCCESS=' "$e"
	grep -qx "JOBREG_HOST=$HOST" "$e"
	grep -qE '^JOBREG_SUMMARY=job  DONE  FAILED exit 4  never ok  took [0-9]+s  two$' "$e"
	! grep -q '^JOBREG_SIGNAL=\|^JOBREG_PAUSED_UNTIL=\|^JOBREG_SLOTS=\|^JOBREG_ATTEMPT=' "$e"
	[ "$(cat "$T/cmd.stdin")" = $'one\ntwo' ]
	# none of the registry's files (the log was dup'ed to 0), nothing past 2 but ls's own
	! grep -q "$REG" "$T/cmd.fds.l"
	# recovered: stdin is /dev/null
	jobreg-dispatch -q --log job sh -c 'echo ok'
	JOBREG_SLOTS=x jobreg-get --notify "sh $T/cmd" job
	grep -qx 'JOBREG_EVENT=recovered' "$e"
	grep -qx 'JOBREG_PREVIOUS_HEALTH=FAILED' "$e"
	[ ! -s "$T/cmd.stdin" ]
}

@test "notify: a dispatcher's CMD inherits neither its run lock nor its slots, and its exit status never depends on CMD" {
	jobreg-dispatch -q --slots db:1 --notify "ls -l /proc/self/fd > '$T/fds'; exit 9" job false 3>&- || st=$?
	[ "${st:-0}" -eq 1 ]
	! grep -q "$REG" "$T/fds"
	field_is job notify_failures 1
	run jobreg-dispatch -q --notify 'exit 9' ok true
	[ "$status" -eq 0 ]
}

@test "notify: JOBREG_NOTIFY is dispatch's CMD; --notify overrides it, --notify '' turns it off, --clear ignores it" {
	JOBREG_NOTIFY="$N" jobreg-dispatch -q job false || true
	[ "$(calls)" = "job failed" ]
	JOBREG_NOTIFY="$N" jobreg-dispatch -q --notify '' job true
	[ "$(calls)" = "job failed" ]
	JOBREG_NOTIFY='exit 1' jobreg-dispatch -q --notify "$N" job true
	[ "$(calls)" = $'job failed\njob recovered' ]
	field_is job notified OK
	JOBREG_NOTIFY="$N" jobreg-dispatch -q --clear job false || true
	[ ! -e "$REG/job" ]
	run jobreg-dispatch --clear --notify "$N" job true
	[ "$status" -eq 64 ]
	[[ $output == *"--clear and --notify exclude each other"* ]]
}

@test "notify: a dispatch or sweep without a CMD writes none of the notification keys" {
	jobreg-dispatch -q job false || true
	run jobreg-get --notify '' job
	[ "$status" -eq 64 ]
	! grep -q '^notif' "$REG/job"
	[ ! -e "$REG/.job.notify" ]
}

@test "notify: the sweep does not make a missing registry, and takes -s" {
	run jobreg-get -d "$T/none" --notify "$N" -a
	[ "$status" -eq 0 ]
	[ ! -e "$T/none" ]
	jobreg-dispatch -q a false || true
	jobreg-dispatch -q b true
	jobreg-dispatch -q b false || true
	jobreg-dispatch -q b false || true
	write_record c version=1 status=DONE exit=1 consecutive_failures=1 ended=2026-01-01T00:00:00Z
	jobreg-get --notify "$N" -s OK -a
	[ -z "$(calls)" ]
	run jobreg-get --notify "$N" --notify-after 2 -s FAILED a b
	[ "$(calls)" = "b failed" ]
	field_is a notify_after 2
	field_is a notified ''
	printf 'garbage\n' > "$REG/c"
	run jobreg-get --notify "$N" -a
	[ "$status" -eq 65 ]
	# (a: one failure, under its notify_after 2)
	[ "$(calls)" = "b failed" ]
}

@test "notify: a live claim leaves the job to its holder, and clear removes .JOB.notify only when no claim holds it" {
	jobreg-dispatch -q job false || true
	jobreg-get --notify true job
	[ -e "$REG/.job.notify" ]
	jobreg-set job DONE
	flock -o "$REG/.job.notify" sleep 30 3>&- &
	BG_PIDS+=($!)
	poll_until holds_open "${BG_PIDS[-1]}" "$REG/.job.notify"
	jobreg-dispatch -q job false || true
	jobreg-get --notify "$N" job
	[ -z "$(calls)" ]
	jobreg-clear job
	[ -e "$REG/.job.notify" ]
	kill "${BG_PIDS[-1]}"
	wait "${BG_PIDS[-1]}" 2>/dev/null || true
	jobreg-dispatch -q job true
	jobreg-clear job
	[ ! -e "$REG/.job.notify" ]
}

@test "notify: a paused job's CMD gets JOBREG_PAUSED_UNTIL, the job's own pause or the registry's" {
	jobreg-dispatch -q a false || true
	jobreg-dispatch -q b false || true
	jobreg-dispatch -q c false || true
	jobreg-set --pause a
	jobreg-get --notify "echo \"\$JOBREG_JOB \${JOBREG_PAUSED_UNTIL-unset}\" >> '$CALLS'" a b
	[ "$(calls)" = $'a inf\nb unset' ]
	jobreg-set --pause -a
	jobreg-get --notify "echo \"\$JOBREG_JOB \${JOBREG_PAUSED_UNTIL-unset}\" >> '$CALLS'" c
	[ "$(calls)" = $'a inf\nb unset\nc inf' ]
}

# (65 s of waiting for SPEC §5c's fixed limit, little CPU: tests/run starts
# this file among the first, beside the others' work)
@test "notify: a CMD still running after 60 s gets TERM, its process group KILL 5 s later, and counts as failed" {
	jobreg-dispatch -q job false || true
	local t0=$EPOCHSECONDS
	run jobreg-get --notify "trap 'echo TERM >> \"$T/got\"' TERM; sh -c 'trap \"\" TERM; echo \$\$ > \"\$0\"; sleep 120' '$T/pid' & wait; wait" job 3>&-
	local took=$((EPOCHSECONDS - t0))
	[ "$status" -eq 1 ]
	[[ $output == *"job: notify failed ("*"): tried again after "* ]]
	[ "$(cat "$T/got")" = TERM ]
	[ "$took" -ge 64 ] && [ "$took" -le 70 ]
	field_is job notify_failures 1
	# the group's other process, which ignored TERM, was killed with it
	poll_until 2 gone "$(cat "$T/pid")"
}
