#!/usr/bin/env bats
# jobreg-set --pause and --resume: SPEC §2 Paused jobs, §3 (the paused_* keys),
# §5 jobreg-set --pause/--resume, §7.

bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# without_pause JOB: the record's lines but the paused_* ones.
without_pause() { grep -v '^paused_' "$REG/$1"; }

OLD=2020-01-01T00:00:00Z

@test "pause writes paused_until=inf, paused_by and paused_note, and the job reads PAUSED" {
	write_record job version=1 status=DONE "since=$OLD" exit=0 runs=2 note='nightly backup'
	run --separate-stderr jobreg-set --pause -m 'kernel upgrade' job
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ -z "$stderr" ]
	[ "$(field job paused_until)" = inf ]
	[ "$(field job paused_by)" = "$(me)" ]
	[ "$(field job paused_note)" = 'kernel upgrade' ]
	jobreg-get --is PAUSED job
	jobreg-get --is DONE job
}

@test "pause leaves the status, the note, the counters and a run going as they were" {
	live_record job
	printf '%s\n' runs=4 failures=1 note=mine >> "$REG/job"
	save job
	jobreg-set --pause job
	diff <(without_pause job) "$T/job.orig"
	[ "$(jobreg-get job)" = RUNNING ]
	[ "$(field job note)" = mine ]
	[ -z "$(field job paused_note)" ]
}

@test "pause of a STALE job counts no lost run: the record stays as it was but for the pause" {
	stale_record job runs=1
	save job
	jobreg-set --pause job
	diff <(without_pause job) "$T/job.orig"
	[ "$(jobreg-get job)" = STALE ]
	[ ! -e "$REG/.job.history" ]
}

@test "pause --for D writes now + D rounded up to the second" {
	local t0=$EPOCHREALTIME
	jobreg-set --pause --for 90m a
	jobreg-set --pause --for 0.2 b
	local t1=$EPOCHREALTIME a b
	a=$(date -u -d "$(field a paused_until)" +%s)
	b=$(date -u -d "$(field b paused_until)" +%s)
	# ceil(t + D) for some t in [t0, t1]
	awk -v u="$a" -v t0="$t0" -v t1="$t1" 'BEGIN { exit !(u >= t0 + 5400 && u < t1 + 5401) }'
	awk -v u="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { exit !(u >= t0 + 0.2 && u < t1 + 1.2) }'
	[ "$(field c paused_until)" = "" ]
	jobreg-set --pause --for inf c
	[ "$(field c paused_until)" = inf ]
}

@test "a pause --for 2s ends by itself: a dispatch after paused_until runs, with no other process involved" {
	jobreg-set --pause --for 2s job
	jobreg-get --is PAUSED job
	run jobreg-dispatch job touch "$T/ran"
	[ "$status" -eq 75 ]
	[ ! -e "$T/ran" ]
	poll_until 4 eval '! jobreg-get --is PAUSED job'
	jobreg-dispatch job touch "$T/ran"
	[ -e "$T/ran" ]
	[ "$(jobreg-get job)" = DONE ]
}

@test "pause of a job with no record makes a PENDING record holding the pause" {
	run --separate-stderr jobreg-set --pause -m why new
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ "$(cut -d= -f1 "$REG/new" | paste -sd' ' -)" = \
		"version status since paused_until paused_by paused_note" ]
	[ "$(field new status)" = PENDING ]
	[ "$(jobreg-get new)" = PENDING ]
	jobreg-get --is PAUSED new
}

@test "pausing again replaces the pause; without -m the pause's note goes" {
	jobreg-set --pause -m first job
	jobreg-set --pause --for 1h job
	[ "$(field job paused_until)" != inf ]
	[ -z "$(field job paused_note)" ]
	[ "$(grep -c '^paused_until=' "$REG/job")" -eq 1 ]
}

@test "pause -a pauses every job with a record, each with -m as paused_note, their notes kept; it makes no record" {
	write_record a version=1 status=PENDING "since=$OLD" note=alpha
	write_record b version=1 status=DONE "since=$OLD" exit=1 runs=1
	run --separate-stderr jobreg-set --pause -a -m 'freeze'
	[ "$status" -eq 0 ] || flunk "$stderr"
	local job
	for job in a b; do
		[ "$(field "$job" paused_until)" = inf ]
		[ "$(field "$job" paused_note)" = freeze ]
	done
	[ "$(field a note)" = alpha ]
	[ -z "$(field b note)" ]
	[ "$(jobreg-get -a -s PAUSED)" = $'a PENDING\nb DONE' ]
	[ "$(ls "$REG")" = $'a\nb' ]
}

@test "pause -a reports a corrupt record with 65 and pauses the others" {
	write_record a version=1 status=PENDING "since=$OLD"
	write_record bad version=1 status=BOGUS
	write_record c version=1 status=PENDING "since=$OLD"
	save bad
	run --separate-stderr jobreg-set --pause -a
	[ "$status" -eq 65 ]
	unchanged bad
	[ "$(field a paused_until)" = inf ]
	[ "$(field c paused_until)" = inf ]
}

@test "resume removes the three keys and nothing else" {
	write_record job version=1 status=DONE "since=$OLD" exit=0 runs=2 note=n
	save job
	jobreg-set --pause --for 1d -m x job
	run --separate-stderr jobreg-set --resume job
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ -z "$stderr" ]
	unchanged job
	! jobreg-get --is PAUSED job
}

@test "resume of a job that is not paused succeeds and writes nothing; of a job with no record, makes nothing" {
	write_record job version=1 status=PENDING "since=$OLD"
	local ino
	ino=$(stat -c %i "$REG/job")
	run --separate-stderr jobreg-set --resume job none
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(stat -c %i "$REG/job")" = "$ino" ]
	[ ! -e "$REG/none" ] && [ ! -e "$REG/.none.lock" ]
	run --separate-stderr jobreg-set -d "$T/nothing" --resume job
	[ "$status" -eq 0 ]
	[ ! -e "$T/nothing" ]
}

@test "resume -a resumes every paused job" {
	jobreg-set --pause a b
	write_record c version=1 status=PENDING "since=$OLD"
	save c
	run --separate-stderr jobreg-set --resume -a
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ -z "$(jobreg-get -a -s PAUSED)" ]
	! grep -q '^paused_' "$REG/a" "$REG/b"
	unchanged c
}

@test "pause and resume usage errors exit 64 and write nothing" {
	write_record job version=1 status=PENDING "since=$OLD"
	save job
	local args
	for args in "--for 1h job" "--for 1h job PENDING" "--pause --resume job" "--resume --pause job" \
		"--pause" "--resume" "--pause -a job" "--resume -a job" "--pause job PENDING" \
		"--resume job done" "--resume -m x job" "--pause --for 0 job" "--pause --for soon job" \
		"--pause --if PENDING job" "--pause --ttl 5 job" "--pause --late-after 1d job" \
		"--pause --signal TERM job" "--pause --wait 1 job" "--resume --for 1h job" \
		"--pause --force job" "-a PENDING"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-set $args
		[ "$status" -eq 64 ] || flunk "jobreg-set $args: exit $status"
		one_line || flunk "jobreg-set $args: $stderr"
		unchanged job
	done
	run --separate-stderr jobreg-set --for 1h job
	[[ "$stderr" == "jobreg-set: --for is for --pause only. Try"* ]]
	run --separate-stderr jobreg-set --pause --resume job
	[[ "$stderr" == "jobreg-set: --cancel, --pause and --resume are each a call of their own. Try"* ]]
	run --separate-stderr jobreg-set -a PENDING
	[[ "$stderr" == "jobreg-set: -a needs --if, --pause or --resume. Try"* ]]
	run --separate-stderr jobreg-set --pause --if PENDING job
	[[ "$stderr" == "jobreg-set: --if is not for --pause. Try"* ]]
}

@test "jobreg-dispatch starts no run of a job paused by --pause, and runs it again after --resume" {
	jobreg-set --pause -m maint job
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 75 ]
	[ -z "$(field job runs)" ]
	jobreg-set --resume job
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ "$(field job runs)" = 1 ]
}
