#!/usr/bin/env bats
# Outcomes (SPEC §2 Warnings, Health; §5 jobreg-dispatch Outcomes, Retries'
# --retry-exit, Logs' --chronic, step 3's replay; jobreg-set --exit): the
# WARNING outcome of --warn-exit and --min-duration, --ok-exit, the lists kept
# on the record as settings, and the truth tables of the outcome and of the
# health.
bats_require_minimum_version 1.5.0
load lib/helper

@test "the outcome of a run reads every row of its truth table" {
	unit_table outcome_table 33
}

@test "the health of SPEC §2 reads every row of its truth table" {
	unit_table health_table 18
}

@test "rsync's 24 with --warn-exit 24 exits 0, says so, and is a WARNING in the record and the history" {
	run --separate-stderr jobreg-dispatch --warn-exit 24 backup sh -c 'exit 24'
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: backup: run 1 ended with a warning: exit 24" ]
	[ "$(field backup exit)" = 24 ]
	[ "$(field backup outcome)" = WARNING ]
	[ "$(field backup warn_exit)" = 24 ]
	[ "$(field backup warnings)" = 1 ]
	[ "$(field backup last_success_warning)" = 1 ]
	[ "$(field backup last_success_run)" = 1 ]
	[ "$(field backup last_success)" = "$(field backup ended)" ]
	[ -z "$(field backup failures)" ]
	[[ $(cat "$REG/.backup.history") == "run=1 outcome=WARNING "*" exit=24 "* ]]
	run jobreg-get -l --history backup
	[[ $output == *WARNING* ]]
	[[ $(jobreg-get --report -a) == "backup  DONE  warning: exit 24  "* ]]
	# -P: the command's status, and the health says the warning
	[[ $(jobreg-get -P -a) == *'jobreg_job_exit_code{name="backup",'*'} 24'* ]]
	[[ $(jobreg-get -P -a) == *'jobreg_job_health{name="backup",'*'health="warning"} 1'* ]]
	# a WARNING is a refinement of DONE in every status list
	[ "$(jobreg-get -a -s WARNING)" = "backup DONE" ]
	[ -z "$(jobreg-get -a -s OK,FAILED)" ]
	jobreg-get --is WARNING backup
	run jobreg-set --if WARNING backup PENDING
	[ "$status" -eq 0 ]
	# not with -q
	run --separate-stderr jobreg-dispatch -q backup sh -c 'exit 24'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(field backup warnings)" = 2 ]
}

@test "--once replays a WARNING with exit 0 and says it was one" {
	jobreg-dispatch -q --warn-exit 24 backup sh -c 'exit 24'
	run --separate-stderr jobreg-dispatch --once backup false
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: backup: already done: with a warning (exit 24, ended $(field backup ended))" ]
	[ "$(field backup runs)" = 1 ]
	# --retry-failed does not run it again: it did not fail
	run jobreg-dispatch --once --retry-failed backup false
	[ "$status" -eq 0 ]
	[ "$(field backup runs)" = 1 ]
}

@test "--once never replays a FAILED outcome as a success: one with no exit status, or exit 0, made by hand, exits 1" {
	write_record job version=1 status=DONE "since=$(now_rfc3339 -100)" outcome=FAILED
	run jobreg-dispatch --once job true
	[ "$status" -eq 1 ]
	[[ $output == *"already done: failed"* ]]
	write_record job version=1 status=DONE "since=$(now_rfc3339 -100)" exit=0 outcome=FAILED
	run jobreg-dispatch --once job true
	[ "$status" -eq 1 ]
	[ "$(field job runs)" = "" ]
}

@test "a WARNING run is a success: LATE clears and consecutive failures drop" {
	write_record job version=1 status=DONE "since=$(now_rfc3339 -100)" exit=1 outcome=FAILED \
		consecutive_failures=2 failures=2 late_after=10 "late_from=$(now_rfc3339 -100)"
	[ "$(jobreg-get -a -s LATE)" = "job DONE" ]
	jobreg-dispatch -q --warn-exit 24 job sh -c 'exit 24'
	[ -z "$(jobreg-get -a -s LATE)" ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(field job failures)" = 2 ]
}

@test "--retries does not retry a WARNING" {
	run --separate-stderr jobreg-dispatch --retries 3 --retry-delay 0.01 --warn-exit 24 job \
		sh -c 'echo "$JOBREG_ATTEMPT" >> "$1"; exit 24' sh "$T/attempts"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/attempts")" = 1 ]
	[ "$(field job outcome)" = WARNING ]
	[ "$(field job runs)" = 1 ]
}

@test "--min-duration 5s makes a quick OK run a WARNING, with how long it ran" {
	run --separate-stderr jobreg-dispatch --min-duration 5s job true
	[ "$status" -eq 0 ]
	[[ $stderr =~ ^"jobreg-dispatch: job: run 1 ended with a warning: ended after 0."[0-9]+"s, under --min-duration 5s"$ ]]
	[ "$(field job outcome)" = WARNING ]
	[ "$(field job min_duration)" = 5 ]
	# a failed run stays FAILED, however short
	run jobreg-dispatch -q job false
	[ "$status" -eq 1 ]
	[ "$(field job outcome)" = FAILED ]
	# '' removes the kept one
	run --separate-stderr jobreg-dispatch --min-duration '' job true
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(field job outcome)" = OK ]
	[ -z "$(field job min_duration)" ]
}

@test "jobreg-set --exit N JOB DONE judges N by the lists the job's dispatcher kept" {
	jobreg-dispatch -q --warn-exit 24 --ok-exit 1 job true
	jobreg-set job RUNNING
	jobreg-set --exit 24 job DONE
	[ "$(field job outcome)" = WARNING ]
	[ "$(field job warnings)" = 1 ]
	[[ $(tail -n 1 "$REG/.job.history") == "run=2 outcome=WARNING "* ]]
	jobreg-set job RUNNING
	jobreg-set --exit 1 job DONE
	[ "$(field job outcome)" = OK ]
	[ -z "$(field job last_success_warning)" ]
	jobreg-set job RUNNING
	jobreg-set --exit 2 job DONE
	[ "$(field job outcome)" = FAILED ]
	# a correction counts a warning once
	jobreg-set --exit 24 job DONE
	jobreg-set --exit 24 job DONE
	[ "$(field job warnings)" = 2 ]
	[ -z "$(field job failures)" ]
	jobreg-set --exit 2 job DONE
	[ "$(field job warnings)" = 1 ]
	[ "$(field job failures)" = 1 ]
}

@test "--ok-exit 24 makes exit 24 OK, the record keeping the exit status" {
	run --separate-stderr jobreg-dispatch --ok-exit 3,24,64-78 job sh -c 'exit 70'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(field job exit)" = 70 ]
	[ "$(field job outcome)" = OK ]
	[ "$(field job ok_exit)" = 3,24,64-78 ]
	[ -z "$(field job warnings)" ]
	# a later call that gives no list goes by the kept one
	run jobreg-dispatch job sh -c 'exit 24'
	[ "$status" -eq 0 ]
	[ "$(field job outcome)" = OK ]
	run jobreg-dispatch -q job sh -c 'exit 79'
	[ "$status" -eq 79 ]
	[ "$(field job outcome)" = FAILED ]
}

@test "a status in both lists, the kept one counted, is a usage error that writes nothing" {
	run --separate-stderr jobreg-dispatch --ok-exit 24 --warn-exit 20-30 job true
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: job: exit status 24 is in both --ok-exit 24 and --warn-exit 20-30" ]
	[ ! -e "$REG/job" ]
	jobreg-dispatch -q --warn-exit 24 job true
	save job
	run --separate-stderr jobreg-dispatch --ok-exit 1,24 job true
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: job: exit status 24 is in both --ok-exit 1,24 and --warn-exit 24 (stored)" ]
	unchanged job
	# replacing the kept one in the same call is no conflict
	jobreg-dispatch --ok-exit 24 --warn-exit 25 job true
	[ "$(field job ok_exit)" = 24 ]
	[ "$(field job warn_exit)" = 25 ]
}

@test "'' removes a kept list, and a bad list is a usage error" {
	jobreg-dispatch -q --warn-exit 24 --ok-exit 3 job true
	jobreg-dispatch -q --warn-exit '' job true
	[ -z "$(field job warn_exit)" ]
	[ "$(field job ok_exit)" = 3 ]
	run jobreg-dispatch job sh -c 'exit 24'
	[ "$status" -eq 24 ]
	[ "$(field job outcome)" = FAILED ]
	for bad in 256 3, 24-3 'a' '1 2'; do
		run --separate-stderr jobreg-dispatch --ok-exit "$bad" job true
		[ "$status" -eq 64 ]
		[[ $stderr == "jobreg-dispatch: bad ok-exit list '$bad' (e.g. 3,24,64-78; statuses 0-255)"* ]]
	done
	run jobreg-dispatch --retry-exit 75 job true
	[ "$status" -eq 64 ]
	[ "$(field job runs)" = 3 ]
}

@test "a stored list that does not parse makes the record corrupt" {
	write_record job version=1 status=DONE exit=0 ok_exit=3-
	run --separate-stderr jobreg-get job
	[ "$status" -eq 65 ]
	[[ $stderr == *"bad ok_exit"* ]]
	write_record job version=1 status=DONE exit=0 warn_exit=300
	run --separate-stderr jobreg-get job
	[ "$status" -eq 65 ]
	[[ $stderr == *"bad warn_exit"* ]]
}

@test "--retry-exit 75 retries an exit 75 and not an exit 3" {
	# shellcheck disable=SC2016  # expanded by sh
	local cmd='echo "$JOBREG_ATTEMPT" >> "$1"; [ "$JOBREG_ATTEMPT" -ge 2 ] && exit 3; exit 75'
	run --separate-stderr jobreg-dispatch -q --retries 3 --retry-delay 0.01 --retry-exit 75 job \
		sh -c "$cmd" sh "$T/attempts"
	[ "$status" -eq 3 ]
	[ "$(cat "$T/attempts")" = $'1\n2' ]
	[ "$(field job failures)" = 2 ]
	# a signal is not retried with --retry-exit, whatever the list
	run jobreg-dispatch -q --retries 3 --retry-delay 0.01 --retry-exit 0-255 sig \
		sh -c 'echo x >> "$1"; kill -TERM $$' sh "$T/sig"
	[ "$status" -eq 143 ]
	[ "$(wc -l < "$T/sig")" -eq 1 ]
}

@test "a run ended by a signal is FAILED whatever the lists" {
	run jobreg-dispatch -q --ok-exit 0-255 job sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	[ "$(field job signal)" = TERM ]
	[ "$(field job outcome)" = FAILED ]
	run jobreg-dispatch -q --timeout 0.1 --warn-exit 0-255 limited sleep 5
	[ "$status" -eq 124 ]
	[ "$(field limited outcome)" = FAILED ]
}

@test "--chronic prints a WARNING run's log and the warning line, with -q too" {
	run --separate-stderr jobreg-dispatch -q --chronic --warn-exit 24 backup \
		sh -c 'echo some files vanished; exit 24'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$stderr" = $'some files vanished\njobreg-dispatch: backup: run 1 ended with a warning: exit 24' ]
	# an OK run prints nothing
	run --separate-stderr jobreg-dispatch --chronic backup sh -c 'echo fine'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}
