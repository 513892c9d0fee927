#!/usr/bin/env bats
# jobreg-set: ids, registry creation, what each transition writes, corrupt records,
# atomic replace and the safety rules for a shared registry (SPEC §1-§5).

bats_require_minimum_version 1.5.0
load lib/helper

load lib/procs

# keys JOB: the record's keys in file order, space-separated.
keys() { cut -d= -f1 "$REG/$1" | paste -sd' ' -; }

# recent VALUE FROM TO: VALUE is an RFC 3339 UTC second within [FROM, TO] (epoch seconds).
recent() {
	[[ "$1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] || return 1
	local t
	t=$(date -u -d "$1" +%s) || return 1
	[ "$t" -ge "$2" ] && [ "$t" -le "$3" ]
}

OLD=2020-01-01T00:00:00Z

# --- common options ---------------------------------------------------------

@test "set -h and --help print usage on stdout and exit 0" {
	run --separate-stderr jobreg-set -h
	[ "$status" -eq 0 ]
	[[ "$output" == *jobreg-set* ]]
	[ -z "$stderr" ]
	run --separate-stderr jobreg-set --help
	[ "$status" -eq 0 ]
	[[ "$output" == *jobreg-set* ]]
	[ ! -e "$REG" ]
}

@test "set -V and --version print the program name and version" {
	run --separate-stderr jobreg-set -V
	[ "$status" -eq 0 ]
	[ "$output" = "jobreg-set 0.4.1" ]
	run --separate-stderr jobreg-set --version
	[ "$status" -eq 0 ]
	[ "$output" = "jobreg-set 0.4.1" ]
}

@test "set rejects an unknown option with exit 64 and one usage line, touching nothing" {
	run --separate-stderr jobreg-set --bogus job DONE
	[ "$status" -eq 64 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: "*" Try 'jobreg-set --help'." ]]
	[ ! -e "$REG" ]
}

@test "set with a missing or an extra operand is a usage error" {
	run --separate-stderr jobreg-set job
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	run --separate-stderr jobreg-set job DONE extra
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ ! -e "$REG" ]
}

@test "set treats options after the operands as operands" {
	run --separate-stderr jobreg-set job DONE -m note
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ ! -e "$REG/job" ]
	run --separate-stderr jobreg-set -m note -- job DONE
	[ "$status" -eq 0 ]
	[ "$(field job note)" = note ]
}

# --- §1 job ids ---------------------------------------------------------------

# set_refuses_id ID [named]: exit 64, one stderr line, nothing created.
set_refuses_id() {
	run --separate-stderr jobreg-set -- "$1" RUNNING
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: "* ]]
	if [ "${2:-}" = named ]; then [[ "$stderr" == *"$1"* ]]; fi
	[ ! -e "$REG" ]
}

@test "set refuses path-like job ids and creates nothing: empty, slash, .., .x, -x" {
	set_refuses_id ""
	set_refuses_id "a/b" named
	set_refuses_id "/" named
	set_refuses_id ".." named
	set_refuses_id ".x" named
	set_refuses_id "-x" named
	[ ! -e "$BATS_TEST_TMPDIR/b" ]
}

@test "set refuses job ids with a space, a control byte or non-ASCII bytes" {
	set_refuses_id "a b" named
	set_refuses_id $'a\001b'
	set_refuses_id $'a\nb'
	set_refuses_id "jöb"
}

@test "set refuses a 129-byte job id and accepts a 128-byte one" {
	local id
	id=$(printf 'a1._@+-Z%.0s' $(seq 16))
	[ "${#id}" -eq 128 ]
	set_refuses_id "${id}x"
	# the message names the id (it may abbreviate one this long)
	[[ "$stderr" == *"${id:0:24}"* ]]
	run --separate-stderr jobreg-set "$id" DONE
	[ "$status" -eq 0 ]
	[ -f "$REG/$id" ]
	[ "$(jobreg-get "$id")" = DONE ]
}

# --- §1 registry resolution and creation ----------------------------------------

@test "set writes to -d DIR before JOBREG_DIR" {
	local d="$BATS_TEST_TMPDIR/chosen"
	run --separate-stderr jobreg-set -d "$d" job DONE
	[ "$status" -eq 0 ]
	[ -f "$d/job" ]
	[ ! -e "$REG" ]
	run --separate-stderr jobreg-set --dir "$d" other DONE
	[ -f "$d/other" ]
}

@test "set writes to JOBREG_DIR before XDG_STATE_HOME" {
	export XDG_STATE_HOME="$BATS_TEST_TMPDIR/xdg"
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ -f "$REG/job" ]
	[ ! -e "$XDG_STATE_HOME/jobreg" ]
}

@test "set writes to XDG_STATE_HOME/jobreg without JOBREG_DIR" {
	unset JOBREG_DIR
	export XDG_STATE_HOME="$BATS_TEST_TMPDIR/xdg"
	export HOME="$BATS_TEST_TMPDIR/home"
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ -f "$XDG_STATE_HOME/jobreg/job" ]
	[ ! -e "$HOME/.local" ]
}

@test "set creates HOME/.local/state/jobreg with its parents when nothing else is set" {
	unset JOBREG_DIR XDG_STATE_HOME
	export HOME="$BATS_TEST_TMPDIR/home"
	mkdir "$HOME"
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ -f "$HOME/.local/state/jobreg/job" ]
	[ "$(jobreg-get job)" = DONE ]
}

@test "set creates the registry and its parents with mode 0777 & ~umask" {
	export JOBREG_DIR="$BATS_TEST_TMPDIR/a/b/reg"
	(umask 027 && jobreg-set job RUNNING)
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/a")" = 750 ]
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/a/b")" = 750 ]
	[ "$(stat -c %a "$JOBREG_DIR")" = 750 ]
	[ "$(stat -c %a "$JOBREG_DIR/job")" = 640 ]
}

@test "set creates records and lock files with mode 0666 & ~umask" {
	(umask 002 && jobreg-set job RUNNING)
	[ "$(stat -c %a "$REG")" = 775 ]
	[ "$(stat -c %a "$REG/job")" = 664 ]
	[ "$(stat -c %a "$REG/.job.lock")" = 664 ]
	local other=$BATS_TEST_TMPDIR/other
	(umask 022 && jobreg-set -d "$other" other DONE)
	[ "$(stat -c %a "$other")" = 755 ]
	[ "$(stat -c %a "$other/other")" = 644 ]
	[ "$(stat -c %a "$other/.other.lock")" = 644 ]
}

# --- §3 what each transition writes ----------------------------------------------

@test "set RUNNING without an owner writes status, since and started only" {
	local t0 t1
	t0=$(date +%s)
	run --separate-stderr jobreg-set job RUNNING
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(keys job)" = "version status since started runs" ]
	[ "$(field job version)" = 1 ]
	[ "$(field job status)" = RUNNING ]
	recent "$(field job since)" "$t0" "$t1"
	recent "$(field job started)" "$t0" "$t1"
	[ "$(jobreg-get job)" = RUNNING ]
}

@test "set RUNNING --owner PID writes the owner's pid, start time, host, boot id and namespaces" {
	start_sleeper
	run --separate-stderr jobreg-set --owner "$SLEEPER" job RUNNING
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since owner host pid pid_start boot_id $(ns_keys)started runs" ]
	[ "$(grep '_ns=' "$REG/job")" = "$(ns_fields)" ]
	[ "$(field job owner)" = pid ]
	[ "$(field job host)" = "$(hostname)" ]
	[ "$(field job pid)" = "$SLEEPER" ]
	[ "$(field job pid_start)" = "$(pid_start "$SLEEPER")" ]
	[ "$(field job boot_id)" = "$(boot_id)" ]
	[ "$(jobreg-get job)" = RUNNING ]
}

@test "set --owner \$\$ ties the record to the calling shell" {
	run --separate-stderr jobreg-set --owner $$ job RUNNING
	[ "$status" -eq 0 ]
	[ "$(field job pid)" = "$$" ]
	[ "$(field job pid_start)" = "$(pid_start $$)" ]
	[ "$(jobreg-get job)" = RUNNING ]
}

@test "set --owner refuses a pid that does not exist with 64 and writes nothing" {
	DEAD=$(dead_pid)
	run --separate-stderr jobreg-set --owner "$DEAD" job RUNNING
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: "* ]]
	[ ! -e "$REG/job" ]
}

@test "set --owner refuses a zombie pid with 64" {
	make_zombie || { echo "could not make a zombie process" >&2; false; }
	run --separate-stderr jobreg-set --owner "$ZOMBIE" job RUNNING
	[ "$status" -eq 64 ]
	[ ! -e "$REG/job" ]
}

@test "set --owner refuses malformed pids and statuses other than RUNNING" {
	local bad
	for bad in abc 0 -5 "" 12x; do
		run --separate-stderr jobreg-set --owner "$bad" job RUNNING
		[ "$status" -eq 64 ]
	done
	run --separate-stderr jobreg-set --owner $$ job DONE
	[ "$status" -eq 64 ]
	run --separate-stderr jobreg-set --owner $$ job PENDING
	[ "$status" -eq 64 ]
	[ ! -e "$REG/job" ]
}

@test "set --ttl writes expires as now plus the ttl rounded up to the second" {
	local t0 t1
	t0=$(date +%s)
	run --separate-stderr jobreg-set --ttl 60 job RUNNING
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since expires started runs" ]
	recent "$(field job expires)" $((t0 + 60)) $((t1 + 61))
	t0=$(date +%s)
	run --separate-stderr jobreg-set --ttl 0.2 frac RUNNING
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	recent "$(field frac expires)" $((t0 + 1)) $((t1 + 2))
	[ "$(jobreg-get job)" = RUNNING ]
}

@test "set --ttl refuses bad values and statuses other than RUNNING with 64" {
	local bad
	for bad in abc -1 "" 1e3 inf; do
		run --separate-stderr jobreg-set --ttl "$bad" job RUNNING
		[ "$status" -eq 64 ]
	done
	run --separate-stderr jobreg-set --ttl 60 job DONE
	[ "$status" -eq 64 ]
	[ ! -e "$REG/job" ]
}

@test "set RUNNING again with the same owner keeps since and started and renews expires" {
	start_sleeper
	jobreg-set --owner "$SLEEPER" --ttl 60 job RUNNING
	sed -i "s/^since=.*/since=$OLD/; s/^started=.*/started=$OLD/" "$REG/job"
	local t0 t1
	t0=$(date +%s)
	run --separate-stderr jobreg-set --owner "$SLEEPER" --ttl 600 job RUNNING
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$(field job since)" = "$OLD" ]
	[ "$(field job started)" = "$OLD" ]
	recent "$(field job expires)" $((t0 + 600)) $((t1 + 601))
	run --separate-stderr jobreg-set --owner "$SLEEPER" job RUNNING
	[ "$status" -eq 0 ]
	[ "$(field job since)" = "$OLD" ]
	[ "$(keys job)" = "version status since owner host pid pid_start boot_id $(ns_keys)started runs" ]
}

@test "set RUNNING again without an owner on an ownerless run is a renewal too" {
	write_record job version=1 status=RUNNING "since=$OLD" "expires=$(now_rfc3339 60)" "started=$OLD"
	run --separate-stderr jobreg-set job RUNNING
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since started" ]
	[ "$(field job since)" = "$OLD" ]
	[ "$(field job started)" = "$OLD" ]
}

@test "set RUNNING with another owner starts a new run and drops the old owner's fields" {
	start_sleeper
	jobreg-set --owner "$SLEEPER" job RUNNING
	sed -i "s/^since=.*/since=$OLD/; s/^started=.*/started=$OLD/" "$REG/job"
	local t0 t1
	t0=$(date +%s)
	run --separate-stderr jobreg-set job RUNNING
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since started runs" ]
	recent "$(field job since)" "$t0" "$t1"
	recent "$(field job started)" "$t0" "$t1"
}

@test "set RUNNING on a DONE record drops ended, exit and signal" {
	write_record job version=1 status=DONE "since=$OLD" host=build01 pid=7 "started=$OLD" "ended=$OLD" \
		exit=3 signal=TERM note=kept
	run --separate-stderr jobreg-set job RUNNING
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since started runs note" ]
	[ "$(field job started)" != "$OLD" ]
	[ "$(field job note)" = kept ]
}

@test "set DONE after a pid-owned run keeps started, host and pid and drops the owner fields" {
	start_sleeper
	jobreg-set --owner "$SLEEPER" --ttl 60 job RUNNING
	sed -i "s/^since=.*/since=$OLD/; s/^started=.*/started=$OLD/" "$REG/job"
	local t0 t1
	t0=$(date +%s)
	run --separate-stderr jobreg-set --exit 3 job DONE
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since host pid started ended exit outcome runs failures consecutive_failures" ]
	[ "$(field job status)" = DONE ]
	[ "$(field job host)" = "$(hostname)" ]
	[ "$(field job pid)" = "$SLEEPER" ]
	[ "$(field job started)" = "$OLD" ]
	[ "$(field job exit)" = 3 ]
	recent "$(field job since)" "$t0" "$t1"
	recent "$(field job ended)" "$t0" "$t1"
}

@test "set DONE without --exit records no exit status" {
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since ended" ]
	[ "$(jobreg-get job)" = DONE ]
}

@test "set DONE without --exit over a DONE record keeps its run's result: a note never makes a failed run pass" {
	jobreg-dispatch -q failed -- sh -c 'exit 3' || true
	jobreg-dispatch -q killed -- sh -c 'kill -TERM $$' || true
	jobreg-dispatch -q fine -- true
	local job ended
	for job in failed killed fine; do
		ended=$(field "$job" ended)
		jobreg-set -m investigating "$job" DONE
		[ "$(field "$job" note)" = investigating ]
		[ "$(field "$job" ended)" = "$ended" ]
		# no second history line, no second count
		[ "$(wc -l < "$REG/.$job.history")" -eq 1 ]
	done
	[ "$(field failed exit)" = 3 ]
	[ "$(field failed failures)" = 1 ]
	[ "$(field killed signal)" = TERM ]
	[ "$(field fine exit)" = 0 ]
	[ -z "$(field fine failures)" ]
	run jobreg-get --is FAILED failed killed
	[ "$status" -eq 0 ]
	run jobreg-dispatch --once failed -- echo command-ran
	[ "$status" -eq 3 ]
	[[ $output != *command-ran* ]]
	run jobreg-dispatch --once killed -- echo command-ran
	[ "$status" -eq 143 ]
	run jobreg-dispatch --once fine -- echo command-ran
	[ "$status" -eq 0 ]
	[[ $output != *command-ran* ]]
	# --exit still gives the run another result
	jobreg-set --exit 0 failed DONE
	run jobreg-get --is OK failed
	[ "$status" -eq 0 ]
	# a DONE written by hand, OK but with no ended: kept as it is
	write_record byhand version=1 status=DONE since=2026-01-01T00:00:00Z exit=0
	run --separate-stderr jobreg-set -m checked byhand DONE
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(keys byhand)" = "version status since exit note" ]
}

@test "set --exit corrects an ended run: its failure counts once, and an OK run that failed is no last success" {
	jobreg-dispatch -q job true
	local e
	for e in 1 0 1 0 1; do jobreg-set --exit "$e" job DONE; done
	[ "$(field job exit)" = 1 ]
	[ "$(field job failures)" = 1 ]
	[ "$(field job consecutive_failures)" = 1 ]
	[ -z "$(field job last_success)" ]
	[ -z "$(field job last_success_started)" ]
	[ "$(cut -d ' ' -f 1-2 "$REG/.job.history")" = 'run=1 outcome=FAILED' ]
	jobreg-set --exit 0 job DONE
	[ -z "$(field job failures)" ]
	[ -z "$(field job consecutive_failures)" ]
	[ "$(field job last_success)" = "$(field job ended)" ]
	[ "$(field job last_success_started)" = "$(field job started)" ]
	[ "$(cut -d ' ' -f 1-2 "$REG/.job.history")" = 'run=1 outcome=OK' ]
}

@test "set --keep-runs N trims the history to N lines at once" {
	local i
	for i in 1 2 3 4 5; do jobreg-dispatch -q job true; done
	jobreg-set --keep-runs 2 -m fewer job DONE
	[ "$(cut -d ' ' -f 1 "$REG/.job.history" | paste -sd ' ' -)" = 'run=4 run=5' ]
	jobreg-set --keep-runs 3 job PENDING
	[ "$(wc -l < "$REG/.job.history")" -eq 2 ]
	jobreg-set --keep-runs 0 job PENDING
	[ ! -e "$REG/.job.history" ]
}

@test "set --exit accepts 0 to 255 and refuses anything else with 64" {
	run --separate-stderr jobreg-set --exit 0 zero DONE
	[ "$status" -eq 0 ]
	[ "$(field zero exit)" = 0 ]
	run --separate-stderr jobreg-set --exit 255 max DONE
	[ "$status" -eq 0 ]
	[ "$(field max exit)" = 255 ]
	local bad
	for bad in 256 -1 abc "" 1.5 999999999999999999999; do
		run --separate-stderr jobreg-set --exit "$bad" job DONE
		[ "$status" -eq 64 ]
	done
	run --separate-stderr jobreg-set --exit 0 job RUNNING
	[ "$status" -eq 64 ]
	[ ! -e "$REG/job" ]
}

@test "set PENDING keeps only status, since, the note and unknown keys" {
	write_record job version=1 status=DONE "since=$OLD" host=build01 pid=7 "started=$OLD" "ended=$OLD" \
		exit=3 note=hello x_custom=1
	run --separate-stderr jobreg-set job PENDING
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since note x_custom" ]
	[ "$(field job note)" = hello ]
	[ "$(field job x_custom)" = 1 ]
	[ "$(jobreg-get job)" = PENDING ]
}

@test "set keeps unknown keys after the known ones in their original order" {
	write_record job version=1 zeta=1 status=DONE "since=$OLD" alpha=two=2 "ended=$OLD" exit=0
	run --separate-stderr jobreg-set job RUNNING
	[ "$status" -eq 0 ]
	[ "$(keys job)" = "version status since started runs zeta alpha" ]
	[ "$(field job zeta)" = 1 ]
	[ "$(field job alpha)" = two=2 ]
}

@test "set takes status words case-insensitively and writes them upper-case" {
	run --separate-stderr jobreg-set job running
	[ "$status" -eq 0 ]
	[ "$(field job status)" = RUNNING ]
	run --separate-stderr jobreg-set job Done
	[ "$status" -eq 0 ]
	[ "$(field job status)" = DONE ]
}

@test "set refuses STALE and unknown statuses with 64" {
	run --separate-stderr jobreg-set job STALE
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: "* ]]
	run --separate-stderr jobreg-set job stale
	[ "$status" -eq 64 ]
	run --separate-stderr jobreg-set job FINISHED
	[ "$status" -eq 64 ]
	run --separate-stderr jobreg-set job ""
	[ "$status" -eq 64 ]
	[ ! -e "$REG" ]
}

# --- notes -----------------------------------------------------------------------

@test "set -m replaces the note and a set without -m keeps it" {
	run --separate-stderr jobreg-set -m 'first try' job RUNNING
	[ "$status" -eq 0 ]
	[ "$(field job note)" = "first try" ]
	run --separate-stderr jobreg-set job DONE
	[ "$(field job note)" = "first try" ]
	run --separate-stderr jobreg-set --note 'a=b "c" \ Grüße' job DONE
	[ "$status" -eq 0 ]
	[ "$(field job note)" = 'a=b "c" \ Grüße' ]
	[ "$(grep -c '^note=' "$REG/job")" -eq 1 ]
}

@test "set -m refuses control bytes with 64 and leaves the record untouched" {
	jobreg-set -m old job DONE
	save job
	local bad
	for bad in $'a\nb' $'a\tb' $'a\001b' $'a\177b'; do
		run --separate-stderr jobreg-set -m "$bad" job RUNNING
		[ "$status" -eq 64 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		unchanged job
	done
}

@test "set -m refuses invalid UTF-8 and notes over 4096 bytes with 64" {
	jobreg-set -m old job DONE
	save job
	run --separate-stderr jobreg-set -m $'caf\xe9' job RUNNING
	[ "$status" -eq 64 ]
	unchanged job
	run --separate-stderr jobreg-set -m "$(printf 'x%.0s' $(seq 4097))" job RUNNING
	[ "$status" -eq 64 ]
	unchanged job
	run --separate-stderr jobreg-set -m "$(printf 'x%.0s' $(seq 4096))" job RUNNING
	[ "$status" -eq 0 ]
}

@test "a bad note says which rule it broke: too long, a control character or invalid UTF-8" {
	local cmd
	for cmd in "jobreg-set -m" "jobreg-dispatch -m"; do
		local args="job DONE"
		[ "$cmd" = "jobreg-set -m" ] || args="job true"
		# shellcheck disable=SC2086  # the command's and the operands' words
		run --separate-stderr $cmd "$(printf 'x%.0s' $(seq 4097))" $args
		[ "$status" -eq 64 ]
		[[ $stderr == "${cmd% *}: bad note: longer than 4096 bytes. Try"* ]] || { echo "$stderr"; false; }
		# shellcheck disable=SC2086
		run --separate-stderr $cmd $'two\nlines' $args
		[ "$status" -eq 64 ]
		[[ $stderr == "${cmd% *}: bad note: a newline or other control character. Try"* ]] || { echo "$stderr"; false; }
		# shellcheck disable=SC2086
		run --separate-stderr $cmd $'tab\there' $args
		[[ $stderr == *"bad note: a newline or other control character. Try"* ]] || { echo "$stderr"; false; }
		# shellcheck disable=SC2086
		run --separate-stderr $cmd $'caf\xe9' $args
		[ "$status" -eq 64 ]
		[[ $stderr == "${cmd% *}: bad note: invalid UTF-8. Try"* ]] || { echo "$stderr"; false; }
	done
	[ ! -e "$REG" ]
}

# --- --if ------------------------------------------------------------------------

@test "set --if writes when the current status is in the list" {
	run --separate-stderr jobreg-set --if PENDING job RUNNING
	[ "$status" -eq 0 ]
	[ "$(field job status)" = RUNNING ]
	run --separate-stderr jobreg-set --if done,running job DONE
	[ "$status" -eq 0 ]
	[ "$(field job status)" = DONE ]
}

@test "set --if mismatch exits 1, changes nothing and prints the current status" {
	jobreg-set job RUNNING
	save job
	run --separate-stderr jobreg-set --if PENDING,DONE job DONE
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "*RUNNING* ]]
	unchanged job
	run --separate-stderr jobreg-set --if DONE never RUNNING
	[ "$status" -eq 1 ]
	[[ "$stderr" == "jobreg-set: never: "*PENDING* ]]
	[ ! -e "$REG/never" ]
}

@test "set -q silences the --if mismatch message but keeps exit 1" {
	jobreg-set job DONE
	save job
	run --separate-stderr jobreg-set -q --if RUNNING job PENDING
	[ "$status" -eq 1 ]
	[ -z "$stderr" ]
	[ -z "$output" ]
	unchanged job
}

@test "set --if compares against the derived status, so STALE can be taken over" {
	DEAD=$(dead_pid)
	write_record job version=1 status=RUNNING "since=$OLD" owner=pid host=build01 "pid=$DEAD" \
		pid_start=12345 "boot_id=$(boot_id)" $(ns_fields) "started=$OLD"
	run --separate-stderr jobreg-set --if RUNNING job DONE
	[ "$status" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "*STALE* ]]
	run --separate-stderr jobreg-set --if stale,PENDING job RUNNING
	[ "$status" -eq 0 ]
	# the stale run was lost (SPEC §2): counted as a failure
	[ "$(keys job)" = "version status since started runs failures lost consecutive_failures" ]
}

@test "set --if refuses an unknown status word with 64" {
	run --separate-stderr jobreg-set --if DONE,FINISHED job RUNNING
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ ! -e "$REG" ]
}

# --- §3 corrupt records ----------------------------------------------------------

# set_refuses_corrupt: $REG/job is corrupt; set exits 65 naming the path, file unchanged.
set_refuses_corrupt() {
	save job
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 65 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "*"$REG/job"* ]]
	unchanged job
	run --separate-stderr jobreg-set --if PENDING,RUNNING,DONE,STALE job PENDING
	[ "$status" -eq 65 ]
	unchanged job
}

@test "set refuses to overwrite a record without a version first line or of version 2" {
	write_record job status=DONE version=1
	set_refuses_corrupt
	write_record job version=2 status=DONE
	set_refuses_corrupt
}

@test "set refuses to overwrite a record with a missing, STALE or unknown status" {
	write_record job version=1 since=2026-01-01T00:00:00Z
	set_refuses_corrupt
	write_record job version=1 status=STALE
	set_refuses_corrupt
	write_record job version=1 status=FINISHED
	set_refuses_corrupt
}

@test "set refuses to overwrite a record with a duplicate key or a line without =" {
	write_record job version=1 status=DONE status=DONE
	set_refuses_corrupt
	write_record job version=1 status=DONE garbage
	set_refuses_corrupt
}

@test "set refuses to overwrite a record with a NUL byte, invalid UTF-8 or over 64 KiB" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\nnote=a\0b\n' > "$REG/job"
	set_refuses_corrupt
	printf 'version=1\nstatus=DONE\nnote=a\377b\n' > "$REG/job"
	set_refuses_corrupt
	{ printf 'version=1\nstatus=DONE\nx='; head -c 70000 /dev/zero | tr '\0' a; echo; } > "$REG/job"
	set_refuses_corrupt
}

@test "set --force replaces a corrupt record with a fresh one" {
	write_record job version=2 status=DONE x=1
	run --separate-stderr jobreg-set --force --exit 4 job DONE
	[ "$status" -eq 0 ]
	[ "$(head -n 2 "$REG/job")" = $'version=1\nstatus=DONE' ]
	[ "$(field job exit)" = 4 ]
	run --separate-stderr jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
}

# --- §4 atomic replace and the registry's contents ------------------------------

@test "set leaves no temp file behind and ls DIR shows only the job records" {
	jobreg-set a RUNNING
	jobreg-set --ttl 60 b RUNNING
	jobreg-set --exit 0 a DONE
	jobreg-set c PENDING
	[ -z "$(find "$REG" -name '.*.tmp*')" ]
	[ "$(ls "$REG")" = $'a\nb\nc' ]
	local f
	for f in $(ls -A "$REG"); do
		case $f in a|b|c|.*) ;; *) false ;; esac
	done
}

@test "set removes this job's leftover temp file and nothing broader" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=RUN' > "$REG/.job.tmp"
	: > "$REG/.job.tmp.AbC123"
	: > "$REG/.job.tmpx"
	: > "$REG/.other.tmp"
	: > "$REG/.jobx.tmp"
	: > "$REG/job.tmp"
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ ! -e "$REG/.job.tmp" ]
	[ -e "$REG/.job.tmp.AbC123" ]
	[ -e "$REG/.job.tmpx" ]
	[ -e "$REG/.other.tmp" ]
	[ -e "$REG/.jobx.tmp" ]
	[ -e "$REG/job.tmp" ]
	[ "$(field job status)" = DONE ]
}

@test "a planted .JOB.tmp symlink or hard link leaves its target outside the registry untouched" {
	mkdir -p "$REG"
	local kind target
	for kind in symlink hardlink; do
		target=$BATS_TEST_TMPDIR/outside-$kind
		printf 'precious %s\n' "$kind" > "$target"
		cp "$target" "$target.orig"
		rm -f "$REG/.job.tmp"
		if [ "$kind" = symlink ]; then
			ln -s "$target" "$REG/.job.tmp"
		else
			ln "$target" "$REG/.job.tmp"
		fi
		run --separate-stderr jobreg-set -m "$kind" job RUNNING
		[ "$status" -eq 0 ]
		[ "$(field job note)" = "$kind" ]
		[ ! -e "$REG/.job.tmp" ]
		[ ! -L "$REG/.job.tmp" ]
		cmp "$target" "$target.orig"
		[ "$(stat -c %h "$target")" -eq 1 ]
		[ ! -L "$target" ]
	done
}

@test "set never reads the registry directory, however many entries it has" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	mkdir -p "$REG"
	: > "$REG/.job.tmp"
	traced -f -o "$BATS_TEST_TMPDIR/trace" -e trace=getdents,getdents64 jobreg-set job RUNNING
	[ "$(field job status)" = RUNNING ]
	[ ! -e "$REG/.job.tmp" ]
	! grep -q getdents "$BATS_TEST_TMPDIR/trace"
}

@test "set refuses a symlink planted as the record with 77 and does not follow it" {
	mkdir -p "$REG"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$BATS_TEST_TMPDIR/target"
	cp "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/target.orig"
	ln -s "$BATS_TEST_TMPDIR/target" "$REG/job"
	run --separate-stderr jobreg-set job RUNNING
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	[ -L "$REG/job" ]
	cmp "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/target.orig"
	run --separate-stderr jobreg-set --force job RUNNING
	[ "$status" -eq 77 ]
	[ -L "$REG/job" ]
	cmp "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/target.orig"
}

@test "set refuses a FIFO planted as the record with 77 without blocking" {
	mkdir -p "$REG"
	mkfifo "$REG/job"
	run --separate-stderr timeout 5 jobreg-set job RUNNING
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	[ -p "$REG/job" ]
}

@test "set refuses a symlink planted as the lock file with 77" {
	mkdir -p "$REG"
	: > "$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$REG/.job.lock"
	run --separate-stderr timeout 5 jobreg-set job RUNNING
	[ "$status" -eq 77 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	[ ! -e "$REG/job" ]
	[ ! -s "$BATS_TEST_TMPDIR/target" ]
}

@test "set writes through a registry directory that is a symlink" {
	mkdir -p "$BATS_TEST_TMPDIR/real"
	ln -s "$BATS_TEST_TMPDIR/real" "$REG"
	run --separate-stderr jobreg-set job DONE
	[ "$status" -eq 0 ]
	[ -L "$REG" ]
	[ -f "$BATS_TEST_TMPDIR/real/job" ]
	[ "$(jobreg-get job)" = DONE ]
}

@test "set gives up with 75 naming the job when the lock stays busy past -w" {
	jobreg-set job DONE
	save job
	flock "$REG/.job.lock" sleep 3 3>&- >/dev/null 2>&1 &
	local holder=$!
	BG_PIDS+=("$holder")
	poll_until place_held "$REG/.job.lock"
	run --separate-stderr jobreg-set -w 0.2 job RUNNING
	[ "$status" -eq 75 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	kill -0 "$holder"
	unchanged job
}

@test "set -w 0 fails at once when the lock is busy" {
	jobreg-set job DONE
	save job
	flock "$REG/.job.lock" sleep 3 3>&- >/dev/null 2>&1 &
	local holder=$!
	BG_PIDS+=("$holder")
	poll_until place_held "$REG/.job.lock"
	run --separate-stderr jobreg-set --lock-wait 0 job RUNNING
	[ "$status" -eq 75 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	kill -0 "$holder"
	unchanged job
}

@test "set refuses a bad -w value with 64 and waits for a lock released within -w" {
	run --separate-stderr jobreg-set -w abc job DONE
	[ "$status" -eq 64 ]
	run --separate-stderr jobreg-set -w -1 job DONE
	[ "$status" -eq 64 ]
	[ ! -e "$REG" ]
	jobreg-set job DONE
	flock "$REG/.job.lock" sleep 1 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until place_held "$REG/.job.lock" || true
	run --separate-stderr jobreg-set -w 5 job RUNNING
	[ "$status" -eq 0 ]
	[ "$(field job status)" = RUNNING ]
}

# bats test_tags=multiuser
@test "set exits 77 when the registry is not writable" {
	need_setpriv
	public_dir jobreg-set-perm
	PERMDIR=$PUBLIC
	mkdir -m 755 "$PERMDIR/reg"
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$PERMDIR/reg/done"
	cp "$PERMDIR/reg/done" "$PERMDIR/done.orig"
	run --separate-stderr as_nobody jobreg-set -d "$PERMDIR/reg" job RUNNING
	[ "$status" -eq 77 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	[ ! -e "$PERMDIR/reg/job" ]
	run --separate-stderr as_nobody jobreg-set -d "$PERMDIR/reg" done PENDING
	[ "$status" -eq 77 ]
	cmp "$PERMDIR/reg/done" "$PERMDIR/done.orig"
}

# --- non-regular entries and registries that cannot be made (issue 8) -------------

@test "set refused for a FIFO, directory or symlink planted as the record leaves no lock file behind" {
	refused_without_lock jobreg-set JOB RUNNING
}

@test "set exits 77 when a directory or a socket sits where the job lock belongs" {
	mkdir -p "$REG/.dir.lock"
	make_socket "$REG/.sock.lock"
	local job
	for job in dir sock; do
		run --separate-stderr timeout 5 jobreg-set "$job" RUNNING
		[ "$status" -eq 77 ]
		[ "$stderr" = "jobreg-set: $job: not a regular file: $REG/.$job.lock" ]
		[ ! -e "$REG/$job" ]
	done
}

@test "set exits 73 when the registry path is a dangling symlink, too long, or under a file" {
	ln -s "$BATS_TEST_TMPDIR/nowhere" "$BATS_TEST_TMPDIR/dangling"
	run --separate-stderr jobreg-set -d "$BATS_TEST_TMPDIR/dangling" job RUNNING
	[ "$status" -eq 73 ]
	[ "$stderr" = "jobreg-set: cannot create registry $BATS_TEST_TMPDIR/dangling: it is a symbolic link to a missing directory" ]
	[ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
	local long
	long=$BATS_TEST_TMPDIR/$(printf 'x%.0s' {1..300})
	run --separate-stderr jobreg-set -d "$long" job RUNNING
	[ "$status" -eq 73 ]
	[ "$stderr" = "jobreg-set: cannot create registry $long: File name too long" ]
	: > "$BATS_TEST_TMPDIR/file"
	run --separate-stderr jobreg-set -d "$BATS_TEST_TMPDIR/file/reg" job RUNNING
	[ "$status" -eq 73 ]
	[ "$stderr" = "jobreg-set: cannot create registry $BATS_TEST_TMPDIR/file/reg: Not a directory" ]
}

@test "a bounded lock wait ends on time even when the caller blocks SIGALRM" {
	jobreg-set j PENDING
	flock "$REG/.j.lock" sleep 5 3>&- &
	local holder=$! t0 t1
	poll_until place_held "$REG/.j.lock"
	t0=$(date +%s%N)
	run timeout 4 perl -e 'use POSIX; sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGALRM)); exec @ARGV' \
		jobreg-set -w 0.5 j RUNNING
	t1=$(date +%s%N)
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	[ "$status" -eq 75 ]
	[ $(( (t1 - t0) / 1000000 )) -lt 3000 ]
}

@test "set RUNNING counts a run as dispatch does, so set and dispatch share one increasing fencing token" {
	run --separate-stderr jobreg-set --owner $$ job RUNNING
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(field job runs)" = 1 ]
	jobreg-set --owner $$ --ttl 60 job RUNNING     # a renewal: the same run
	[ "$(field job runs)" = 1 ]
	jobreg-set --exit 0 job DONE
	run --separate-stderr jobreg-dispatch job -- sh -c 'echo "$JOBREG_RUN"'
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	jobreg-set job RUNNING
	[ "$(field job runs)" = 3 ]
	jobreg-set job DONE
	jobreg-set job RUNNING
	[ "$(field job runs)" = 4 ]
}

@test "on a read-only registry a write fails with one line naming its one failure, exit 74" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	mkdir "$T/ro"
	mount -t tmpfs -o size=1m tmpfs "$T/ro" 2>/dev/null || skip "cannot mount a tmpfs on $T/ro"
	MOUNTED=$T/ro
	jobreg-set -d "$T/ro" --exit 0 done1 DONE
	cp "$T/ro/done1" "$T/before"
	mount -o remount,ro "$T/ro"
	run --separate-stderr jobreg-set -d "$T/ro" done1 PENDING
	[ "$status" -eq 74 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ "$stderr" = "jobreg-set: done1: cannot write to registry $T/ro: Read-only file system" ]
	cmp "$T/ro/done1" "$T/before"
}

local_teardown() {
	if [ -n "${MOUNTED:-}" ]; then umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" || true; fi
}

# --- set -a --if: a sweep (SPEC §5 jobreg-set, issue 31) ----------------------

# plant_stale JOB [LINES...]: a RUNNING record whose pid owner is dead (STALE).
plant_stale() {
	local job=$1; shift
	# shellcheck disable=SC2046  # ns_fields gives one line a field
	write_record "$job" version=1 status=RUNNING "since=$OLD" owner=pid "host=$HOST" "pid=$DEAD" \
		pid_start=12345 "boot_id=$BOOT_ID" $(ns_fields) "started=$OLD" "$@"
}

@test "set -a --if STALE PENDING resets every STALE job, each lost run counted, settings, history and logs kept" {
	DEAD=$(dead_pid)
	plant_stale s1 runs=4 failures=1 consecutive_failures=1 last_success=$OLD late_after=3600 \
		late_from=$OLD keep_runs=5 note=kept
	plant_stale s2 runs=1
	printf 'run=3 outcome=OK started=%s ended=%s duration=0 exit=0\n' "$OLD" "$OLD" > "$REG/.s1.history"
	echo 'last words' > "$REG/.s1.log"
	echo 'older failure' > "$REG/.s1.faillog"
	run --separate-stderr jobreg-set -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(jobreg-get -a)" = "s1 PENDING
s2 PENDING" ]
	[ "$(keys s1)" = "version status since runs failures lost consecutive_failures last_success late_after late_from keep_runs note" ]
	[ "$(field s1 runs)" = 4 ]
	[ "$(field s1 failures)" = 2 ]
	[ "$(field s1 lost)" = 1 ]
	[ "$(field s1 consecutive_failures)" = 2 ]
	[ "$(field s1 last_success)" = "$OLD" ]
	[ "$(field s1 late_after)" = 3600 ]
	[ "$(field s1 keep_runs)" = 5 ]
	[ "$(field s1 note)" = kept ]
	[ "$(keys s2)" = "version status since runs failures lost consecutive_failures" ]
	# one history line more for each, the LOST run; the logs are where they were
	[ "$(wc -l < "$REG/.s1.history")" -eq 2 ]
	[[ "$(sed -n 2p "$REG/.s1.history")" == "run=4 outcome=LOST started=$OLD ended="* ]]
	[[ "$(cat "$REG/.s2.history")" == "run=1 outcome=LOST started=$OLD ended="* ]]
	[ "$(cat "$REG/.s1.log")" = 'last words' ]
	[ "$(cat "$REG/.s1.faillog")" = 'older failure' ]
	# the same bookkeeping as the one-job call
	plant_stale one runs=4 failures=1 consecutive_failures=1 last_success=$OLD late_after=3600 \
		late_from=$OLD keep_runs=5 note=kept
	jobreg-set --if STALE one PENDING
	[ "$(keys one)" = "$(keys s1)" ]
}

@test "set -a --if leaves the jobs that do not match untouched and exits 0" {
	local j
	DEAD=$(dead_pid)
	plant_stale stale runs=1
	write_record ended version=1 status=DONE "since=$OLD" exit=3 runs=2 failures=1
	write_record pending version=1 status=PENDING "since=$OLD"
	write_record live version=1 status=RUNNING "since=$OLD" "started=$OLD" runs=1
	for j in ended pending live; do save "$j"; done
	run --separate-stderr jobreg-set -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for j in ended pending live; do unchanged "$j"; done
	[ "$(field stale status)" = PENDING ]
	# nothing matches: still 0, nothing written
	save stale
	run --separate-stderr jobreg-set -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	unchanged stale
	# another list and STATUS: each matching job gets the write
	run --separate-stderr jobreg-set -a --if FAILED,PENDING DONE
	[ "$status" -eq 0 ]
	[ "$(field ended status)" = DONE ]
	[ "$(field pending status)" = DONE ]
	unchanged live
}

@test "set -a --if reports a corrupt record with 65, writes every other job and leaves it as it was" {
	DEAD=$(dead_pid)
	plant_stale a runs=1
	write_record broken version=1 junk
	plant_stale c runs=1
	save broken
	run --separate-stderr jobreg-set -a --if STALE PENDING
	[ "$status" -eq 65 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: broken: corrupt record $REG/broken"* ]]
	unchanged broken
	[ "$(field a status)" = PENDING ]
	[ "$(field c status)" = PENDING ]
	# --force replaces a named job's corrupt record, never a sweep's
	run --separate-stderr jobreg-set -a --force --if STALE,PENDING DONE
	[ "$status" -eq 65 ]
	[[ "$stderr" == "jobreg-set: broken: corrupt record $REG/broken"* ]]
	unchanged broken
	[ "$(field a status)" = DONE ]
}

@test "set -a --if never creates the registry: a missing one has no job to sweep (exit 0)" {
	run --separate-stderr jobreg-set -d "$T/none" -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ ! -e "$T/none" ]
	# a single job's write still makes it
	jobreg-set -d "$T/none" job PENDING
	[ "$(jobreg-get -d "$T/none" job)" = PENDING ]
}

@test "set -a without --if, with a JOB, or without STATUS is a usage error that writes nothing" {
	DEAD=$(dead_pid)
	plant_stale job runs=1
	save job
	local args
	for args in "-a PENDING" "-a --if STALE job PENDING" "--if STALE -a" "--if STALE -a job" \
		"--if STALE -a STALE"; do
		# shellcheck disable=SC2086  # the words of ARGS, split on purpose
		run --separate-stderr jobreg-set $args
		[ "$status" -eq 64 ] || flunk "jobreg-set $args: exit $status"
		[ "${#stderr_lines[@]}" -eq 1 ]
		unchanged job
	done
	run --separate-stderr jobreg-set -a PENDING
	[[ "$stderr" == "jobreg-set: -a needs --if, --pause or --resume. Try"* ]]
	run --separate-stderr jobreg-set -a --if STALE job PENDING
	[[ "$stderr" == "jobreg-set: -a takes no JOB. Try"* ]]
	# an empty or missing registry: nothing to do
	run --separate-stderr jobreg-set -d "$T/none" -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "set -a --if end to end: STALE jobs reset, the others left alone, usage errors write nothing, a corrupt record is passed over, no registry is made" {
	DEAD=$(dead_pid)
	local job
	for job in a c; do
		write_record "$job" version=1 status=RUNNING "since=$OLD" owner=pid host=build01 "pid=$DEAD" \
			pid_start=12345 "boot_id=$(boot_id)" $(ns_fields) "started=$OLD" runs=1 keep_runs=5
	done
	jobreg-set --exit 0 b DONE
	jobreg-set d RUNNING
	run --separate-stderr jobreg-set -a --if STALE PENDING
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ -z "$stderr" ]
	[ "$(jobreg-get -a)" = $'a PENDING\nb DONE\nc PENDING\nd RUNNING' ]
	for job in a c; do
		grep -qx 'lost=1' "$REG/$job"
		grep -qx 'keep_runs=5' "$REG/$job"
		grep -q '^run=1 outcome=LOST ' "$REG/.$job.history"
	done
	# -a without --if, and with a JOB, are usage errors, with nothing written
	cp -R "$REG" "$T/before"
	run --separate-stderr jobreg-set -a PENDING
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-set: -a needs --if, --pause or --resume. Try 'jobreg-set --help'." ]
	run --separate-stderr jobreg-set -a --if DONE b PENDING
	[ "$status" -eq 64 ]
	diff -r "$T/before" "$REG"
	# a corrupt record is reported (65), and the sweep goes on past it
	write_record c2 version=1
	run --separate-stderr jobreg-set -a --if DONE -m swept PENDING
	[ "$status" -eq 65 ]
	[[ $stderr == "jobreg-set: c2: corrupt record "* ]]
	[ "$(jobreg-get -l b | cut -f2,8)" = $'PENDING\tswept' ]
	# and it never creates the registry
	run jobreg-set -d "$T/none" -a --if STALE PENDING
	[ "$status" -eq 0 ]
	[ ! -e "$T/none" ]
}
