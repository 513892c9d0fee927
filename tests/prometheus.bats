#!/usr/bin/env bats
# jobreg-get -P (the Prometheus text format, SPEC §5) and -o FILE (atomic
# output).  The metrics are read back with real parsers: prometheus_client's
# (Debian's python3-prometheus-client) and, where installed, promtool.

bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# The python that has prometheus_client, looked for once a file, not once a
# test (a python start costs a tenth of a second or more): exported for them.
setup_file() {
	PROM_PY=
	local py
	for py in python3 /usr/bin/python3; do
		if "$py" -c 'from prometheus_client.parser import text_string_to_metric_families' 2>/dev/null; then
			PROM_PY=$py
			break
		fi
	done
	export PROM_PY
}

need_parser() {
	[ -n "$PROM_PY" ] || skip "prometheus_client is not installed (apt-get install python3-prometheus-client)"
}

# prom_samples: parse stdin with prometheus_client; print one line per sample,
# "NAME LABELS VALUE" with the labels as sorted JSON, and one line
# "family NAME TYPE" per family.
prom_samples() {
	"$PROM_PY" -c '
import json, sys
from prometheus_client.parser import text_string_to_metric_families
for fam in text_string_to_metric_families(sys.stdin.read()):
    print("family", fam.name, fam.type)
    for s in fam.samples:
        print(s.name, json.dumps(s.labels, sort_keys=True), repr(s.value))
'
}

# sample NAME JOB [STATUS]: the value of one series in $PARSED ("" if absent).
sample() {
	local labels
	if [ -n "${3:-}" ]; then
		labels="{\"name\": \"$2\", \"registry\": \"$REG\", \"status\": \"$3\"}"
	else
		labels="{\"name\": \"$2\", \"registry\": \"$REG\"}"
	fi
	local line
	while IFS= read -r line; do
		if [ "${line% *}" = "$1 $labels" ]; then
			echo "${line##* }"
			return 0
		fi
	done <<<"$PARSED"
	echo ""
}

plant_jobs() {
	write_record ok version=1 status=DONE since=2026-01-01T01:00:00Z host=build01 pid=41 \
		started=2026-01-01T00:00:00Z ended=2026-01-01T01:00:00Z exit=0 runs=12 failures=3 \
		last_success=2026-01-01T01:00:00Z
	write_record failed version=1 status=DONE since=2026-01-01T00:00:00Z \
		started=2025-12-31T23:00:00Z ended=2026-01-01T00:00:00Z exit=3 runs=4 failures=2 lost=1 consecutive_failures=2 \
		last_success=2025-12-01T00:00:00Z
	write_record killed version=1 status=DONE since=2026-01-01T00:00:00Z signal=TERM runs=1 failures=1
	write_record oddsig version=1 status=DONE since=2026-01-01T00:00:00Z signal=NOSUCH
	write_record timed version=1 status=DONE since=2026-01-01T00:00:00Z timeout=60 exit=0 timed_out=1
	write_record running version=1 status=RUNNING since=2026-01-01T00:00:00Z started=2026-01-01T00:00:00Z runs=7
	write_record stale version=1 status=RUNNING since=2020-01-01T00:00:00Z expires=2020-01-01T00:00:01Z \
		started=2020-01-01T00:00:00Z
	write_record waiting version=1 status=PENDING since=2026-01-01T00:00:00Z
}

@test "get -P gives every series of each job, read back by prometheus_client" {
	need_parser
	plant_jobs
	run --separate-stderr jobreg-get -a -P
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	PARSED=$(prom_samples <<<"$output")
	# status: 1 for the job's own, 0 for the other three
	[ "$(sample jobreg_job_status ok done)" = 1.0 ]
	[ "$(sample jobreg_job_status ok pending)" = 0.0 ]
	[ "$(sample jobreg_job_status ok running)" = 0.0 ]
	[ "$(sample jobreg_job_status ok stale)" = 0.0 ]
	[ "$(sample jobreg_job_status stale stale)" = 1.0 ]
	[ "$(sample jobreg_job_status stale running)" = 0.0 ]
	[ "$(sample jobreg_job_status running running)" = 1.0 ]
	[ "$(sample jobreg_job_status waiting pending)" = 1.0 ]
	# exit codes: as recorded, 128+N for a signal, 124 for a time limit; none unless DONE
	[ "$(sample jobreg_job_exit_code ok)" = 0.0 ]
	[ "$(sample jobreg_job_exit_code failed)" = 3.0 ]
	[ "$(sample jobreg_job_exit_code killed)" = 143.0 ]
	[ "$(sample jobreg_job_exit_code timed)" = 124.0 ]
	[ "$(sample jobreg_job_exit_code oddsig)" = 1.0 ]
	[ "$(sample jobreg_job_exit_code running)" = "" ]
	# times, where the record has them
	[ "$(sample jobreg_job_start_time_seconds ok)" = "$(date -u -d 2026-01-01T00:00:00Z +%s).0" ]
	[ "$(sample jobreg_job_end_time_seconds ok)" = "$(date -u -d 2026-01-01T01:00:00Z +%s).0" ]
	[ "$(sample jobreg_job_last_success_time_seconds failed)" = "$(date -u -d 2025-12-01T00:00:00Z +%s).0" ]
	[ "$(sample jobreg_job_start_time_seconds running)" = "$(date -u -d 2026-01-01T00:00:00Z +%s).0" ]
	[ "$(sample jobreg_job_end_time_seconds running)" = "" ]
	[ "$(sample jobreg_job_last_success_time_seconds waiting)" = "" ]
	# counters (0 where the record has none)
	[ "$(sample jobreg_job_runs_total ok)" = 12.0 ]
	[ "$(sample jobreg_job_failures_total ok)" = 3.0 ]
	[ "$(sample jobreg_job_runs_total running)" = 7.0 ]
	[ "$(sample jobreg_job_failures_total waiting)" = 0.0 ]
	[ "$(sample jobreg_job_lost_runs_total failed)" = 1.0 ]
	[ "$(sample jobreg_job_lost_runs_total ok)" = 0.0 ]
	[ "$(sample jobreg_job_consecutive_failures failed)" = 2.0 ]
	[ "$(sample jobreg_job_consecutive_failures ok)" = 0.0 ]
	# the last DONE run's duration, ended - started; none for a run not DONE
	[ "$(sample jobreg_job_duration_seconds ok)" = 3600.0 ]
	[ "$(sample jobreg_job_duration_seconds failed)" = 3600.0 ]
	[ "$(sample jobreg_job_duration_seconds running)" = "" ]
	[ "$(sample jobreg_job_duration_seconds killed)" = "" ]
	grep -qxF "jobreg_corrupt_records {\"registry\": \"$REG\"} 0.0" <<<"$PARSED"
	grep -qxF "jobreg_registry_up {\"registry\": \"$REG\"} 1.0" <<<"$PARSED"
	# the families and their types
	[ "$(grep '^family ' <<<"$PARSED")" = "family jobreg_job_status gauge
family jobreg_job_exit_code gauge
family jobreg_job_start_time_seconds gauge
family jobreg_job_end_time_seconds gauge
family jobreg_job_last_success_time_seconds gauge
family jobreg_job_runs counter
family jobreg_job_failures counter
family jobreg_job_lost_runs counter
family jobreg_job_consecutive_failures gauge
family jobreg_job_duration_seconds gauge
family jobreg_job_late gauge
family jobreg_job_late_after_seconds gauge
family jobreg_job_cancelled_runs counter
family jobreg_job_skipped counter
family jobreg_job_coalesced counter
family jobreg_job_waiting gauge
family jobreg_job_paused gauge
family jobreg_job_health gauge
family jobreg_job_warnings counter
family jobreg_job_overdue gauge
family jobreg_corrupt_records gauge
family jobreg_registry_paused gauge
family jobreg_registry_up gauge" ]
	# 8 jobs: 4 status series each, 5 exit codes
	[ "$(grep -c '^jobreg_job_status ' <<<"$PARSED")" -eq 32 ]
	[ "$(grep -c '^jobreg_job_exit_code ' <<<"$PARSED")" -eq 5 ]
}

@test "get -P gives the cancelled, skipped and coalesced counters and the waiting and paused gauges" {
	need_parser
	write_record busy version=1 status=DONE since=2026-01-01T00:00:00Z exit=143 cancelled=1 \
		cancelled_by=ops@ops01 cancelled_runs=3 skipped=04 coalesced=2 wait_next=9 wait_head=7 \
		paused_until=inf
	write_record over version=1 status=PENDING since=2026-01-01T00:00:00Z \
		paused_until=2020-01-01T00:00:00Z
	hold_place busy 7
	hold_place busy 8
	run --separate-stderr jobreg-get -P busy over never
	[ "$status" -eq 0 ]
	PARSED=$(prom_samples <<<"$output")
	[ "$(sample jobreg_job_cancelled_runs_total busy)" = 3.0 ]
	[ "$(sample jobreg_job_skipped_total busy)" = 4.0 ]
	[ "$(sample jobreg_job_coalesced_total busy)" = 2.0 ]
	[ "$(sample jobreg_job_waiting busy)" = 2.0 ]
	[ "$(sample jobreg_job_paused busy)" = 1.0 ]
	# 0 where the record has none, the pause is over, or there is no record
	local job fam
	for job in over never; do
		for fam in cancelled_runs_total skipped_total coalesced_total waiting paused; do
			[ "$(sample "jobreg_job_$fam" "$job")" = 0.0 ]
		done
	done
	grep -qxF '# TYPE jobreg_job_cancelled_runs_total counter' <<<"$output"
	grep -qxF '# TYPE jobreg_job_waiting gauge' <<<"$output"
}

@test "get -P gives a family's HELP and TYPE once, before its samples, all samples grouped" {
	plant_jobs
	run --separate-stderr jobreg-get -a -P
	[ "$status" -eq 0 ]
	# every line is a HELP, a TYPE or a sample; a family's lines are contiguous
	run awk '
		/^# HELP / { if (help[$3]++) bad = bad " second HELP " $3; cur = $3; seen[$3]++; next }
		/^# TYPE / { if (type[$3]++) bad = bad " second TYPE " $3
			     if ($3 != cur) bad = bad " TYPE apart from HELP " $3
			     if ($4 != "gauge" && $4 != "counter") bad = bad " type " $4; next }
		/^#/ { bad = bad " comment " $0; next }
		{ name = $1; sub(/\{.*/, "", name)
		  if (name != cur) bad = bad " sample " name " outside its family " cur
		  if (!type[name]) bad = bad " no TYPE before " name
		  n[name]++ }
		END { print (bad == "" ? "ok" : bad); for (f in help) if (!type[f]) print "no TYPE for " f }
	' <<<"$output"
	[ "$output" = ok ]
	run jobreg-get -a -P
	[ "$(grep -c '^# HELP ' <<<"$output")" -eq 23 ]
	[ "$(grep -c '^# TYPE ' <<<"$output")" -eq 23 ]
	grep -qx '# TYPE jobreg_job_runs_total counter' <<<"$output"
	grep -qx '# TYPE jobreg_job_failures_total counter' <<<"$output"
	# the last line ends with a line feed, as the format requires
	[ "$(jobreg-get -a -P | tail -c 1 | od -An -c | tr -d ' ')" = '\n' ]
}

@test "get -P of a registry holding every kind of series, slot groups included, passes promtool check metrics" {
	command -v promtool >/dev/null 2>&1 ||
		skip "promtool is not installed (Debian package prometheus; .ci/run unpacks it)"
	plant_jobs
	write_record corrupt version=1 garbage
	write_record late version=1 status=DONE since=2020-01-01T00:00:00Z exit=0 late_after=3600 \
		last_success=2020-01-01T00:00:00Z
	write_record busy version=1 status=DONE since=2026-01-01T00:00:00Z exit=143 cancelled=1 \
		cancelled_by=ops@ops01 cancelled_runs=3 skipped=4 coalesced=2 wait_next=8 wait_head=7 \
		paused_until=inf
	hold_place busy 7
	# a group with a slot held by a live run, and one with every slot free
	bg_dispatch held --slots heavy:3
	jobreg-dispatch --slots db:2 free true
	run --separate-stderr jobreg-get -a -P
	[ "$status" -eq 0 ]
	local metrics=$output family
	# every family of SPEC §5 -P is there (a corrupt record is counted in one)
	for family in jobreg_job_status jobreg_job_exit_code jobreg_job_start_time_seconds \
		jobreg_job_end_time_seconds jobreg_job_last_success_time_seconds jobreg_job_runs_total \
		jobreg_job_failures_total jobreg_job_lost_runs_total jobreg_job_consecutive_failures \
		jobreg_job_duration_seconds jobreg_job_late jobreg_job_late_after_seconds \
		jobreg_job_cancelled_runs_total jobreg_job_skipped_total jobreg_job_coalesced_total \
		jobreg_job_waiting jobreg_job_paused jobreg_corrupt_records jobreg_registry_up \
		jobreg_registry_paused \
		jobreg_slots_in_use jobreg_slots_capacity; do
		grep -q "^$family{.*} [0-9]" <<<"$metrics" || flunk "no sample of $family: $metrics"
	done
	grep -qx '# TYPE jobreg_slots_capacity gauge' <<<"$metrics"
	grep -qxF "jobreg_slots_capacity{registry=\"$REG\",group=\"heavy\"} 3" <<<"$metrics"
	grep -qxF "jobreg_slots_in_use{registry=\"$REG\",group=\"heavy\"} 1" <<<"$metrics"
	grep -qxF "jobreg_slots_in_use{registry=\"$REG\",group=\"db\"} 0" <<<"$metrics"
	grep -qxF "jobreg_job_waiting{name=\"busy\",registry=\"$REG\"} 1" <<<"$metrics"
	grep -qxF "jobreg_job_late{name=\"late\",registry=\"$REG\"} 1" <<<"$metrics"
	# no gauge ends in _total, nor any other complaint
	run promtool check metrics <<<"$metrics"
	[ "$status" -eq 0 ] || flunk "promtool: $output"
	[ -z "$output" ]
}

@test "get -P escapes quotes, backslashes and newlines of the registry path in its label" {
	need_parser
	export REG="$BATS_TEST_TMPDIR/a \"quoted\" back\\slash"$'\n'"new line"
	export JOBREG_DIR=$REG
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	run --separate-stderr jobreg-get -P job
	[ "$status" -eq 0 ]
	[[ "$output" == *'registry="'"$BATS_TEST_TMPDIR"'/a \"quoted\" back\\slash\nnew line"'* ]]
	run "$PROM_PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
regs = {s.labels["registry"] for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples}
assert regs == {sys.argv[1]}, regs
print("ok")' "$REG" <<<"$output"
	[ "$output" = ok ]
}

@test "get -P labels a relative -d with the registry's absolute path" {
	need_parser
	write_record job version=1 status=PENDING since=2026-01-01T00:00:00Z
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr jobreg-get -d ./reg/ -P job
	[ "$status" -eq 0 ]
	PARSED=$(prom_samples <<<"$output")
	[ "$(sample jobreg_job_status job pending)" = 1.0 ]
	run --separate-stderr jobreg-get -d reg -P -a
	PARSED=$(prom_samples <<<"$output")
	[ "$(sample jobreg_job_status job pending)" = 1.0 ]
}

@test "get -P counts corrupt and unreadable records in jobreg_corrupt_records, gives them no job series and exits 0" {
	need_parser
	write_record good version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	write_record bad version=1 status=DONE junk
	mkfifo "$REG/fifo"
	# data, not a failure: the errors are printed, the exit status is 0
	run --separate-stderr timeout 5 jobreg-get -a -P
	[ "$status" -eq 0 ]
	[ "${stderr_lines[0]}" = "jobreg-get: bad: corrupt record $REG/bad: line without '='" ]
	[ "${stderr_lines[1]}" = "jobreg-get: fifo: not a regular file: $REG/fifo" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	PARSED=$(prom_samples <<<"$output")
	grep -qxF "jobreg_corrupt_records {\"registry\": \"$REG\"} 2.0" <<<"$PARSED"
	grep -qxF "jobreg_registry_up {\"registry\": \"$REG\"} 1.0" <<<"$PARSED"
	[ "$(sample jobreg_job_status good done)" = 1.0 ]
	[ -z "$(grep -E '"name": "(bad|fifo)"' <<<"$PARSED")" ]
	# -q: not a word, as cron mails whatever a job prints
	run --separate-stderr timeout 5 jobreg-get -q -a -P
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(prom_samples <<<"$output")" = "$PARSED" ]
	# named jobs and -o alike
	run --separate-stderr timeout 5 jobreg-get -q -P -o "$BATS_TEST_TMPDIR/out.prom" good bad fifo
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	grep -qxF "jobreg_corrupt_records{registry=\"$REG\"} 2" "$BATS_TEST_TMPDIR/out.prom"
	# the other formats still fail: 65 for the first, corrupt, record
	for f in "" -l -j; do
		run --separate-stderr timeout 5 jobreg-get -q $f -a
		[ "$status" -eq 65 ]
		[ "${#stderr_lines[@]}" -eq 2 ]
	done
}

@test "get -P says jobreg_registry_up 0 for a registry that is missing or cannot be listed, 1 for one listed" {
	need_parser
	# missing (a typo): no jobs, no corrupt records, and not up; exit 0 as any reader of a missing registry
	run --separate-stderr jobreg-get -d "$BATS_TEST_TMPDIR/none" -a -P
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(prom_samples <<<"$output" | grep -v '^family ')" = "jobreg_corrupt_records {\"registry\": \"$BATS_TEST_TMPDIR/none\"} 0.0
jobreg_registry_paused {\"registry\": \"$BATS_TEST_TMPDIR/none\"} 0.0
jobreg_registry_up {\"registry\": \"$BATS_TEST_TMPDIR/none\"} 0.0" ]
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
	# named jobs of a missing registry are PENDING, and it is not up
	run --separate-stderr jobreg-get -d "$BATS_TEST_TMPDIR/none" -P job
	[ "$status" -eq 0 ]
	REG=$BATS_TEST_TMPDIR/none
	PARSED=$(prom_samples <<<"$output")
	[ "$(sample jobreg_job_status job pending)" = 1.0 ]
	grep -qxF "jobreg_registry_up {\"registry\": \"$REG\"} 0.0" <<<"$PARSED"
	# an empty registry is up
	mkdir "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr jobreg-get -d "$BATS_TEST_TMPDIR/empty" -a -P
	[ "$status" -eq 0 ]
	grep -qx "jobreg_registry_up{registry=\"$BATS_TEST_TMPDIR/empty\"} 1" <<<"$output"
	# not a directory: its error and exit status, and the metrics still say it is down
	: > "$BATS_TEST_TMPDIR/file"
	run --separate-stderr jobreg-get -d "$BATS_TEST_TMPDIR/file" -a -P -o "$BATS_TEST_TMPDIR/out.prom"
	[ "$status" -eq 74 ]
	[ "$stderr" = "jobreg-get: open registry $BATS_TEST_TMPDIR/file: Not a directory" ]
	[ "$(grep -v '^#' "$BATS_TEST_TMPDIR/out.prom")" = "jobreg_corrupt_records{registry=\"$BATS_TEST_TMPDIR/file\"} 0
jobreg_registry_paused{registry=\"$BATS_TEST_TMPDIR/file\"} 0
jobreg_registry_up{registry=\"$BATS_TEST_TMPDIR/file\"} 0" ]
	# a registry that this user may not read
	command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to drop privileges"
	public_dir jobreg-get-up
	PERMDIR=$PUBLIC
	mkdir -m 700 "$PERMDIR/reg"
	echo 'version=1' > "$PERMDIR/reg/job"
	run --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$JOBREG_ROOT/bin/jobreg-get" -d "$PERMDIR/reg" -a -P
	[ "$status" -eq 77 ]
	[ "$stderr" = "jobreg-get: open registry $PERMDIR/reg: Permission denied" ]
	grep -qx "jobreg_registry_up{registry=\"$PERMDIR/reg\"} 0" <<<"$output"
	[ -z "$(grep '^jobreg_job_' <<<"$output")" ]
}

@test "get -P -s gives series only for the jobs with the statuses asked" {
	need_parser
	plant_jobs
	run --separate-stderr jobreg-get -a -P -s FAILED,STALE
	[ "$status" -eq 0 ]
	PARSED=$(prom_samples <<<"$output")
	local jobs
	jobs=$(grep '^jobreg_job_status ' <<<"$PARSED" | sed 's/.*"name": "\([^"]*\)".*/\1/' | sort -u | tr '\n' ' ')
	[ "$jobs" = "failed killed oddsig stale timed " ]
	run --separate-stderr jobreg-get -P -s OK ok failed waiting
	PARSED=$(prom_samples <<<"$output")
	[ "$(grep -c '^jobreg_job_status ' <<<"$PARSED")" -eq 4 ]
	[ "$(sample jobreg_job_status ok done)" = 1.0 ]
}

# --- -o FILE -----------------------------------------------------------------

# temps_in DIR: the names of the hidden files in DIR (empty when none).
temps_in() {
	find "$1" -maxdepth 1 -name '.*' ! -name . -printf '%f\n'
}

@test "get -o writes the output to FILE instead of standard output, in every format" {
	plant_jobs
	local out="$BATS_TEST_TMPDIR/out/jobs.txt"
	mkdir "$BATS_TEST_TMPDIR/out"
	local f
	for f in "" -l -j -P; do
		run --separate-stderr jobreg-get $f -a
		local want=$output
		run --separate-stderr jobreg-get $f -o "$out" -a
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		[ -z "$stderr" ]
		[ "$(cat "$out")" = "$want" ]
		[ -z "$(temps_in "$BATS_TEST_TMPDIR/out")" ]
	done
	# a relative FILE, in the working directory
	cd "$BATS_TEST_TMPDIR/out"
	run --separate-stderr jobreg-get -o rel.prom -P ok
	[ "$status" -eq 0 ]
	grep -q '^jobreg_job_status{name="ok",' rel.prom
	[ -z "$(temps_in .)" ]
}

@test "get -o makes a new FILE with mode 0666 & ~umask, and a replaced one keeps its mode" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	local out="$BATS_TEST_TMPDIR/metrics.prom"
	run sh -c 'umask 022; exec jobreg-get -P -o "$1" job' _ "$out"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$out")" = 644 ]
	rm "$out"
	run sh -c 'umask 002; exec jobreg-get -o "$1" job' _ "$out"
	[ "$(stat -c %a "$out")" = 664 ]
	chmod 600 "$out"
	local before
	before=$(stat -c %i "$out")
	run sh -c 'umask 022; exec jobreg-get -P -o "$1" job' _ "$out"
	[ "$status" -eq 0 ]
	[ "$(stat -c %a "$out")" = 600 ]
	[ "$(stat -c %i "$out")" != "$before" ]
	grep -q 'name="job"' "$out"
	[ -z "$(temps_in "$BATS_TEST_TMPDIR")" ]
}

@test "get -o never lets a reader see a partial file while it rewrites a large one" {
	# 3000 jobs make about 2 MB of metrics; a reader copies the file over and
	# over while it is rewritten, and every copy must be whole: 25 lines per
	# job, 44 of HELP and TYPE, and the registry's two lines last.
	local i
	mkdir -p "$REG"
	local note
	note=$(printf 'x%.0s' $(seq 40))
	for i in $(seq 3000); do
		printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nstarted=2026-01-01T00:00:00Z\nended=2026-01-01T00:00:01Z\nexit=0\nlast_success=2026-01-01T00:00:01Z\nnote=%s\n' \
			"$note" > "$REG/job$i"
	done
	local out="$BATS_TEST_TMPDIR/m/jobreg.prom" snap="$BATS_TEST_TMPDIR/snap" done="$BATS_TEST_TMPDIR/done"
	mkdir "$BATS_TEST_TMPDIR/m"
	jobreg-get -a -P -o "$out"
	local lines
	lines=$(wc -l < "$out")
	[ "$lines" -eq 75049 ]
	( for i in $(seq 25); do jobreg-get -a -P -o "$out" || exit 1; done; : > "$done" ) 3>&- &
	local writer=$!
	BG_PIDS+=("$writer")
	local reads=0
	while [ ! -e "$done" ] && [ "$reads" -lt 100000 ]; do
		cat "$out" > "$snap"
		reads=$((reads + 1))
		[ "$(wc -l < "$snap")" -eq "$lines" ]
		[ "$(tail -n 1 "$snap")" = "jobreg_registry_up{registry=\"$REG\"} 1" ]
	done
	wait "$writer"
	echo "whole copies read while rewriting: $reads" >&3
	[ "$reads" -gt 1 ]
	[ -z "$(temps_in "$BATS_TEST_TMPDIR/m")" ]
}

@test "get -o still writes FILE when a record is corrupt, and exits 65 (0 with -P)" {
	write_record good version=1 status=DONE since=2026-01-01T00:00:00Z
	write_record bad version=1 status=DONE junk
	local out="$BATS_TEST_TMPDIR/out"
	run --separate-stderr jobreg-get -a -j -o "$out"
	[ "$status" -eq 65 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	grep -qxF '{"job": "bad", "corrupt": true}' "$out"
	run --separate-stderr jobreg-get -a -P -o "$out"
	[ "$status" -eq 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	grep -qx "jobreg_corrupt_records{registry=\"$REG\"} 1" "$out"
}

# bats test_tags=multiuser
@test "get -o reports a FILE it cannot create or may not replace with 73 or 77 and one line, leaving no temp file" {
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	run --separate-stderr jobreg-get -o "$BATS_TEST_TMPDIR/missing/out.prom" -P job
	[ "$status" -eq 73 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: cannot write $BATS_TEST_TMPDIR/missing/out.prom: "*"No such file or directory" ]]
	# FILE is a directory
	mkdir "$BATS_TEST_TMPDIR/adir"
	run --separate-stderr jobreg-get -o "$BATS_TEST_TMPDIR/adir" job
	[ "$status" -eq 73 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "jobreg-get: cannot write $BATS_TEST_TMPDIR/adir: not a regular file" ]
	[ -d "$BATS_TEST_TMPDIR/adir" ]
	# a symlink (root's -o /dev/stdout must not turn it into a file)
	echo target > "$BATS_TEST_TMPDIR/target"
	ln -s target "$BATS_TEST_TMPDIR/link"
	run --separate-stderr jobreg-get -o "$BATS_TEST_TMPDIR/link" job
	[ "$status" -eq 73 ]
	[ -L "$BATS_TEST_TMPDIR/link" ]
	[ "$(cat "$BATS_TEST_TMPDIR/target")" = target ]
	[ -z "$(temps_in "$BATS_TEST_TMPDIR")" ]
	run --separate-stderr jobreg-get -o "$BATS_TEST_TMPDIR/adir/" job
	[ "$status" -eq 73 ]
	run --separate-stderr jobreg-get -o '' job
	[ "$status" -eq 64 ]
	# permission denied, as a user who may not write the directory
	need_setpriv
	public_dir jobreg-get-out
	PERMDIR=$PUBLIC
	cp -r "$REG" "$PERMDIR/reg"
	chmod -R a+rX "$PERMDIR/reg"
	echo old > "$PERMDIR/out.prom"
	run --separate-stderr as_nobody jobreg-get -d "$PERMDIR/reg" -P -o "$PERMDIR/out.prom" job
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-get: cannot write $PERMDIR/out.prom: create $PERMDIR/.out.prom."*": Permission denied" ]]
	[ "$(cat "$PERMDIR/out.prom")" = old ]
	[ -z "$(temps_in "$PERMDIR")" ]
}

@test "get -o exits 74 when the write or fsync fails, keeps FILE as it was and removes its temp file" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1 ||
		skip "this strace cannot inject faults (strace >= 4.16 needed)"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	write_record job version=1 status=DONE since=2026-01-01T00:00:00Z
	local out="$BATS_TEST_TMPDIR/o/out.prom" fault
	mkdir "$BATS_TEST_TMPDIR/o"
	echo old > "$out"
	for fault in write:error=ENOSPC:when=1 fsync:error=EIO:when=1 rename,renameat,renameat2:error=EIO; do
		run --separate-stderr strace -o /dev/null -e trace=write,fsync,rename,renameat,renameat2 \
			-e inject="$fault" "$JOBREG_ROOT/bin/jobreg-get" -P -o "$out" job
		[ "$status" -eq 74 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "jobreg-get: cannot write $out: "* ]]
		[ "$(cat "$out")" = old ]
		[ -z "$(temps_in "$BATS_TEST_TMPDIR/o")" ]
	done
}

# --- the alert rules, on the series as Prometheus stores them ----------------

need_promtool() {
	command -v promtool >/dev/null 2>&1 ||
		skip "promtool is not installed (Debian package prometheus; .ci/run unpacks it)"
}

# readme_rules: the rule file that the README gives to paste.
readme_rules() {
	sed -n '/^Alert rules to paste:$/,/^[^ ]/s/^    //p' "$JOBREG_ROOT/README.md"
}

# scraped [FILE...]: promtool input series (YAML lines of input_series) for
# what Prometheus stores when it scrapes a node_exporter whose textfile
# collector reads the -P output FILEs: each file's samples and
# node_textfile_mtime_seconds{file="FILE"}, as node_exporter serves them;
# then the scrape's target labels job="node" and instance="host1:9100",
# a label of the file with either name being renamed exported_job or
# exported_instance (honor_labels: false, the default).  Without FILEs:
# the text that a node_exporter served, on stdin.  Each series holds its
# value at time 0 and at $NOW, the interval of the tests, so that rules
# evaluated at $NOW see time() as the real time.
scraped() {
	"$PROM_PY" -c '
import json, os, sys
from prometheus_client.parser import text_string_to_metric_families
target = {"job": "node", "instance": "host1:9100"}
texts = []
for path in sys.argv[1:]:
    with open(path) as f:
        texts.append(f.read())
    texts.append("node_textfile_mtime_seconds{file=%s} %d\n" % (json.dumps(path), int(os.stat(path).st_mtime)))
if not sys.argv[1:]:
    texts.append(sys.stdin.read())
for text in texts:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if not s.name.startswith(("jobreg_", "node_textfile_mtime_seconds")):
                continue
            labels = dict(s.labels)
            for k in target:
                if k in labels:
                    labels["exported_" + k] = labels.pop(k)
            labels.update(target)
            series = s.name + "{" + ",".join("%s=%s" % (k, json.dumps(v)) for k, v in sorted(labels.items())) + "}"
            print("      - series: %s\n        values: \"%r %r\"" % (json.dumps(series), s.value, s.value))
' "$@"
}

# expect ALERT [LABELS]...: a promtool alert test at $NOW: ALERT fires once
# for each LABELS (a YAML flow mapping's inside, the target labels added),
# and for nothing else.
expect() {
	local alert=$1; shift
	printf '      - eval_time: %ss\n        alertname: %s\n' "$NOW" "$alert"
	if [ $# -eq 0 ]; then
		echo '        exp_alerts: []'
		return
	fi
	echo '        exp_alerts:'
	local labels
	for labels in "$@"; do
		printf '          - exp_labels: {job: node, instance: "host1:9100", %s}\n' "$labels"
	done
}

@test "the README's alert rules fire for exactly the jobs and registries they name, scraped through node_exporter" {
	need_parser
	need_promtool
	local t=$BATS_TEST_TMPDIR tf=$BATS_TEST_TMPDIR/textfile
	mkdir "$tf"
	local hour_ago days_ago
	hour_ago=$(now_rfc3339 -3600)
	days_ago=$(now_rfc3339 -172800)
	local ended="since=$hour_ago started=$hour_ago ended=$hour_ago"
	write_record fresh version=1 status=DONE $ended exit=0 runs=5 last_success=$hour_ago
	write_record old version=1 status=DONE since=$days_ago ended=$days_ago exit=0 runs=3 last_success=$days_ago
	write_record failed version=1 status=DONE $ended exit=2 runs=4 failures=1 consecutive_failures=1 \
		last_success=$hour_ago
	write_record killed version=1 status=DONE $ended signal=KILL runs=2 failures=1 consecutive_failures=1 \
		last_success=$hour_ago
	write_record timed version=1 status=DONE $ended exit=0 timed_out=1 runs=2 failures=1 \
		consecutive_failures=1 last_success=$hour_ago
	write_record never version=1 status=DONE $ended exit=1 runs=2 failures=2 consecutive_failures=2
	# failed before, running again: the failure stands until a run succeeds
	write_record again version=1 status=RUNNING since=$hour_ago started=$hour_ago runs=3 failures=2 \
		consecutive_failures=2
	write_record first version=1 status=RUNNING since=$hour_ago started=$hour_ago runs=1
	write_record stale version=1 status=RUNNING since=$days_ago expires=$hour_ago runs=1
	write_record waiting version=1 status=PENDING since=$hour_ago
	write_record flaky version=1 status=DONE $ended exit=1 runs=6 failures=3 consecutive_failures=3 \
		last_success=$days_ago
	write_record lost version=1 status=PENDING since=$hour_ago runs=2 failures=1 lost=1 \
		consecutive_failures=1 last_success=$hour_ago
	write_record late version=1 status=PENDING since=$days_ago late_after=3600 late_from=$days_ago
	# rsync's 24 with --warn-exit 24; a run past its --overdue-after; one not yet
	write_record warned version=1 status=DONE $ended exit=24 outcome=WARNING runs=2 \
		last_success=$hour_ago last_success_warning=1 warnings=1
	write_record hung version=1 status=RUNNING since=$days_ago started=$days_ago runs=1 \
		overdue_after=3600
	write_record slow version=1 status=RUNNING since=$hour_ago started=$hour_ago runs=1 \
		overdue_after=7200
	write_record broken version=1 junk
	jobreg-get -q -a -P -o "$tf/jobreg.prom"
	REG=$t/ok write_record good version=1 status=DONE $ended exit=0 runs=1 last_success=$hour_ago
	jobreg-get -d "$t/ok" -a -P -o "$tf/ok-jobreg.prom"
	# a registry that is not there (a typo in -d)
	jobreg-get -d "$t/typo" -a -P -o "$tf/typo-jobreg.prom"
	# a file that cron stopped refreshing an hour ago
	REG=$t/late write_record good version=1 status=DONE $ended exit=0 runs=1 last_success=$hour_ago
	jobreg-get -d "$t/late" -a -P -o "$tf/late-jobreg.prom"
	touch -d "@$(($(date +%s) - 3600))" "$tf/late-jobreg.prom"
	readme_rules > "$t/rules.yml"
	local alerts
	alerts=$(sed -n 's/^ *- alert: //p' "$t/rules.yml")
	[ -n "$alerts" ]
	NOW=$(date +%s)
	local reg="registry: \"$REG\"" alert
	{
		echo 'rule_files: [rules.yml]'
		echo "evaluation_interval: ${NOW}s"
		echo 'tests:'
		# every file: each rule fires for the jobs, registries or files it names
		echo "  - interval: ${NOW}s"
		echo '    input_series:'
		scraped "$tf"/*.prom
		echo '    alert_rule_test:'
		for alert in $alerts; do
			case $alert in
			JobStale) expect "$alert" "name: stale, $reg, status: stale" ;;
			JobFailed) expect "$alert" "name: again, $reg" "name: failed, $reg" "name: flaky, $reg" \
				"name: killed, $reg" "name: lost, $reg" "name: never, $reg" "name: timed, $reg" ;;
			JobFailedThreeTimesInARow) expect "$alert" "name: flaky, $reg" ;;
			JobLate) expect "$alert" "name: late, $reg" ;;
			JobLostARun) expect "$alert" "name: lost, $reg" ;;
			JobWarning) expect "$alert" "name: warned, $reg, health: warning" ;;
			JobOverdue) expect "$alert" "name: hung, $reg" ;;
			JobregCorruptRecords) expect "$alert" "$reg" ;;
			JobregRegistryDown) expect "$alert" "registry: \"$t/typo\"" ;;
			JobregMetricsOld) expect "$alert" "file: \"$tf/late-jobreg.prom\"" ;;
			*) flunk "the README's rule $alert is not tested here" ;;
			esac
		done
		# a healthy registry, freshly exported: no rule fires
		echo "  - interval: ${NOW}s"
		echo '    input_series:'
		scraped "$tf/ok-jobreg.prom"
		echo '    alert_rule_test:'
		for alert in $alerts; do expect "$alert"; done
	} > "$t/test.yml"
	run promtool test rules "$t/test.yml"
	echo "$output"
	[ "$status" -eq 0 ]
	# jobreg-get(1) quotes some of these rules
	local e
	while IFS= read -r e; do
		sed -n 's/^ *expr: //p' "$t/rules.yml" | grep -qxF -- "$e" || flunk "jobreg-get(1)'s rule '$e' is not the README's"
	done < <(sed -n '/^and alert rules such as$/,/^\.Ed$/p' "$JOBREG_ROOT/man/jobreg-get.1" | grep -v '^[.a]')
}

@test "node_exporter's textfile collector serves the -P files as the alert rules' test takes them" {
	need_parser
	local exporter
	exporter=$(command -v prometheus-node-exporter || command -v node_exporter) ||
		skip "node_exporter is not installed (Debian package prometheus-node-exporter)"
	local t=$BATS_TEST_TMPDIR tf=$BATS_TEST_TMPDIR/textfile
	mkdir "$tf"
	write_record done version=1 status=DONE since=2026-01-01T00:00:00Z exit=3 runs=2 failures=1
	write_record broken version=1 junk
	run --separate-stderr jobreg-get -a -P -o "$tf/jobreg.prom"
	jobreg-get -d "$t/none" -a -P -o "$tf/none-jobreg.prom"
	local port
	port=$("$PROM_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$exporter" --collector.disable-defaults --collector.textfile --collector.textfile.directory="$tf" \
		--web.listen-address="127.0.0.1:$port" 3>&- >"$t/exporter.log" 2>&1 &
	BG_PIDS+=("$!")
	run "$PROM_PY" -c '
import sys, time, urllib.request
for _ in range(100):
    try:
        sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("no answer from " + sys.argv[1])' "http://127.0.0.1:$port/metrics"
	[ "$status" -eq 0 ] || { cat "$t/exporter.log"; false; }
	grep -qx 'node_textfile_scrape_error 0' <<<"$output"
	local served
	served=$(scraped <<<"$output" | paste - - | LC_ALL=C sort)
	[ -n "$served" ]
	[ "$served" = "$(scraped "$tf"/*.prom | paste - - | LC_ALL=C sort)" ]
	grep -q 'jobreg_job_exit_code{instance=\\"host1:9100\\",job=\\"node\\",name=\\"done\\",' <<<"$served"
}

# --- the alert rules over a job's story (issue 31) ---------------------------

# timeline FILE:COUNT[:SHIFT]...: promtool input series (YAML lines of
# input_series) for a Prometheus that scrapes the -P text of each FILE
# COUNT times in a row, one scrape an interval from time 0: a series a file
# lacks is stale from its first scrape on (Prometheus's staleness marker),
# as when a scrape no longer has it.  SHIFT: seconds to take off the
# *_time_seconds values (a file printed with the clock SHIFT ahead).
timeline() {
	"$PROM_PY" -c '
import json, sys
from prometheus_client.parser import text_string_to_metric_families
segments, order, seen = [], [], set()
for arg in sys.argv[1:]:
    path, count, *shift = arg.split(":")
    shift = int(shift[0]) if shift else 0
    values = {}
    with open(path) as f:
        for fam in text_string_to_metric_families(f.read()):
            for s in fam.samples:
                v = s.value - shift if s.name.endswith("_time_seconds") else s.value
                key = s.name + "{" + ",".join("%s=%s" % (k, json.dumps(v2)) for k, v2 in sorted(s.labels.items())) + "}"
                values[key] = v
                if key not in seen:
                    seen.add(key)
                    order.append(key)
    segments.append((int(count), values))
for key in order:
    out, present = [], False
    for count, values in segments:
        if key in values:
            out.append("%r+0x%d" % (values[key], count - 1))
            present = True
        elif present:
            out.append("stale" + (" _x%d" % (count - 1) if count > 1 else ""))
            present = False
        else:
            out.append("_x%d" % count)
    print("      - series: %s\n        values: \"%s\"" % (json.dumps(key), " ".join(out)))
' "$@"
}

# expect_at T ALERT [LABELS]...: as expect, at time T (seconds), without
# the target labels.
expect_at() {
	local t=$1 alert=$2; shift 2
	printf '      - eval_time: %ss\n        alertname: %s\n' "$t" "$alert"
	if [ $# -eq 0 ]; then
		echo '        exp_alerts: []'
		return
	fi
	echo '        exp_alerts:'
	local labels
	for labels in "$@"; do
		printf '          - exp_labels: {%s}\n' "$labels"
	done
}

@test "the README's JobFailed fires at every scrape of a job that fails every minute, during its runs too" {
	need_parser
	need_promtool
	local k
	# each run is scraped while it runs and once it has failed
	for k in 1 2 3; do
		# shellcheck disable=SC2016  # expanded by sh
		run jobreg-dispatch job -- sh -c 'jobreg-get -P -o "$1" job; exit 1' sh "$T/during$k.prom"
		[ "$status" -eq 1 ]
		grep -qx "jobreg_job_status{name=\"job\",registry=\"$REG\",status=\"running\"} 1" "$T/during$k.prom"
		jobreg-get -P -o "$T/after$k.prom" job
	done
	readme_rules > "$T/rules.yml"
	local job="name: job, registry: \"$REG\""
	{
		echo 'rule_files: [rules.yml]'
		echo 'evaluation_interval: 15s'
		echo 'tests:'
		echo '  - interval: 15s'
		echo '    input_series:'
		# scraped every 15 s: three scrapes a run (45 s), one between runs
		timeline "$T/during1.prom:3" "$T/after1.prom:1" "$T/during2.prom:3" "$T/after2.prom:1" \
			"$T/during3.prom:3" "$T/after3.prom:1"
		echo '    alert_rule_test:'
		# nothing before the first run ended; from then on, at every scrape
		for t in 0 15 30; do expect_at "$t" JobFailed; done
		for t in 45 60 75 90 105 120 135 150 165; do expect_at "$t" JobFailed "$job"; done
		expect_at 150 JobFailedThreeTimesInARow
		expect_at 165 JobFailedThreeTimesInARow "$job"
	} > "$T/test.yml"
	run promtool test rules "$T/test.yml"
	echo "$output"
	[ "$status" -eq 0 ]
}

# snapshot FILE TIME LINES...: the -P text of a record of LINES, as it is
# read at the story's TIME (seconds): "@N" in a line is the story's time N.
# The record's times are planted with the clock TIME ahead of the story,
# so that -P judges late as at TIME; the shift to take off is SHIFT.
snapshot() {
	local file=$1 at=$2 line; shift 2
	local base=$EPOCHSECONDS lines=()
	for line in "$@"; do
		case $line in
		*=@*) lines+=("${line%%=*}=$(TZ=UTC0 printf '%(%Y-%m-%dT%H:%M:%SZ)T' "$((base + ${line#*=@} - at))")") ;;
		*) lines+=("$line") ;;
		esac
	done
	write_record daily "${lines[@]}"
	jobreg-get -P -o "$file" daily
	SHIFT=$((base - at))
}

@test "no README alert fires for a daily job that ends 10 minutes later each day; JobLate fires when it misses a day" {
	need_parser
	need_promtool
	readme_rules > "$T/rules.yml"
	local alerts
	alerts=$(sed -n 's/^ *- alert: //p' "$T/rules.yml")
	local late="late_after=90000 late_from=@0" d start end next segs=() n=0 times=()
	local last=
	# registered with --late-after 25h at 0; day d runs from 03:00, 30 minutes
	# and 10 more each day
	snapshot "$T/s$n.prom" 0 version=1 status=PENDING since=@0 $late
	segs+=("$T/s$n.prom:$((10800 / 60)):$SHIFT")
	for d in 0 1 2 3; do
		start=$((d * 86400 + 10800)) end=$((d * 86400 + 10800 + 1800 + d * 600))
		n=$((n + 1))
		snapshot "$T/s$n.prom" "$start" version=1 status=RUNNING since=@$start started=@$start \
			runs=$((d + 1)) $last $late
		segs+=("$T/s$n.prom:$(((end - start) / 60)):$SHIFT")
		last="last_success=@$end last_success_started=@$start"
		n=$((n + 1))
		snapshot "$T/s$n.prom" "$end" version=1 status=DONE since=@$end started=@$start ended=@$end \
			exit=0 runs=$((d + 1)) $last $late
		next=$(((d + 1) * 86400 + 10800))
		# (after the last day: no run on day 4, so 25 hours later it is late)
		[ "$d" -lt 3 ] || next=$((end + 90000))
		segs+=("$T/s$n.prom:$(((next - end) / 60)):$SHIFT")
		# the minute before each run ends: a day and ten minutes since the last success
		times+=($((start + 60)) $((end - 60)) $((end + 60)))
	done
	n=$((n + 1))
	# (read as a minute after it became late, so that late is not a matter
	# of the second the test runs in)
	snapshot "$T/s$n.prom" "$((next + 60))" version=1 status=DONE since=@$end started=@$start ended=@$end \
		exit=0 runs=4 $last $late
	segs+=("$T/s$n.prom:60:$SHIFT")
	grep -qx "jobreg_job_late{name=\"daily\",registry=\"$REG\"} 1" "$T/s$n.prom"
	grep -qx "jobreg_job_late{name=\"daily\",registry=\"$REG\"} 0" "$T/s$((n - 1)).prom"
	local t alert
	{
		echo 'rule_files: [rules.yml]'
		echo 'evaluation_interval: 1m'
		echo 'tests:'
		echo '  - interval: 1m'
		echo '    input_series:'
		timeline "${segs[@]}"
		echo '    alert_rule_test:'
		for t in "${times[@]}" $((next - 60)); do
			for alert in $alerts; do expect_at "$t" "$alert"; done
		done
		expect_at $((next + 60)) JobLate "name: daily, registry: \"$REG\""
	} > "$T/test.yml"
	run promtool test rules "$T/test.yml"
	echo "$output" | head -40
	[ "$status" -eq 0 ]
}
