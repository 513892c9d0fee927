#!/usr/bin/env bats
# jobreg-get --is S --wait DURATION: SPEC.md §5 jobreg-get, §2 (what a wait
# must notice), issue 9 "Waiting".  Timing bounds leave room for a loaded
# 2-core machine but still fail on a 1 s poll or on spinning.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs
load lib/wait

# ---- local helpers -------------------------------------------------------

# noticed_within MS: the waiter ended (END) within MS ms of the change (t0).
noticed_within() {
	local ms
	ms=$(elapsed "$t0" "$END")
	[ "$ms" -lt "$1" ] || flunk "noticed after $ms ms (bound $1 ms)"
}

# cpu_us PID: CPU time of PID so far, in microseconds: the run time of
# /proc/PID/schedstat (nanoseconds), else utime + stime of /proc/PID/stat.
cpu_us() {
	local s
	if read -r s _ <"/proc/$1/schedstat" 2>/dev/null && [ -n "$s" ]; then
		echo $((s / 1000))
		return
	fi
	s=$(cat "/proc/$1/stat") || return 1
	s=${s##*) }
	set -- $s
	echo $(( (${12} + ${13}) * 1000000 / $(getconf CLK_TCK) ))
}

# ---- usage ---------------------------------------------------------------

@test "--wait without --is is a usage error" {
	run -64 jobreg-get --wait 5 build
	[[ $output == *"--wait needs --is"* ]]
}

@test "--wait with -a is a usage error: the list of jobs would change while waiting" {
	run -64 jobreg-get -a --is DONE --wait 5
	[[ $output == *"not -a"* ]]
}

@test "--wait takes a required duration, so a job id is never taken for it" {
	run -64 jobreg-get --is DONE --wait
	run -64 jobreg-get --is DONE --wait build
	[[ $output == *"bad --wait duration 'build'"* ]]
	run -64 jobreg-get --is DONE --wait -1 build
	run -64 jobreg-get --is DONE --wait 5x build
}

# ---- what it waits for ---------------------------------------------------

# bats test_tags=serial
@test "--is OK,FAILED --wait waits for a dispatched run to end and exits 0" {
	dispatch_bg build build sleep 1.5
	start=$EPOCHREALTIME
	run -0 jobreg-get --is OK,FAILED --wait 10 build
	[ -z "$output" ]
	ms=$(elapsed "$start" "$EPOCHREALTIME")
	[ "$ms" -ge 1000 ]
	[ "$ms" -lt 5000 ]
	[ "$(jobreg-get build)" = DONE ]
}

# bats test_tags=serial
@test "a job already in the status list returns at once" {
	jobreg-set --exit 0 build DONE
	start=$EPOCHREALTIME
	run -0 jobreg-get --is DONE --wait 10 build
	[ "$(elapsed "$start" "$EPOCHREALTIME")" -lt 1000 ]
}

# bats test_tags=serial
@test "the kill -9 of a lock-owned run, which changes no file, is noticed within 100 ms" {
	# Five rounds: the median must be well under a 1 s poll's, the worst
	# round under half of it (a loaded machine may delay one wake-up).
	local lat=()
	for round in 1 2 3 4 5; do
		rm -f "$BATS_TEST_TMPDIR/out"
		dispatch_bg job job sleep 100
		grep -qx owner=lock "$REG/job"
		start_wait "$BATS_TEST_TMPDIR/out" --is STALE --wait 20 job
		poll_until asleep "$WAIT_PID"
		sleep 0.2
		[ ! -e "$BATS_TEST_TMPDIR/out" ]
		t0=$EPOCHREALTIME
		kill_run "$DISPATCH_PID"
		poll_until ended "$BATS_TEST_TMPDIR/out"
		wait "$DISPATCH_PID" 2>/dev/null || true
		[ "$RC" = 0 ]
		lat+=("$(elapsed "$t0" "$END")")
		[ "$(jobreg-get job)" = STALE ]
		jobreg-clear job
	done
	echo "latencies (ms): ${lat[*]}"
	sorted=($(printf '%s\n' "${lat[@]}" | sort -n))
	[ "${sorted[2]}" -lt 150 ]
	[ "${sorted[4]}" -lt 500 ]
}

# hold_run_lock JOB MODE: a background process holding JOB's run lock
# exclusively on a descriptor opened read-only (MODE "<") or read-write
# ("<>"), and a lock-owned RUNNING record naming it; its pid in HOLDER.
hold_run_lock() {
	mkdir -p "$REG"
	: >>"$REG/.$1.run"
	if [ "$2" = "<>" ]; then
		( exec 9<>"$REG/.$1.run"; flock -x 9; exec sleep 100 ) 3>&- &
	else
		( exec 9<"$REG/.$1.run"; flock -x 9; exec sleep 100 ) 3>&- &
	fi
	HOLDER=$!
	BG_PIDS+=("$HOLDER")
	poll_until lock_held "$REG/.$1.run"
	local t
	t=$(now_rfc3339)
	write_record "$1" version=1 status=RUNNING "since=$t" owner=lock "host=$(uname -n)" \
		"pid=$HOLDER" "run_lock=$(stat -c %i "$REG/.$1.run")" "started=$t" runs=1
}

lock_held() {
	! flock -n -s "$1" true
}

# bats test_tags=serial
@test "the kill -9 of a run lock's holder is noticed whether it opened the lock read-only or read-write" {
	for mode in "<" "<>"; do
		rm -f "$BATS_TEST_TMPDIR/out"
		hold_run_lock job "$mode"
		[ "$(jobreg-get job)" = RUNNING ]
		start_wait "$BATS_TEST_TMPDIR/out" --is STALE --wait 20 job
		poll_until asleep "$WAIT_PID"
		still_waiting "$BATS_TEST_TMPDIR/out" 0.2
		t0=$EPOCHREALTIME
		kill -KILL "$HOLDER"
		poll_until ended "$BATS_TEST_TMPDIR/out"
		wait "$HOLDER" 2>/dev/null || true
		[ "$RC" = 0 ]
		ms=$(elapsed "$t0" "$END")
		echo "holder opened with $mode: noticed after $ms ms"
		[ "$ms" -lt 500 ]
		jobreg-clear job
	done
}

# bats test_tags=serial
@test "a clear is noticed at once by --is PENDING" {
	jobreg-set job RUNNING
	start_wait "$BATS_TEST_TMPDIR/out" --is PENDING --wait 20 job
	poll_until asleep "$WAIT_PID"
	still_waiting "$BATS_TEST_TMPDIR/out" 0.3
	jobreg-clear job
	t0=$EPOCHREALTIME   # the change is made once it returns
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
	noticed_within 500
}

# bats test_tags=serial
@test "a set is noticed at once, and --is keeps waiting through statuses not in the list" {
	start_wait "$BATS_TEST_TMPDIR/out" --is DONE --wait 20 job
	poll_until asleep "$WAIT_PID"
	jobreg-set job RUNNING
	still_waiting "$BATS_TEST_TMPDIR/out" 0.3
	jobreg-set --exit 3 job DONE
	t0=$EPOCHREALTIME   # the change is made once it returns
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
	noticed_within 500
}

# bats test_tags=serial
@test "the death of a pid owner is noticed at once" {
	sleep 60 3>&- &
	owner=$!
	BG_PIDS+=("$owner")
	jobreg-set --owner "$owner" job RUNNING
	start_wait "$BATS_TEST_TMPDIR/out" --is STALE --wait 20 job
	poll_until asleep "$WAIT_PID"
	still_waiting "$BATS_TEST_TMPDIR/out" 0.2
	t0=$EPOCHREALTIME
	kill -KILL "$owner"
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
	noticed_within 500
}

@test "a --ttl record is seen to expire while waiting" {
	jobreg-set --ttl 1 job RUNNING
	run -0 jobreg-get --is STALE --wait 10 job
	[ "$(jobreg-get job)" = STALE ]
}

# bats test_tags=serial
@test "at the limit it exits 75 naming the first job not there, neither early nor much late" {
	jobreg-set a DONE
	jobreg-set b RUNNING
	start=$EPOCHREALTIME
	run -75 jobreg-get --is DONE --wait 1.5 a b c
	ms=$(elapsed "$start" "$EPOCHREALTIME")
	[ "$ms" -ge 1500 ]
	[ "$ms" -lt 2500 ]
	[ "$output" = "jobreg-get: b: still RUNNING after --wait 1.5" ]
}

@test "--wait inf waits with no limit" {
	jobreg-set job RUNNING
	start_wait "$BATS_TEST_TMPDIR/out" --is DONE --wait inf job
	still_waiting "$BATS_TEST_TMPDIR/out" 1.5
	jobreg-set job DONE
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
}

@test "several jobs: it returns once every one is in the list, not before" {
	start_wait "$BATS_TEST_TMPDIR/out" --is OK --wait 20 a b c
	poll_until asleep "$WAIT_PID"
	jobreg-set --exit 0 a DONE
	jobreg-set --exit 0 b DONE
	jobreg-set --exit 1 c DONE
	still_waiting "$BATS_TEST_TMPDIR/out" 0.3
	jobreg-set --exit 0 c DONE
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
}

# bats test_tags=serial
@test "a registry created after the wait started is noticed" {
	export JOBREG_DIR="$BATS_TEST_TMPDIR/later"
	start_wait "$BATS_TEST_TMPDIR/out" --is DONE --wait 20 job
	poll_until asleep "$WAIT_PID"
	still_waiting "$BATS_TEST_TMPDIR/out" 0.2
	jobreg-set job DONE
	t0=$EPOCHREALTIME   # the change is made once it returns
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
	noticed_within 500
}

@test "a registry whose parent does not exist yet is polled for" {
	export JOBREG_DIR="$BATS_TEST_TMPDIR/not/yet"
	start_wait "$BATS_TEST_TMPDIR/out" --is DONE --wait 20 job
	still_waiting "$BATS_TEST_TMPDIR/out" 0.3
	jobreg-set job DONE
	poll_until ended "$BATS_TEST_TMPDIR/out"
	[ "$RC" = 0 ]
}

@test "a corrupt record ends the wait with 65 rather than wait for it" {
	write_record job version=1 status=BOGUS
	run -65 jobreg-get --is DONE --wait 10 job
	[[ $output == *"corrupt record"* ]]
}

# ---- it does not spin ----------------------------------------------------

@test "waiting for a run uses under 1% CPU, also with a second waiter probing the same run lock" {
	dispatch_bg job job sleep 100
	jobreg-get --is DONE --wait 4 job 3>&- 2>/dev/null &
	w1=$!
	jobreg-get --is DONE --wait 4 job 3>&- 2>/dev/null &
	w2=$!
	BG_PIDS+=("$w1" "$w2")
	# the CPU time of the wait, not of the start (a sanitized build's
	# start takes tens of ms)
	poll_until asleep "$w1"
	poll_until asleep "$w2"
	a1=$(cpu_us "$w1") a2=$(cpu_us "$w2")
	sleep 3
	c1=$(( $(cpu_us "$w1") - a1 )) c2=$(( $(cpu_us "$w2") - a2 ))
	echo "CPU time over 3 s of waiting: $c1 us and $c2 us"
	# 1% of 3 s.
	[ "$c1" -lt 30000 ]
	[ "$c2" -lt 30000 ]
	wait "$w1" || [ $? = 75 ]
}

# bats test_tags=serial
@test "without inotify (instance limit 0) it polls every 100 ms: still prompt, still under 1% CPU" {
	unshare -U -r true 2>/dev/null || skip "no user namespaces (unshare -U) to lower the inotify limit in"
	jobreg-set job RUNNING
	# The limit is set in a new user namespace only: the host's is untouched.
	start_polling_wait
	w=$WAIT_PID
	poll_until asleep "$w"
	a=$(cpu_us "$w")
	sleep 3
	c=$(( $(cpu_us "$w") - a ))
	echo "CPU time over 3 s of waiting: $c us"
	[ "$c" -lt 30000 ]
	jobreg-set job DONE
	t0=$EPOCHREALTIME   # the change is made once it returns
	wait_bg "$w"
	[ "$BG_RC" = 0 ]
	[ "$(elapsed "$t0" "$EPOCHREALTIME")" -lt 500 ]
}

# ---- it follows DIR by name (SPEC §5) ------------------------------------

# follow_case SETUP CHANGE: wait for job DONE in the registry $JOBREG_DIR (made
# by SETUP), run CHANGE (which leaves $JOBREG_DIR naming another directory),
# then set the job DONE there: the waiter must see it within 1.5 s.
follow_case() {
	eval "$1"
	start_wait "$T/out" --is DONE --wait 20 job
	poll_until asleep "$WAIT_PID"
	eval "$2"
	jobreg-set --exit 0 job DONE
	t0=$EPOCHREALTIME   # the change is made once it returns
	poll_until ended "$T/out"
	[ "$RC" = 0 ] || { cat "$T/out.err"; false; }
	[ "$(elapsed "$t0" "$END")" -lt 1500 ]
}

@test "a waiter whose registry is removed and made again follows it by name" {
	follow_case 'jobreg-set job RUNNING' 'rm -rf "$JOBREG_DIR"'
}

@test "a waiter whose registry is renamed away and replaced follows the name" {
	follow_case 'jobreg-set job RUNNING' 'mv "$JOBREG_DIR" "$T/away"; mkdir "$JOBREG_DIR"'
	# the old directory, under its new name, was left alone
	[ "$(jobreg-get -d "$T/away" job)" = RUNNING ]
}

# bats test_tags=serial
@test "a waiter whose registry is a symlink re-pointed (ln -sfn) follows the link" {
	follow_case 'mkdir "$T/a" "$T/b"; ln -s a "$T/link"; export JOBREG_DIR=$T/link; jobreg-set job RUNNING' \
		'ln -sfn b "$T/link"'
	[ "$(jobreg-get -d "$T/a" job)" = RUNNING ]
	[ "$(jobreg-get -d "$T/b" job)" = DONE ]
}

# start_polling_wait: a waiter for job DONE that cannot use inotify (the
# limit is 0 in a user namespace of its own), in WAIT_PID.
start_polling_wait() {
	unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_inotify_instances && exec jobreg-get --is DONE --wait 20 job' 3>&- &
	WAIT_PID=$!
	BG_PIDS+=("$WAIT_PID")
}

# polling_follow_case CHANGE: a polling waiter on job, RUNNING in DIR; after
# the shell code CHANGE to DIR, job is set DONE in what DIR names now: the
# waiter must see it within 1.5 s.
polling_follow_case() {
	unshare -U -r true 2>/dev/null || skip "no user namespaces (unshare -U) to lower the inotify limit in"
	jobreg-set job RUNNING
	start_polling_wait
	poll_until asleep "$WAIT_PID"
	eval "$1"
	jobreg-set --exit 0 job DONE
	t0=$EPOCHREALTIME   # the change is made once it returns
	wait_bg "$WAIT_PID"
	[ "$BG_RC" = 0 ]
	[ "$(elapsed "$t0" "$EPOCHREALTIME")" -lt 1500 ]
}

@test "a polling waiter (no inotify) whose registry is removed follows it by name" {
	polling_follow_case 'rm -rf "$JOBREG_DIR"'
}

@test "a polling waiter (no inotify) whose registry is renamed away and replaced follows the name" {
	polling_follow_case 'mv "$JOBREG_DIR" "$T/away"; mkdir "$JOBREG_DIR"'
	# the old directory, under its new name, was left alone
	[ "$(jobreg-get -d "$T/away" job)" = RUNNING ]
}

# wait_behind_run: job runs (sleep 100); a dispatch --wait of it, its pid in w,
# notes the JOBREG_DIR its command ran with in $T/ran, its stderr in $T/err.
wait_behind_run() {
	dispatch_bg job job sleep 100
	jobreg-dispatch --wait 20 job sh -c 'echo "$JOBREG_DIR" > "$1/ran"' sh "$T" 3>&- 2>"$T/err" &
	w=$!
	BG_PIDS+=("$w")
}

@test "dispatch --wait whose registry is replaced meanwhile runs in the new one" {
	wait_behind_run
	poll_until blocked "$w"
	mv "$JOBREG_DIR" "$T/away"
	mkdir -p "$JOBREG_DIR"   # or the dispatcher made it first
	wait_bg "$w"
	[ "$BG_RC" = 0 ] || { cat "$T/err"; false; }
	[ -e "$T/ran" ]
	[ "$(jobreg-get job)" = DONE ]
	[ "$(jobreg-get -d "$T/away" job)" = RUNNING ]
}

# bats test_tags=serial
@test "dispatch --wait held by the old run's lock when its registry is removed runs in the new one within a second" {
	wait_behind_run
	poll_until blocked "$w"
	# The record goes first, as rm -rf may remove it: the waiter finds no
	# run recorded and waits for the run lock that the old run still holds.
	rm "$JOBREG_DIR/job"
	sleep 0.5
	rm -rf "$JOBREG_DIR"
	t0=$EPOCHREALTIME
	wait_bg "$w"
	[ "$BG_RC" = 0 ] || { cat "$T/err"; false; }
	[ "$(cat "$T/ran")" = "$JOBREG_DIR" ]
	[ "$(jobreg-get job)" = DONE ]
	[ "$(elapsed "$t0" "$EPOCHREALTIME")" -lt 1500 ]
}
