#!/usr/bin/env bats
# jobreg-get --is S --wait DURATION while the realtime clock steps (SPEC.md
# §5 jobreg-get, §2): each test steps CLOCK_REALTIME with date -s, as root,
# and its teardown steps it back.  Not part of make check, which leaves the
# host's clock alone: make check-clock runs this file.
bats_require_minimum_version 1.5.0
load ../lib/helper
load ../lib/procs
load ../lib/wait

# step_clock SECONDS: step CLOCK_REALTIME by SECONDS (root); the test's
# local_teardown steps it back by what was stepped.
step_clock() {
	clock_by "$1"
	CLOCK_STEPPED=$(( ${CLOCK_STEPPED:-0} + $1 ))
}

# clock_by SECONDS: set CLOCK_REALTIME to now + SECONDS, "now" read by date
# itself, nanoseconds kept (date -s @$(date +%s) would set it back by up to
# a second each time, and the time a process takes to start).
clock_by() {
	date -s "$1 seconds" >/dev/null
}

local_teardown() {
	if [ -n "${CLOCK_STEPPED:-}" ] && [ "$CLOCK_STEPPED" != 0 ]; then
		clock_by "$(( -CLOCK_STEPPED ))"
	fi
}

# bats test_tags=serial
@test "a --ttl record is seen to expire when the realtime clock steps past it" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to step the clock"
	clock_by 0 2>/dev/null || skip "the clock cannot be set here"
	jobreg-set --ttl 600 job RUNNING
	start_wait "$T/out" --is STALE --wait 30 job
	poll_until asleep "$WAIT_PID"
	still_waiting "$T/out" 0.3
	step_clock 700
	t0=$EPOCHREALTIME
	[ "$(jobreg-get job)" = STALE ]
	poll_until ended "$T/out"
	local_teardown
	CLOCK_STEPPED=0
	[ "$RC" = 0 ]
	[ "$(elapsed "$t0" "$END")" -lt 1500 ]
}

# bats test_tags=serial
@test "dispatch --every 1d: a clock stepped 3 days forward gives exactly one run at the next call" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to step the clock"
	clock_by 0 2>/dev/null || skip "the clock cannot be set here"
	jobreg-dispatch --every 1d job true
	run jobreg-dispatch --every 1d job true
	[ "$status" -eq 0 ]
	[ "$(field job runs)" = 1 ]
	# a machine that slept through three days catches up with one run
	step_clock $((3 * 86400))
	jobreg-dispatch --every 1d job true
	jobreg-dispatch --every 1d job true
	run --separate-stderr jobreg-dispatch --every 1d job true
	local_teardown
	CLOCK_STEPPED=0
	[ "$status" -eq 0 ]
	[[ $stderr == "jobreg-dispatch: job: not due until "* ]]
	[ "$(field job runs)" = 2 ]
}
