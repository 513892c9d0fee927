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

@test "pause -a pauses the registry: it writes only DIR/.-pause, and every job, with a record or not, reads PAUSED" {
	write_record a version=1 status=PENDING "since=$OLD" note=alpha
	write_record b version=1 status=DONE "since=$OLD" exit=1 runs=1
	save a
	save b
	run --separate-stderr jobreg-set --pause -a -m 'freeze'
	[ "$status" -eq 0 ] || flunk "$stderr"
	unchanged a
	unchanged b
	[ "$(cut -d= -f1 "$REG/.-pause" | paste -sd' ' -)" = \
		"version paused_until paused_by paused_note" ]
	grep -qx 'paused_until=inf' "$REG/.-pause"
	grep -qx "paused_by=$(me)" "$REG/.-pause"
	grep -qx 'paused_note=freeze' "$REG/.-pause"
	[ "$(ls "$REG")" = $'a\nb' ]
}

@test "pause -a of a registry that does not exist yet makes it, holding only the pause" {
	run --separate-stderr jobreg-set -d "$T/new" --pause -a --for 1h
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ -z "$(ls "$T/new")" ]
	grep -q '^paused_until=20' "$T/new/.-pause"
}

@test "a job with no record, dispatched while the registry is paused, is refused (75) and gets a PENDING record counting the skip" {
	jobreg-set --pause -a -m 'kernel upgrade'
	run --separate-stderr jobreg-dispatch new touch "$T/ran"
	[ "$status" -eq 75 ]
	[ ! -e "$T/ran" ]
	[ "$stderr" = "jobreg-dispatch: new: paused until resumed (by $(me): kernel upgrade); jobreg-set --resume -a ends it" ]
	[ "$(field new status)" = PENDING ]
	[ "$(field new skipped)" = 1 ]
	[ "$(field new skip_reason)" = paused ]
	[ -z "$(field new paused_until)" ]
	jobreg-set --resume -a
	jobreg-dispatch new touch "$T/ran"
	[ -e "$T/ran" ]
}

@test "resume -a removes only .-pause: a job paused on its own stays paused, and the others run again" {
	jobreg-set --pause -m own a
	write_record c version=1 status=PENDING "since=$OLD"
	save a
	save c
	jobreg-set --pause -a
	run --separate-stderr jobreg-set --resume -a
	[ "$status" -eq 0 ] || flunk "$stderr"
	[ ! -e "$REG/.-pause" ]
	unchanged a
	unchanged c
	run jobreg-dispatch a true
	[ "$status" -eq 75 ]
	jobreg-dispatch c true
}

@test "resume JOB while the registry is paused says its pause remains, and is 1 when the job had no pause of its own" {
	jobreg-set --pause a
	write_record b version=1 status=PENDING "since=$OLD"
	jobreg-set --pause -a --for 1h
	run --separate-stderr jobreg-set --resume a
	[ "$status" -eq 0 ] || flunk "$stderr"
	[[ $stderr == "jobreg-set: a: the registry's pause remains, until 20"*"; jobreg-set --resume -a ends it" ]]
	[ -z "$(field a paused_until)" ]
	run --separate-stderr jobreg-set --resume b
	[ "$status" -eq 1 ]
	one_line
	[ -e "$REG/.-pause" ]
}

@test "a paused refusal names jobreg-set --resume JOB, the job's own pause first" {
	jobreg-set --pause --for 1h -m disk job
	jobreg-set --pause -a
	run --separate-stderr jobreg-dispatch job true
	[ "$status" -eq 75 ]
	[[ $stderr == "jobreg-dispatch: job: paused until 20"*" (by $(me): disk); jobreg-set --resume job ends it" ]]
}

@test "--once replays a DONE result while the registry is paused" {
	write_record job version=1 status=DONE "since=$OLD" exit=0 runs=1
	jobreg-set --pause -a
	run --separate-stderr jobreg-dispatch --once job false
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: job: already done" ]
}

@test "a corrupt .-pause makes a dispatch exit 65 and run nothing" {
	mkdir -p "$REG"
	printf 'paused_until=inf\n' > "$REG/.-pause"
	run --separate-stderr jobreg-dispatch job touch "$T/ran"
	[ "$status" -eq 65 ]
	[ ! -e "$T/ran" ]
	[[ $stderr == *"corrupt registry pause $REG/.-pause: "* ]]
	# resume -a removes it all the same
	jobreg-set --resume -a
	jobreg-dispatch job touch "$T/ran"
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

@test "a --replace while the registry is paused stops no run: refused as paused (75, skipped), the run going on left alone" {
	bg_dispatch j
	jobreg-set --pause -a -m drain
	run --separate-stderr jobreg-dispatch --replace j true
	[ "$status" -eq 75 ]
	[[ $stderr == *"paused until resumed"*"drain); jobreg-set --resume -a ends it" ]]
	[ -z "$(field j cancel_run)" ]
	[ "$(field j skip_reason)" = paused ]
	[ "$(field j status)" = RUNNING ]
	: >"$T/release"
	wait_bg "$BG_PID"
	[ "$BG_RC" -eq 0 ]
}

# ---- readers see the registry's pause (SPEC §5 jobreg-set --pause -a) ----------------

@test "while the registry is paused every job reads PAUSED, one with no record too, and -s PAUSED lists them all" {
	write_record a version=1 status=DONE "since=$OLD" exit=0
	write_record b version=1 status=PENDING "since=$OLD"
	jobreg-get --is DONE a
	run jobreg-get --is PAUSED a
	[ "$status" -eq 1 ]
	jobreg-set --pause -a --for 1h -m maint
	jobreg-get --is PAUSED a b new
	[ "$(jobreg-get -s PAUSED -a)" = $'a DONE\nb PENDING' ]
	[ "$(jobreg-get -l -s PAUSED -a | cut -f1 | paste -sd' ' -)" = 'a b' ]
	jobreg-set --resume -a
	run jobreg-get --is PAUSED a
	[ "$status" -eq 1 ]
	[ -z "$(jobreg-get -s PAUSED -a)" ]
}

@test "get -j and -P give paused on every job while the registry is paused, and jobreg_registry_paused 1" {
	write_record a version=1 status=DONE "since=$OLD" exit=0
	run --separate-stderr jobreg-get -P a
	grep -qxF "jobreg_registry_paused{registry=\"$REG\"} 0" <<<"$output" || flunk "$output"
	grep -qxF "jobreg_job_paused{name=\"a\",registry=\"$REG\"} 0" <<<"$output"
	jobreg-set --pause -a
	run --separate-stderr jobreg-get -j a new
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == '{"job": "a", '*', "paused": true, "health": "OK"}' ]] || flunk "$output"
	[ "${lines[1]}" = '{"job": "new", "status": "PENDING", "paused": true, "health": "OK"}' ]
	run --separate-stderr jobreg-get -P a new
	[ "$status" -eq 0 ]
	grep -qxF "jobreg_registry_paused{registry=\"$REG\"} 1" <<<"$output" || flunk "$output"
	grep -qxF "jobreg_job_paused{name=\"a\",registry=\"$REG\"} 1" <<<"$output"
	grep -qxF "jobreg_job_paused{name=\"new\",registry=\"$REG\"} 1" <<<"$output"
}

@test "get --report says a job is paused with the registry, in dispatch's words, and a job paused on its own shows its own pause" {
	write_record a version=1 status=DONE "since=$OLD" exit=0
	jobreg-set --pause -m 'own note' own
	jobreg-set --pause -a -m 'kernel upgrade'
	run --separate-stderr jobreg-get --report a own new
	[ "$status" -eq 0 ] || flunk "$stderr"
	printf '%s\n' "${lines[@]}" | grep -qE "^a +DONE +OK, registry paused until resumed \(by $(me): kernel upgrade\)(, set [0-9]+s ago by [^ ]+)? " ||
		flunk "$output"
	printf '%s\n' "${lines[@]}" | grep -qE "^own +PENDING +paused until resumed \(by $(me): own note\)(, set [0-9]+s ago by [^ ]+)? " ||
		flunk "$output"
	printf '%s\n' "${lines[@]}" | grep -qE "^new +PENDING +registry paused until resumed \(by $(me): kernel upgrade\)(, set [0-9]+s ago by [^ ]+)? " ||
		flunk "$output"
	[ "${lines[3]}" = "3 jobs: 3 ok; 3 paused" ]
}

@test "get reads the registry's pause once a call, not once a job" {
	command -v strace >/dev/null 2>&1 || skip "strace is not installed"
	for j in a b c d; do write_record "$j" version=1 status=DONE "since=$OLD" exit=0; done
	jobreg-set --pause -a
	local f
	for f in "" -j -P --report; do
		traced -f -e trace=openat -o "$T/trace" jobreg-get $f -a >/dev/null
		[ "$(grep -c '"\.-pause"' "$T/trace")" -eq 1 ] || flunk "$f: $(cat "$T/trace")"
	done
}

@test "a corrupt .-pause is reported (65) by readers; -P still writes its metrics (0)" {
	write_record a version=1 status=DONE "since=$OLD" exit=0
	printf 'garbage\n' > "$REG/.-pause"
	run --separate-stderr jobreg-get a
	[ "$status" -eq 65 ]
	[[ $stderr == "jobreg-get: corrupt registry pause $REG/.-pause: "* ]] || flunk "$stderr"
	[ "$output" = DONE ]
	run --separate-stderr jobreg-get -P a
	[ "$status" -eq 0 ]
	grep -qxF "jobreg_registry_paused{registry=\"$REG\"} 0" <<<"$output"
}

@test "get --is PAUSED --wait ends when the registry is paused while it waits" {
	write_record a version=1 status=DONE "since=$OLD" exit=0
	jobreg-get --is PAUSED --wait 30 a 3>&- &
	local waiter=$!
	BG_PIDS+=("$waiter")
	jobreg-set --pause -a
	wait_bg "$waiter"
	[ "$BG_RC" -eq 0 ]
	jobreg-set --resume -a
	run --separate-stderr jobreg-get --is PAUSED --wait 0.2 a
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-get: a: still DONE after --wait 0.2" ]
}
