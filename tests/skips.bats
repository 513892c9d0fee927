#!/usr/bin/env bats
# Calls that end without running leave a trace: SPEC §5a Skips (skipped,
# last_skipped, skip_reason, §3), step 2c and 2e of §5, §5b (no free slot).
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# counted JOB REASON N: JOB's record counts N skips, the last for REASON, and
# says when.
counted() {
	[ "$(field "$1" skip_reason)" = "$2" ] || flunk "skip_reason=$(field "$1" skip_reason), not $2"
	[ "$(field "$1" skipped)" = "$3" ] || flunk "skipped=$(field "$1" skipped), not $3"
	[ -n "$(field "$1" last_skipped)" ]
}

# in_line JOB: a waiter behind JOB's run has taken its place (wait_next 2).
in_line() {
	poll_until eval "[ \"\$(field $1 wait_next)\" = 2 ]"
}

@test "a call refused by a live run counts skip_reason=running" {
	bg_dispatch j
	run jobreg-dispatch j true
	[ "$status" -eq 75 ]
	counted j running 1
	: >"$T/release"
}

@test "a call refused by waiters ahead counts skip_reason=waiting" {
	write_record j version=1 status=DONE "since=$(now_rfc3339)" exit=0 wait_next=6 wait_head=5
	hold_place j 5
	run --separate-stderr jobreg-dispatch j true
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: 1 waiting" ]
	counted j waiting 1
}

@test "a call refused by a pause counts skip_reason=paused" {
	jobreg-set --pause j
	run jobreg-dispatch j true
	[ "$status" -eq 75 ]
	counted j paused 1
}

@test "a call with no free slot counts skip_reason=no-slot, and a new job gets a PENDING record holding it" {
	bg_dispatch a --slots g:1
	run --separate-stderr jobreg-dispatch --slots g:1 b true
	[ "$status" -eq 75 ]
	[[ $stderr == "jobreg-dispatch: b: no free slot of g ("* ]]
	[ "$(field b status)" = PENDING ]
	counted b no-slot 1
	: >"$T/release"
}

@test "a -q --wait that runs out in a slot group's line is counted (wait-expired), also for a new job" {
	bg_dispatch a --slots g:1
	run --separate-stderr jobreg-dispatch -q --wait 0.3 --slots g:1 b true
	[ "$status" -eq 75 ]
	[ -z "$stderr" ]
	[ "$(field b status)" = PENDING ]
	counted b wait-expired 1
	: >"$T/release"
}

@test "a --wait that runs out in the job's line counts skip_reason=wait-expired, in one write with the end of its turn" {
	bg_dispatch j
	run --separate-stderr jobreg-dispatch --wait 0.3 j true
	[ "$status" -eq 75 ]
	[[ $stderr == *"still running after --wait 0.3" ]]
	counted j wait-expired 1
	# its place is over: the line's head moved past it, its file gone
	[ "$(field j wait_head)" = "$(field j wait_next)" ]
	[ -z "$(ls -A "$REG" | grep '\.wait\.')" ]
	: >"$T/release"
}

@test "a waiter superseded by a newer --replace counts skip_reason=superseded" {
	bg_dispatch j
	jobreg-dispatch --wait 30 j true 2>"$T/waiter.err" 3>&- &
	local waiter=$!
	BG_PIDS+=("$waiter")
	in_line j
	jobreg-dispatch --replace --kill-after 1 j true
	wait_bg "$waiter"
	[ "$BG_RC" -eq 75 ]
	grep -qx 'jobreg-dispatch: j: superseded by a newer --replace' "$T/waiter.err"
	counted j superseded 1
}

@test "a waiter stopped by TERM, INT or HUP counts skip_reason=interrupted, leaves its place, and dies of the signal" {
	bg_dispatch j
	local sig n=0
	for sig in TERM INT HUP; do
		env --default-signal=INT,QUIT jobreg-dispatch --wait 30 j true 3>&- &
		local waiter=$!
		BG_PIDS+=("$waiter")
		poll_until eval '[ "$(field j wait_next)" = $((n + 2)) ]'
		kill -"$sig" "$waiter"
		wait_bg "$waiter"
		[ "$BG_RC" -eq $((128 + $(kill -l "$sig"))) ] || flunk "$sig: exit $BG_RC"
		n=$((n + 1))
		counted j interrupted "$n"
		[ "$(field j wait_head)" = "$(field j wait_next)" ]
	done
	: >"$T/release"
}

@test "a --coalesce follower ended by TERM says how many calls it leaves unanswered, and counts interrupted" {
	bg_dispatch j
	env --default-signal=INT,QUIT jobreg-dispatch --coalesce j true 2>"$T/follower.err" 3>&- &
	local follower=$!
	BG_PIDS+=("$follower")
	in_line j
	jobreg-dispatch -q --coalesce j true
	jobreg-dispatch -q --coalesce j true
	[ "$(field j coalesced)" = 2 ]
	kill -TERM "$follower"
	wait_bg "$follower"
	[ "$BG_RC" -eq 143 ]
	grep -qx "jobreg-dispatch: j: 2 coalesced calls left unanswered" "$T/follower.err" ||
		flunk "$(cat "$T/follower.err")"
	counted j interrupted 1
	# the next call starts afresh: it becomes the follower
	jobreg-dispatch --coalesce --wait 0.2 j true 2>/dev/null || true
	[ "$(field j coalesced)" = 2 ]
	: >"$T/release"
}

@test "answers and errors are not skips: not due, coalesced, a --once replay, a -w that ran out" {
	write_record j version=1 status=DONE "since=$(now_rfc3339)" exit=0 runs=1 \
		"started=$(now_rfc3339)" "last_success_started=$(now_rfc3339)"
	jobreg-dispatch --every 1h j true
	jobreg-dispatch --once j true
	flock "$REG/.j.lock" sleep 2 3>&- &
	BG_PIDS+=("$!")
	poll_until eval '! flock -n "$REG/.j.lock" true'
	run jobreg-dispatch -w 0.2 j true
	[ "$status" -eq 75 ]
	[ -z "$(field j skipped)" ]
	[ -z "$(field j skip_reason)" ]
}
