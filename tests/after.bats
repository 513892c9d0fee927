#!/usr/bin/env bats
# jobreg-dispatch --after JOB[,JOB]... (SPEC §5d, §5 step 2a): a job due
# only after a new success (OK or WARNING, by run number) of each named job,
# none of them running; after_seen moves on only with a successful run.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# --- local helpers ---

# up JOB: a successful run of JOB.
up() { jobreg-dispatch -q "$1" true; }

# upload [OPTION...]: the cron line of the recipe; each run it makes adds a
# line to $T/uploads.
upload() {
	jobreg-dispatch -q "$@" --after backup upload sh -c 'echo "$JOBREG_RUN" >>"$0"' "$T/uploads"
}

uploads() { if [ -e "$T/uploads" ]; then wc -l <"$T/uploads"; else echo 0; fi; }

# --- tests ---

@test "after: upload after each new backup runs once after each successful backup" {
	upload
	[ "$(uploads)" = 0 ]
	for i in 1 2 3; do
		up backup
		upload
		upload
		[ "$(uploads)" = "$i" ]
		[ "$(field upload after_seen)" = "backup:$i" ]
	done
	# a failed backup is no new success
	run jobreg-dispatch -q backup false
	upload
	[ "$(uploads)" = 3 ]
	[ "$(field upload runs)" = 3 ]
	[ "$(field upload after)" = backup ]
}

@test "after: not due exits 0, says what it waits for, and writes only after= the first time" {
	up backup
	jobreg-dispatch --after backup upload true
	cp "$REG/upload" "$T/before"
	run --separate-stderr jobreg-dispatch --after backup upload touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for backup (no success since run 1)" ]
	[ ! -e "$T/ran" ]
	cmp "$T/before" "$REG/upload"
	# -q silences it; another list is written (only it), then nothing again
	run --separate-stderr jobreg-dispatch -q --after backup,dump upload touch "$T/ran"
	[ "$status" -eq 0 ] && [ -z "$stderr" ] && [ ! -e "$T/ran" ]
	[ "$(field upload after)" = backup,dump ]
	sed '/^after=/d' "$REG/upload" >"$T/now"
	sed '/^after=/d' "$T/before" | cmp - "$T/now"
	cp "$REG/upload" "$T/before"
	jobreg-dispatch -q --after dump --after backup upload true
	[ "$(field upload after)" = dump,backup ]
	jobreg-dispatch -q --after dump,backup upload true
	[ "$(field upload after)" = dump,backup ]
}

@test "after: a job with no record gets a PENDING one holding the list; a misspelled name is said even with -q" {
	run --separate-stderr jobreg-dispatch -q --after bakcup upload touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for bakcup (no record)" ]
	[ ! -e "$T/ran" ]
	field_is upload status PENDING
	field_is upload after bakcup
	[ "$(field upload runs)" = "" ]
	# the second call reads it without the lock: the same answer, no write
	cp "$REG/upload" "$T/before"
	run --separate-stderr jobreg-dispatch -q --after bakcup upload true
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for bakcup (no record)" ]
	cmp "$T/before" "$REG/upload"
}

@test "after: report runs only once both backup and dump have succeeded since its last run" {
	report() { jobreg-dispatch -q --after backup,dump report touch "$T/ran"; }
	up backup
	report
	[ ! -e "$T/ran" ]
	run --separate-stderr jobreg-dispatch --after backup,dump report true
	[ "$stderr" = "jobreg-dispatch: report: not due: waiting for dump (no record)" ]
	up dump
	report
	[ -e "$T/ran" ] && rm "$T/ran"
	[ "$(field report after_seen)" = backup:1,dump:1 ]
	up backup
	up backup
	report
	[ ! -e "$T/ran" ]
	run --separate-stderr jobreg-dispatch --after backup,dump report true
	[ "$stderr" = "jobreg-dispatch: report: not due: waiting for dump (no success since run 1)" ]
	up dump
	report
	[ -e "$T/ran" ]
	[ "$(field report after_seen)" = backup:3,dump:2 ]
}

@test "after: a named job that is running keeps the job waiting; a STALE one does not" {
	up backup
	bg_dispatch backup
	run --separate-stderr jobreg-dispatch --after backup upload touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for backup (running)" ]
	[ ! -e "$T/ran" ]
	: >"$T/release"
	wait_bg "$BG_PID"
	# backup's run 2 succeeded: due; then backup STALE (its owner dead): not running
	jobreg-dispatch --after backup upload true
	[ "$(field upload after_seen)" = backup:2 ]
	stale_record backup runs=3 last_success_run=3
	jobreg-get -q --is STALE backup
	jobreg-dispatch --after backup upload touch "$T/ran"
	[ -e "$T/ran" ]
}

@test "after: a failed run of the job leaves after_seen as it was, so the same success is tried again" {
	up backup
	jobreg-dispatch --after backup upload true
	up backup
	run jobreg-dispatch --after backup upload sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[ "$(field upload after_seen)" = backup:1 ]
	[ "$(field upload runs)" = 2 ]
	jobreg-dispatch --after backup upload touch "$T/ran"
	[ -e "$T/ran" ]
	[ "$(field upload after_seen)" = backup:2 ]
	[ "$(field upload runs)" = 3 ]
}

@test "after: a named job cleared since (an entry above its runs) counts as no entry" {
	for i in 1 2 3; do up backup; done
	jobreg-dispatch --after backup upload true
	[ "$(field upload after_seen)" = backup:3 ]
	jobreg-clear backup
	run --separate-stderr jobreg-dispatch --after backup upload true
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for backup (no record)" ]
	up backup
	jobreg-dispatch --after backup upload touch "$T/ran"
	[ -e "$T/ran" ]
	[ "$(field upload after_seen)" = backup:1 ]
}

@test "after: a WARNING is a success too, and a DONE set by hand over no run is no new one" {
	write_record backup version=1 status=DONE exit=24 outcome=WARNING runs=5 \
		last_success_run=5 last_success_warning=1
	jobreg-dispatch --after backup upload true
	[ "$(field upload after_seen)" = backup:5 ]
	jobreg-set --exit 0 backup DONE
	run --separate-stderr jobreg-dispatch --after backup upload touch "$T/ran"
	[ "$stderr" = "jobreg-dispatch: upload: not due: waiting for backup (no success since run 5)" ]
	[ ! -e "$T/ran" ]
}

@test "after: a job after itself through another job says so and runs nothing; after itself directly is 64" {
	run --separate-stderr jobreg-dispatch --after b a touch "$T/ran"
	[ "$status" -eq 0 ]
	run --separate-stderr jobreg-dispatch -q --after a b touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: b: not due: waiting for a (no success yet); it waits for itself through a" ]
	run --separate-stderr jobreg-dispatch -q --after c a touch "$T/ran"
	jobreg-dispatch -q --after b c true
	run --separate-stderr jobreg-dispatch -q --after c a touch "$T/ran"
	[ "$stderr" = "jobreg-dispatch: a: not due: waiting for c (no success yet); it waits for itself through c, b" ]
	[ ! -e "$T/ran" ]
	run --separate-stderr jobreg-dispatch --after x,a a true
	[ "$status" -eq 64 ]
	[[ $stderr == "jobreg-dispatch: --after a: a job cannot follow itself."* ]]
}

@test "after: with --once or --clear, an empty or bad job id, is a usage error" {
	for opt in --once --clear; do
		run --separate-stderr jobreg-dispatch --after b "$opt" a true
		[ "$status" -eq 64 ]
		[[ $stderr == "jobreg-dispatch: --after excludes --once and --clear."* ]]
	done
	for list in , b, ,b b,,c .b b/c; do
		run --separate-stderr jobreg-dispatch --after "$list" a true
		[ "$status" -eq 64 ] || flunk "--after '$list': $status"
	done
	[ ! -e "$REG/a" ]
}

@test "after: --after '' forgets the list; a call without --after neither waits nor changes it" {
	jobreg-dispatch -q --after backup j true
	field_is j after backup
	jobreg-dispatch j touch "$T/ran"
	[ -e "$T/ran" ]
	field_is j after backup
	jobreg-dispatch --after '' j true
	field_is j after ''
}

@test "after: --wait waits for the named job's success, then runs" {
	up backup
	jobreg-dispatch --after backup upload true
	jobreg-dispatch -q --wait 10s --after backup upload touch "$T/ran" 3>&- &
	local pid=$!
	BG_PIDS+=("$pid")
	poll_until blocked "$pid"
	nap 0.2
	[ ! -e "$T/ran" ]
	up backup
	wait_bg "$pid"
	[ "$BG_RC" -eq 0 ]
	[ -e "$T/ran" ]
	[ "$(field upload after_seen)" = backup:2 ]
	# waiting for a running backup: runs once it has ended well
	bg_dispatch backup
	jobreg-dispatch -q --wait 10s --after backup upload touch "$T/ran2" 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	poll_until blocked "$pid"
	[ ! -e "$T/ran2" ]
	: >"$T/release"
	wait_bg "$pid"
	[ "$BG_RC" -eq 0 ]
	[ -e "$T/ran2" ]
	[ "$(field upload after_seen)" = backup:3 ]
}

@test "after: --wait that runs out exits 75 (or -E), a skip with skip_reason=wait-expired" {
	run --separate-stderr jobreg-dispatch --wait 0.3s --after backup upload touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: upload: still not due after --wait 0.3s: waiting for backup (no record)" ]
	[ ! -e "$T/ran" ]
	field_is upload skipped 1
	field_is upload skip_reason wait-expired
	field_is upload after backup
	run jobreg-dispatch -q -E 3 --wait 0.1s --after backup upload true
	[ "$status" -eq 3 ]
	field_is upload skipped 2
}

@test "after: a record whose after or after_seen is not a list of jobs is corrupt" {
	for bad in "after=a,,b" "after=../x" "after_seen=a" "after_seen=a:x" "after_seen=a:1,"; do
		write_record j version=1 status=DONE "$bad"
		run --separate-stderr jobreg-get j
		[ "$status" -eq 65 ] || flunk "$bad: $status"
		[[ $stderr == *"bad after"* ]] || flunk "$bad: $stderr"
	done
	write_record j version=1 status=DONE after=a,b after_seen=a:1,b:7
	jobreg-get -q j
}

@test "after: -j gives after and after_seen as strings" {
	up backup
	jobreg-dispatch --after backup upload true
	run jobreg-get -j upload
	[ "$status" -eq 0 ]
	[[ $output == *'"after": "backup",'* ]] || flunk "$output"
	[[ $output == *'"after_seen": "backup:1",'* ]] || flunk "$output"
}

@test "after: --report says what a job waits for, and a chain that leads back to it" {
	jobreg-dispatch -q --after b a true
	jobreg-dispatch -q --after a b true
	up d
	jobreg-dispatch -q --after d c true
	run jobreg-get --report -a
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^a\ +PENDING\ +after\ b\ \(waits\ for\ itself\ through\ b\)\ +never\ ok ]] ||
		flunk "$output"
	[[ ${lines[1]} =~ ^b\ +PENDING\ +after\ a\ \(waits\ for\ itself\ through\ a\) ]] || flunk "$output"
	[[ ${lines[2]} =~ ^c\ +DONE\ +OK,\ after\ d\ +last\ ok ]] || flunk "$output"
}
