#!/usr/bin/env bats
# Overdue runs and health in every reader (SPEC §2 Overdue runs, Health,
# Status lists; §5 jobreg-get -j, -P, --report; jobreg-set --overdue-after,
# --notify-after and the settings-only form; dispatch --overdue-after).
# Records are written by hand where a real run is not the point.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# plant_health: a job of each health, a corrupt record, a paused one and
# a running one that is OK.
plant_health() {
	local old=2020-01-01T00:00:00Z h1 m1
	h1=$(now_rfc3339 -3600)
	m1=$(now_rfc3339 -60)
	write_record stale version=1 status=RUNNING "since=$old" "started=$old" "expires=$old" runs=1
	write_record hung version=1 status=RUNNING "since=$h1" "started=$h1" runs=1 overdue_after=600
	write_record failed version=1 status=DONE "since=$m1" "started=$m1" "ended=$m1" exit=3 \
		outcome=FAILED runs=1 failures=1 consecutive_failures=1
	write_record late version=1 status=PENDING "since=$h1" late_after=60 "late_from=$h1"
	write_record warned version=1 status=DONE "since=$m1" "started=$m1" "ended=$m1" exit=24 \
		outcome=WARNING runs=2 "last_success=$m1" last_success_warning=1 warnings=1 warn_exit=24
	write_record ok version=1 status=DONE "since=$m1" "started=$m1" "ended=$m1" exit=0 outcome=OK \
		runs=1 "last_success=$m1"
	write_record busy version=1 status=RUNNING "since=$m1" "started=$m1" runs=1 overdue_after=3600
	write_record held version=1 status=PENDING "since=$m1" paused_until=inf
	write_record broken version=1 junk
}

@test "a run past --overdue-after reads OVERDUE in -s, --is and --if, and in -j, -P and --report" {
	bg_dispatch slow --overdue-after 1s
	[ "$(field slow overdue_after)" = 1 ]
	# (started is kept to the second: overdue within 2 s of the start)
	run jobreg-get --is OVERDUE --wait 5 slow
	[ "$status" -eq 0 ]
	run jobreg-get -a -s OVERDUE
	[ "$output" = "slow RUNNING" ]
	run jobreg-get -j slow
	[[ $output == *', "overdue": true, "health": "OVERDUE"}' ]] || flunk "$output"
	jobreg-get -P slow > "$T/m"
	grep -qxF "jobreg_job_health{name=\"slow\",registry=\"$REG\",health=\"overdue\"} 1" "$T/m"
	grep -qxF "jobreg_job_health{name=\"slow\",registry=\"$REG\",health=\"ok\"} 0" "$T/m"
	grep -qxF "jobreg_job_overdue{name=\"slow\",registry=\"$REG\"} 1" "$T/m"
	run jobreg-get --report slow
	[[ ${lines[0]} =~ ^slow\ +RUNNING\ +overdue:\ running\ for\ [0-9]+s\ on\ $HOST\  ]] || flunk "$output"
	[ "${lines[1]}" = "1 job: 1 overdue; 1 running" ]
	touch "$T/release"
	wait_bg "$BG_PID"
	# the run is over: no longer overdue, and not a word of DONE
	run jobreg-get --is OVERDUE slow
	[ "$status" -eq 1 ]
	[[ $(jobreg-get -j slow) != *overdue\":\ true* ]]
	grep -qxF "jobreg_job_overdue{name=\"slow\",registry=\"$REG\"} 0" <(jobreg-get -P slow)
}

@test "OVERDUE is a word of every status list: -s, --is, and jobreg-set --if" {
	plant_health
	run --separate-stderr jobreg-get -q -a -s OVERDUE
	[ "$output" = "hung RUNNING" ]
	run --separate-stderr jobreg-get -q -a -s overdue,STALE
	[ "$output" = $'hung RUNNING\nstale STALE' ]
	run jobreg-get --is OVERDUE hung
	[ "$status" -eq 0 ]
	run jobreg-get --is OVERDUE busy
	[ "$status" -eq 1 ]
	save busy
	run --separate-stderr jobreg-set --if OVERDUE busy PENDING
	[ "$status" -eq 1 ]
	unchanged busy
	jobreg-set --if OVERDUE hung PENDING
	[ "$(jobreg-get hung)" = PENDING ]
	# (the setting stays with the job: PENDING is not overdue)
	[ "$(field hung overdue_after)" = 600 ]
	run jobreg-get --is OVERDUE hung
	[ "$status" -eq 1 ]
}

# bats test_tags=serial
@test "get --is OVERDUE --wait wakes at the moment the run becomes overdue, with no file changed" {
	# overdue at started + overdue_after + 1 s, started kept to the second
	local started start
	started=$(now_rfc3339)
	start=$(date -u -d "$started" +%s)
	write_record job version=1 status=RUNNING "since=$started" "started=$started" runs=1 \
		overdue_after=1
	run jobreg-get --is OVERDUE --wait 5 job
	[ "$status" -eq 0 ]
	local now=$EPOCHREALTIME
	local ms=$(( (10#${now/./} / 1000) - (start + 2) * 1000 ))
	# not before the moment, and within 300 ms of it
	[ "$ms" -ge 0 ] && [ "$ms" -lt 300 ] || flunk "woke $ms ms after the moment"
}

@test "jobreg-set --overdue-after JOB on a running job changes its run's limit and leaves status, owner and run alone" {
	bg_dispatch job --overdue-after 1h
	save job
	jobreg-set --overdue-after 1s job
	[ "$(field job overdue_after)" = 1 ]
	# everything else as it was
	diff <(grep -v '^overdue_after=' "$REG/job") <(grep -v '^overdue_after=' "$T/job.orig")
	run jobreg-get --is OVERDUE --wait 5 job
	[ "$status" -eq 0 ]
	jobreg-set --overdue-after inf job
	field_is job overdue_after ''
	run jobreg-get --is OVERDUE job
	[ "$status" -eq 1 ]
	[ "$(jobreg-get job)" = RUNNING ]
	touch "$T/release"
	wait_bg "$BG_PID"
	# the run's end found its record its own: DONE, the limit gone with the setting
	[ "$(jobreg-get job)" = DONE ]
	[ "$(field job runs)" = 1 ]
}

@test "the settings-only form gives a job with no record a PENDING one and keeps a record's status and counters" {
	jobreg-set --notify-after 3 --overdue-after 2h --late-after 1d --keep-runs 5 new
	[ "$(field new status)" = PENDING ]
	[ "$(field new notify_after)" = 3 ]
	[ "$(field new overdue_after)" = 7200 ]
	[ "$(field new late_after)" = 86400 ]
	[ "$(field new keep_runs)" = 5 ]
	write_record finished version=1 status=DONE since=2026-01-01T00:00:00Z exit=3 outcome=FAILED runs=4 \
		failures=2 consecutive_failures=2 notify_after=3 note=kept
	jobreg-set --notify-after 1 --overdue-after 10m finished
	field_is finished notify_after ''
	[ "$(field finished overdue_after)" = 600 ]
	for key in status since exit outcome runs failures consecutive_failures note; do
		[ "$(field finished $key)" = "$(printf '%s\n' status=DONE since=2026-01-01T00:00:00Z exit=3 \
			outcome=FAILED runs=4 failures=2 consecutive_failures=2 note=kept | sed -n "s/^$key=//p")" ] ||
			flunk "$key changed: $(cat "$REG/finished")"
	done
	# a STALE record stays STALE, its lost run not counted by a setting
	write_record gone version=1 status=RUNNING since=2020-01-01T00:00:00Z expires=2020-01-01T00:00:00Z runs=1
	jobreg-set --overdue-after 1h gone
	[ "$(jobreg-get gone)" = STALE ]
	field_is gone lost ''
}

@test "the settings-only form takes only settings, and jobreg-set checks --overdue-after and --notify-after" {
	local args
	for args in "job" "--if DONE --late-after 1h job" "-m note --overdue-after 1h job" \
		"--exit 0 --overdue-after 1h job" "--force --keep-runs 3 job" "--late-after 1h DONE" \
		"--overdue-after 0 job DONE" "--overdue-after soon job" "--notify-after 0 job" \
		"--notify-after x job" "--overdue-after 1h --pause job" "--overdue-after 1h -a --if DONE"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-set $args
		[ "$status" -eq 64 ] || flunk "jobreg-set $args: exit $status"
		one_line || flunk "jobreg-set $args: $stderr"
	done
	[ ! -e "$REG/job" ]
	# with STATUS: written with it
	jobreg-set --overdue-after 90 --notify-after 2 job RUNNING
	[ "$(field job overdue_after)" = 90 ]
	[ "$(field job notify_after)" = 2 ]
}

@test "jobreg-dispatch --overdue-after is written with RUNNING; inf removes it; 0 is refused" {
	# shellcheck disable=SC2016  # expanded by sh
	jobreg-dispatch --overdue-after 90m job sh -c 'jobreg-get -j "$JOBREG_JOB" > "$0"' "$T/during"
	[[ $(cat "$T/during") == *'"overdue_after": 5400, '* ]]
	[ "$(field job overdue_after)" = 5400 ]
	jobreg-dispatch job true
	[ "$(field job overdue_after)" = 5400 ]   # a setting of the job
	jobreg-dispatch --overdue-after inf job true
	field_is job overdue_after ''
	run --separate-stderr jobreg-dispatch --overdue-after 0 job true
	[ "$status" -eq 64 ]
	[[ $stderr == *overdue-after* ]]
}

@test "get --report sorts by health (corrupt first, then STALE to OK) and id, and sums by health, then running and paused" {
	plant_health
	run --separate-stderr jobreg-get --report -a
	[ "$status" -eq 65 ]
	[ "$(printf '%s\n' "${lines[@]}" | cut -d' ' -f1 | paste -sd' ' -)" = \
		"broken stale hung failed late warned busy held ok 9" ]
	local line
	# (planted a minute or an hour ago: a loaded machine may add seconds)
	for line in "hung +RUNNING +overdue: running for 1h([0-9]+s)? " \
		"failed +DONE +FAILED exit 3 " \
		"late +PENDING +LATE by 59m" \
		"warned +DONE +warning: exit 24 +last ok 1m([0-9]+s)? ago " \
		"busy +RUNNING +running for 1m([0-9]+s)? " \
		"held +PENDING +paused until resumed"; do
		printf '%s\n' "${lines[@]}" | grep -qE "^$line" || flunk "no line like '$line' in: $output"
	done
	[ "${lines[9]}" = "9 jobs: 1 corrupt, 1 stale, 1 overdue, 1 failed, 1 late, 1 warning, 3 ok; 2 running, 1 paused" ]
	# a running job keeps the health of its last run, and says so
	write_record again version=1 status=RUNNING "since=$(now_rfc3339)" "started=$(now_rfc3339)" \
		runs=2 failures=1 consecutive_failures=1
	write_record warm version=1 status=RUNNING "since=$(now_rfc3339)" "started=$(now_rfc3339)" \
		runs=2 last_success_warning=1
	# and a run that warned for its --min-duration says so
	write_record short version=1 status=DONE since=2026-01-01T00:00:00Z started=2026-01-01T00:00:00Z \
		ended=2026-01-01T00:00:00Z exit=0 outcome=WARNING min_duration=5 last_success_warning=1
	run jobreg-get --report again warm short ok
	[[ ${lines[0]} =~ ^again\ +RUNNING\ +running\ for\ [0-9]+s,\ last\ run\ failed\  ]] || flunk "$output"
	[[ ${lines[1]} =~ ^short\ +DONE\ +warning:\ took\ 0s,\ under\ 5s\  ]] || flunk "$output"
	[[ ${lines[2]} =~ ^warm\ +RUNNING\ +running\ for\ [0-9]+s,\ last\ run\ a\ warning\  ]] || flunk "$output"
	[ "${lines[4]}" = "4 jobs: 1 failed, 2 warnings, 1 ok; 2 running" ]
}

@test "get -j gives every job's health, overdue, outcome and notified, the 0.5 counters as numbers and the lists as strings" {
	plant_health
	write_record lists version=1 status=DONE since=2026-01-01T00:00:00Z exit=0 outcome=OK runs=3 \
		warnings=2 last_success_run=3 ok_exit=24 warn_exit=3,64-78 min_duration=5 after=backup \
		after_seen=backup:41 notify_after=3 notified=FAILED notify_failures=1 last_success_warning=0
	run --separate-stderr jobreg-get -j -a
	[ "$status" -eq 65 ]
	local job health
	for job in stale:STALE hung:OVERDUE failed:FAILED late:LATE warned:WARNING ok:OK busy:OK held:OK; do
		health=${job#*:} job=${job%:*}
		printf '%s\n' "${lines[@]}" | grep -F "{\"job\": \"$job\", " | grep -qF "\"health\": \"$health\"}" ||
			flunk "$job is not $health: $output"
	done
	[ "${lines[0]}" = '{"job": "broken", "corrupt": true}' ]
	printf '%s\n' "${lines[@]}" | grep -F '{"job": "hung", ' | grep -qF '"overdue_after": 600, '
	printf '%s\n' "${lines[@]}" | grep -F '{"job": "hung", ' | grep -qF ', "overdue": true, '
	printf '%s\n' "${lines[@]}" | grep -F '{"job": "busy", ' | grep -vqF '"overdue"'
	printf '%s\n' "${lines[@]}" | grep -F '{"job": "warned", ' |
		grep -qF '"outcome": "WARNING", "runs": 2, "last_success": '
	local l
	l=$(printf '%s\n' "${lines[@]}" | grep -F '{"job": "lists", ')
	for want in '"outcome": "OK"' '"warnings": 2' '"last_success_run": 3' '"last_success_warning": false' \
		'"ok_exit": "24"' '"warn_exit": "3,64-78"' '"min_duration": 5' '"after": "backup"' \
		'"after_seen": "backup:41"' '"notify_after": 3' '"notified": "FAILED"' '"notify_failures": 1' \
		'"health": "OK"'; do
		[[ $l == *"$want"* ]] || flunk "no $want in $l"
	done
	if [ -x /usr/bin/python3 ]; then
		printf '%s\n' "${lines[@]}" | /usr/bin/python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]'
	fi
}

@test "get -P gives one health series a word, warnings and overdue, for a registry holding every health, and promtool check metrics passes" {
	plant_health
	run --separate-stderr jobreg-get -a -P
	[ "$status" -eq 0 ]
	local metrics=$output job health h
	for job in stale:stale hung:overdue failed:failed late:late warned:warning ok:ok busy:ok held:ok; do
		health=${job#*:} job=${job%:*}
		for h in ok warning late failed overdue stale; do
			grep -qxF "jobreg_job_health{name=\"$job\",registry=\"$REG\",health=\"$h\"} $([ "$h" = "$health" ] && echo 1 || echo 0)" <<<"$metrics" ||
				flunk "$job $h: $metrics"
		done
	done
	grep -qxF "jobreg_job_warnings_total{name=\"warned\",registry=\"$REG\"} 1" <<<"$metrics"
	grep -qxF "jobreg_job_warnings_total{name=\"ok\",registry=\"$REG\"} 0" <<<"$metrics"
	grep -qxF "jobreg_job_overdue{name=\"hung\",registry=\"$REG\"} 1" <<<"$metrics"
	grep -qxF "jobreg_job_overdue{name=\"busy\",registry=\"$REG\"} 0" <<<"$metrics"
	# only jobs with overdue_after have the gauge; DONE's refinements are no status
	[ "$(grep -c '^jobreg_job_overdue{' <<<"$metrics")" -eq 2 ]
	[ "$(grep -c '^jobreg_job_status{.*status="\(ok\|warning\|failed\)"' <<<"$metrics")" -eq 0 ]
	grep -qx '# TYPE jobreg_job_warnings_total counter' <<<"$metrics"
	grep -qx '# TYPE jobreg_job_health gauge' <<<"$metrics"
	command -v promtool >/dev/null 2>&1 ||
		skip "promtool is not installed (Debian package prometheus; .ci/run unpacks it)"
	run promtool check metrics <<<"$metrics"
	[ "$status" -eq 0 ] || flunk "promtool: $output"
	[ -z "$output" ]
}
