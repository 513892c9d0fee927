#!/usr/bin/env bats
# Late jobs (SPEC §2 Late jobs): late_after and late_from, LATE in every status
# list, "late": true in -j, jobreg_job_late in -P, and --is LATE --wait waking
# when a job becomes late, a time and not a file change.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

@test "a job registered with --late-after, never run, is late once that time has passed" {
	# (not late yet, unless a loaded machine took the 3 s to get here)
	local t0=$EPOCHSECONDS
	jobreg-set --late-after 3s nightly PENDING
	run jobreg-get -a -s LATE
	[ -z "$output" ] || [ $((EPOCHSECONDS - t0)) -ge 4 ]
	[ "$(field nightly late_after)" = 3 ]
	[ "$(field nightly late_from)" = "$(field nightly since)" ]
	sleep 4.1
	run jobreg-get -a -s LATE
	[ "$output" = "nightly PENDING" ]
	[[ $(jobreg-get -j nightly) == *', "late": true, "health": "LATE"}' ]]
	run jobreg-get --is LATE nightly
	[ "$status" -eq 0 ]
	jobreg-get -P nightly > "$T/m"
	grep -qx "jobreg_job_late{name=\"nightly\",registry=\"$REG\"} 1" "$T/m"
	grep -qx "jobreg_job_late_after_seconds{name=\"nightly\",registry=\"$REG\"} 3" "$T/m"
}

@test "a success makes the job not late, until late_after has passed again since it" {
	local t0=$EPOCHSECONDS
	jobreg-dispatch --late-after 2 job true
	[ "$(field job late_after)" = 2 ]
	# (not late yet, unless a loaded machine took the 2 s to get here)
	run jobreg-get --is LATE job
	[ "$status" -eq 1 ] || [ $((EPOCHSECONDS - t0)) -ge 3 ]
	[[ $(jobreg-get -j job) != *late\"\:\ true* ]] || [ $((EPOCHSECONDS - t0)) -ge 3 ]
	sleep 2.5
	[[ $(jobreg-get -j job) == *', "late": true, "health": "LATE"}' ]]
	# a failure does not help: late_after counts from the last success
	jobreg-dispatch job sh -c 'exit 1' || true
	run jobreg-get --is LATE job
	[ "$status" -eq 0 ]
	jobreg-dispatch job true
	run jobreg-get --is LATE job
	[ "$status" -eq 1 ]
}

@test "late_after and late_from are kept by every transition; inf removes both" {
	jobreg-set --late-after 25h job PENDING
	from=$(field job late_from)
	sleep 1.1
	jobreg-set job RUNNING
	jobreg-set --exit 0 job DONE
	jobreg-dispatch job true
	jobreg-set --late-after 30h job PENDING
	[ "$(field job late_after)" = 108000 ]
	[ "$(field job late_from)" = "$from" ]
	jobreg-set --late-after inf job PENDING
	[ -z "$(field job late_after)" ]
	[ -z "$(field job late_from)" ]
	jobreg-get -P job > "$T/m"
	! grep -q '^jobreg_job_late' "$T/m"
}

# bats test_tags=serial
@test "--is LATE --wait wakes when the job becomes late, with no file changing" {
	jobreg-set --late-after 1.5 job PENDING
	# late at late_from + 1.5 s (late_from is to the second)
	due=$(echo "$(date -u -d "$(field job late_from)" +%s) + 1.5" | bc)
	run jobreg-get --is LATE --wait 10 job
	[ "$status" -eq 0 ]
	el=$(echo "$(date +%s.%N) - $due" | bc)
	echo "woke $el s after the job became late"
	[ "$(echo "$el >= 0 && $el < 0.5" | bc)" = 1 ]
}

@test "LATE is a word of every status list: get -s and --is, set --if, clear --if" {
	jobreg-set --late-after 0.5 late DONE
	jobreg-set ontime DONE
	sleep 1.1
	run jobreg-get -a -s STALE,FAILED,LATE
	[ "$output" = "late DONE" ]
	run jobreg-set --if late,pending late RUNNING
	[ "$status" -eq 0 ]
	run jobreg-set --if LATE ontime RUNNING
	[ "$status" -eq 1 ]
	run jobreg-clear -a --if LATE
	[ "$status" -eq 0 ]
	[ ! -e "$REG/late" ]
	[ -e "$REG/ontime" ]
}

@test "a bad --late-after is a usage error (64) that writes nothing" {
	run --separate-stderr jobreg-set --late-after soon job PENDING
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-set: bad late-after duration 'soon' (a duration, or inf). Try 'jobreg-set --help'." ]
	run --separate-stderr jobreg-dispatch --late-after -1 job true
	[ "$status" -eq 64 ]
	# 0 would make every job late at once: refused by both
	for cmd in "jobreg-set --late-after 0 job PENDING" "jobreg-dispatch --late-after 0 job true"; do
		run --separate-stderr $cmd
		[ "$status" -eq 64 ] || flunk "$cmd: $status"
	done
	[ ! -e "$REG" ]
}

@test "a duration under a nanosecond, which a record would hold as 0, is a usage error that writes nothing" {
	local cmd
	# --late-after 0.0000000001 was written late_after=0: late at once
	for cmd in "jobreg-set --late-after 0.0000000001 job PENDING" \
		   "jobreg-dispatch --late-after 0.0000000001 job true" \
		   "jobreg-dispatch --timeout 0.0000000001 job true"; do
		# shellcheck disable=SC2086  # the command's words
		run --separate-stderr $cmd
		[ "$status" -eq 64 ] || flunk "$cmd: $status"
		[[ $stderr == *"bad "*"'0.0000000001'"* ]] || flunk "$cmd: $stderr"
	done
	[ ! -e "$REG" ]
	# a nanosecond is still one, and 0 still 0
	jobreg-dispatch --timeout 0 --late-after 0.000000001 job true
	grep -qx 'late_after=0.000000001' "$REG/job"
}

@test "a pause does not stop the late clock: a job paused past its late_after reads LATE, and PAUSED too" {
	jobreg-dispatch --late-after 2s j true
	local until
	until=$(now_rfc3339 3600)
	# (the pause as jobreg-set --pause writes it)
	flock "$REG/.j.lock" sh -c 'cp "$0/j" "$0/.j.tmp"; printf "paused_until=%s\npaused_by=ops@h\n" "$1" >>"$0/.j.tmp"; mv "$0/.j.tmp" "$0/j"' \
		"$REG" "$until"
	run jobreg-get -a -s LATE
	[ -z "$output" ]
	jobreg-get --is PAUSED --wait 1 j
	jobreg-get --is LATE --wait 5 j
	[ "$(jobreg-get -a -s LATE,PAUSED)" = "j DONE" ]
	run jobreg-dispatch j true
	[ "$status" -eq 75 ]
	jobreg-get --is LATE,PAUSED j
}
