#!/usr/bin/env bats
# jobreg-dispatch --every DURATION (SPEC §5 step 2a, §5b "Not due"): one run a
# period, measured from the start of the last successful run, caught up by the
# first call after it falls due; a failed run leaves the job due.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

@test "every: a call that finds the job not due says until when, exits 0 and writes nothing" {
	jobreg-dispatch --every 1h j true
	[ "$(field j runs)" = 1 ]
	cp "$REG/j" "$T/before"
	local started until
	started=$(field j last_success_started)
	until=$(date -u -d "$started 1 hour" +%Y-%m-%dT%H:%M:%SZ)
	run --separate-stderr jobreg-dispatch --every 1h j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: not due until $until" ]
	[ ! -e "$T/ran" ]
	cmp "$T/before" "$REG/j"
	# -q silences it; a shorter period that has passed runs
	run --separate-stderr jobreg-dispatch -q --every 1h j true
	[ -z "$stderr" ]
	sleep 1.1
	jobreg-dispatch --every 1s j touch "$T/ran"
	[ -e "$T/ran" ]
	[ "$(field j runs)" = 2 ]
}

@test "every: a failed run leaves the job due at the next call" {
	jobreg-dispatch --every 1d j true
	run jobreg-dispatch --every 1d j false
	[ "$status" -eq 0 ]
	[ "$(field j runs)" = 1 ]
	# a success long ago, then a failure: due again at every call
	sed -i "s/^last_success_started=.*/last_success_started=$(now_rfc3339 -90000)/" "$REG/j"
	run jobreg-dispatch --every 1d j false
	[ "$status" -eq 1 ]
	run jobreg-dispatch --every 1d j sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[ "$(field j runs)" = 3 ]
	jobreg-dispatch --every 1d j true
	[ "$(field j runs)" = 4 ]
	run jobreg-dispatch --every 1d j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ ! -e "$T/ran" ]
}

@test "every: a live run started less than the period ago is not due (0); one that is due is refused as running (75)" {
	bg_dispatch j
	run --separate-stderr jobreg-dispatch --every 1h j touch "$T/ran"
	[ "$status" -eq 0 ]
	[[ $stderr == "jobreg-dispatch: j: not due until "* ]]
	[ -z "$(field j skipped)" ]
	sed -i "s/^started=.*/started=$(now_rfc3339 -7200)/" "$REG/j"
	run jobreg-dispatch --every 1h j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$(field j skipped)" = 1 ]
	[ ! -e "$T/ran" ]
}

@test "every: usage — with --once or --clear, a period of 0, a bad duration" {
	local args
	for args in "--every 1h --once" "--every 1h --clear" "--every 0" "--every x" "--every"; do
		run --separate-stderr jobreg-dispatch $args j touch "$T/ran"
		[ "$status" -eq 64 ] || flunk "$args: $status"
	done
	[ ! -e "$T/ran" ]
	[ ! -e "$REG/j" ]
}

# The period runs from a start to the next: 100 days of a daily job that takes 30%
# of its day, called every 8 hours (the clock simulated: before each call, the
# record's last_success_started and last_success are set to where that virtual
# instant puts them, relative to now).  Its runs start exactly a day apart; a period
# measured from the end would slip 8 hours a run.
@test "every: no drift — 100 simulated periods of a job taking 30% of its period start one period apart" {
	local v last_v=0 runs=1 n
	local -a starts=(0)
	jobreg-dispatch --every 1d j true
	for ((v = 8 * 3600; v <= 100 * 86400; v += 8 * 3600)); do
		# the last success started at virtual LAST_V and ended 30% of a day later
		sed -i \
			-e "s/^last_success_started=.*/last_success_started=$(now_rfc3339 $((last_v - v)))/" \
			-e "s/^last_success=.*/last_success=$(now_rfc3339 $((last_v + 25920 - v)))/" "$REG/j"
		jobreg-dispatch -q --every 1d j true
		field_into n j runs
		if ((n != runs)); then
			runs=$n
			last_v=$v
			starts+=("$v")
		fi
	done
	[ "${#starts[@]}" -eq 101 ] || flunk "${#starts[@]} runs: ${starts[*]}"
	for ((n = 1; n < ${#starts[@]}; n++)); do
		(( starts[n] - starts[n - 1] == 86400 )) || flunk "runs $((n - 1)) and $n start ${starts[n - 1]} and ${starts[n]}"
	done
}
