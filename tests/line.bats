#!/usr/bin/env bats
# When the job is already running (SPEC §5a): the line of waiters, coalescing,
# replacing, the dispatcher's side of a cancel, and refusals counted.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# lines_are FILE N: FILE has N lines now (no file: 0).
lines_are() {
	local n=0
	[ ! -e "$1" ] || n=$(wc -l <"$1")
	[ "$n" -eq "$2" ]
}

# stamp: a command that notes its run's start and end ($JOBREG_RUN, s|e, the time) in
# $T/stamps, taking WORK seconds between.
stamp_cmd() {
	STAMP=(bash -c 'echo "$JOBREG_RUN s $EPOCHREALTIME" >>"$0"; sleep "$1"; echo "$JOBREG_RUN e $EPOCHREALTIME" >>"$0"' "$T/stamps")
}

# waiters N JOB [OPTION...]: N dispatchers of JOB with --wait inf in the background,
# 20 ms apart, each running stamp (0.02 s of work); the i-th's pid in WPIDS[i], and
# the job's place counter shows every one of them in line before it returns.
waiters() {
	local n=$1 job=$2 i next
	shift 2
	stamp_cmd
	WPIDS=()
	field_into next "$job" wait_next
	next=${next:-1}
	for ((i = 0; i < n; i++)); do
		jobreg-dispatch --wait inf "$@" "$job" "${STAMP[@]}" 0.02 3>&- 2>>"$T/waiters.err" &
		WPIDS+=("$!")
		BG_PIDS+=("$!")
		nap 0.02
	done
	poll_until field_is "$job" wait_next "$((next + n))"
}

# runs_in_order FIRST N: the runs in $T/stamps are FIRST, FIRST+1, ... in the order they
# started, N of them, none overlapping the next.
runs_in_order() {
	python3 - "$T/stamps" "$1" "$2" <<-'EOF'
	import sys
	ev = {}
	order = []
	for line in open(sys.argv[1]):
	    run, kind, t = line.split()
	    ev[(int(run), kind)] = float(t)
	    if kind == "s":
	        order.append(int(run))
	first, n = int(sys.argv[2]), int(sys.argv[3])
	if order != list(range(first, first + n)):
	    sys.exit("runs started in the order %s" % order)
	for r in order[:-1]:
	    if ev[(r + 1, "s")] < ev[(r, "e")]:
	        sys.exit("run %d started before run %d ended" % (r + 1, r))
	EOF
}

@test "line: 50 waiters started 20 ms apart run in the order they came, 10 rounds of 10" {
	local round
	for ((round = 0; round < 10; round++)); do
		rm -f "$T/stamps" "$T/started.j$round" "$T/release"
		bg_dispatch "j$round"
		waiters 50 "j$round"
		: >"$T/release"
		for p in "${WPIDS[@]}"; do wait "$p"; done
		runs_in_order 2 50 || flunk "round $round: $(cat "$T/stamps")"
		[ "$(field "j$round" wait_head)" = 51 ]
		# the line leaves no file behind
		[ -z "$(cd "$REG" && ls -a | grep "^\.j$round\.wait\.")" ]
	done
}

# bats test_tags=serial
@test "line: waiters killed with kill -9 in the middle are passed over within 100 ms each" {
	local i gap_ms
	bg_dispatch j
	waiters 20 j
	# the 8th to the 12th leave the line by dying
	for i in 7 8 9 10 11; do kill -KILL "${WPIDS[$i]}"; done
	: >"$T/release"
	for i in "${!WPIDS[@]}"; do wait "${WPIDS[$i]}" || true; done
	runs_in_order 2 15 || flunk "$(cat "$T/stamps")"
	# The gap where the dead ones were is no more than 100 ms a dead waiter over the
	# median gap between two runs.
	python3 - "$T/stamps" <<-'EOF'
	import sys, statistics
	ev = {}
	for line in open(sys.argv[1]):
	    run, kind, t = line.split()
	    ev[(int(run), kind)] = float(t)
	gaps = [ev[(r + 1, "s")] - ev[(r, "e")] for r in range(2, 16)]
	median = statistics.median(gaps)
	# run 8 is the 7th waiter's; the 13th waiter's run (9) follows it
	print("# gaps ms: %s" % [round(g * 1000) for g in gaps], file=sys.stderr)
	if gaps[6] - median > 0.1 * 5:
	    sys.exit("the 5 dead waiters delayed the next by %.0f ms" % ((gaps[6] - median) * 1000))
	if max(gaps) > median + 0.1 * 5:
	    sys.exit("a gap of %.0f ms" % (max(gaps) * 1000))
	EOF
}

@test "line: a dispatch that does not wait cannot overtake a live place: 75, 'N waiting', nothing run, the skip counted" {
	write_record j version=1 status=DONE "since=$(now_rfc3339)" exit=0 wait_next=4 wait_head=2
	# place 2 is dead (no file), place 3 is held
	: >"$REG/.j.wait.3"
	flock "$REG/.j.wait.3" sleep 30 3>&- &
	BG_PIDS+=("$!")
	poll_until sh -c '! flock -n -s "$0" true' "$REG/.j.wait.3"
	run --separate-stderr jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: 1 waiting" ]
	[ ! -e "$T/ran" ]
	[ "$(field j skipped)" = 1 ]
	[ "$(field j status)" = DONE ]
	run jobreg-dispatch -E 0 -q j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ "$(field j skipped)" = 2 ]
	# once the holder is gone the line is empty
	kill_tree "${BG_PIDS[-1]}" KILL
	poll_until flock -n -s "$REG/.j.wait.3" true
	jobreg-dispatch j touch "$T/ran"
	[ -e "$T/ran" ]
}

@test "line: a waiter that gives up (--wait) leaves the line at once, and the next goes on" {
	stamp_cmd
	bg_dispatch j
	jobreg-dispatch --wait inf j "${STAMP[@]}" 0 3>&- &
	local first=$!
	BG_PIDS+=("$first")
	poll_until field_is "j" wait_next "2"
	run --separate-stderr jobreg-dispatch --wait 0.3 j touch "$T/gave-up"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: still running after --wait 0.3" ]
	[ ! -e "$REG/.j.wait.2" ]
	jobreg-dispatch --wait inf j "${STAMP[@]}" 0 3>&- &
	local third=$!
	BG_PIDS+=("$third")
	poll_until field_is "j" wait_next "4"
	: >"$T/release"
	wait "$first"
	wait "$third"
	[ ! -e "$T/gave-up" ]
	runs_in_order 2 2
}

@test "line: --once --retry-failed behind a waiter that leaves without a run runs again, not replays the old failure" {
	local t holder
	t=$(now_rfc3339 -60)
	write_record j version=1 status=DONE "since=$t" "host=$HOST" pid=1 "started=$t" "ended=$t" \
		exit=1 runs=1 failures=1 consecutive_failures=1 wait_next=2 wait_head=1
	hold_place j 1   # a waiter whose turn came (taking slots, say), still live
	holder=${BG_PIDS[-1]}
	jobreg-dispatch --once --retry-failed j touch "$T/again" 3>&- >/dev/null 2>"$T/c.err" &
	local c=$!
	BG_PIDS+=("$c")
	poll_until field_is j wait_next 3
	! gone "$c"
	kill_tree "$holder"   # it leaves the line without a run
	wait_bg "$c"
	[ "$BG_RC" -eq 0 ]
	[ -e "$T/again" ]
	[ "$(field j runs)" = 2 ]
}

@test "line: a run that found no live place ends the places that were given up, so later calls do not look at them again" {
	bg_dispatch j
	for i in 1 2 3; do
		run jobreg-dispatch --wait 0.2 j true
		[ "$status" -eq 75 ]
	done
	[ "$(field j wait_next)" = 4 ]
	: >"$T/release"
	wait "$BG_PID"
	jobreg-dispatch j true
	[ "$(field j wait_head)" = 4 ]
	[ "$(field j wait_next)" = 4 ]
}

@test "line: clear keeps a PENDING record of the line's numbers while places are live, and clear -a removes dead places" {
	bg_dispatch j
	stamp_cmd
	jobreg-dispatch --wait inf j "${STAMP[@]}" 0 3>&- &
	local w=$!
	BG_PIDS+=("$w")
	poll_until field_is "j" wait_next "2"
	run jobreg-clear --force j
	[ "$status" -eq 0 ]
	[ "$(field j status)" = PENDING ]
	[ "$(field j wait_next)" = 2 ]
	[ "$(field j runs)" = "" ]
	# the waiter's turn has come: the run was cleared
	wait "$w"
	[ "$(field j runs)" = 1 ]
	[ "$(field j wait_head)" = 2 ]
	: >"$T/release"
	wait_bg "$BG_PID"
	# a dead place left by a crashed joiner, of a job with and without a record
	: >"$REG/.j.wait.9"
	: >"$REG/.other.wait.3"
	: >"$REG/.other.coalesce"
	jobreg-clear -a
	# (but the audit log, which no sweep removes: SPEC §3c)
	[ -z "$(ls -A "$REG" | grep -v '^\.-audit')" ] || flunk "left: $(ls -A "$REG")"
}

# ---- coalescing -------------------------------------------------------------

@test "coalesce: 20 calls during one run give exactly one more run, which starts after the last call returned (10 rounds)" {
	local round i
	for ((round = 0; round < 10; round++)); do
		rm -f "$T/started.c$round" "$T/release" "$T/returned" "$T/follower"
		bg_dispatch "c$round"
		for ((i = 0; i < 20; i++)); do
			(
				rc=0
				jobreg-dispatch --coalesce "c$round" bash -c 'echo "$EPOCHREALTIME" >"$0"' \
					"$T/follower" 2>/dev/null || rc=$?
				echo "$rc $EPOCHREALTIME" >>"$T/returned"
			) 3>&- &
			BG_PIDS+=("$!")
		done
		poll_until lines_are "$T/returned" 19
		: >"$T/release"
		poll_until lines_are "$T/returned" 20
		[ "$(field "c$round" runs)" = 2 ]
		[ "$(field "c$round" coalesced)" = 19 ]
		[ "$(grep -c '^0 ' "$T/returned")" = 20 ]
		# the follower ran after every folded call had returned
		python3 - "$T/returned" "$T/follower" <<-'EOF'
		import sys
		returned = sorted(float(l.split()[1]) for l in open(sys.argv[1]))
		follower = float(open(sys.argv[2]).read())
		if follower < returned[-2]:
		    sys.exit("the follower started %.3f s before the last folded call returned" % (returned[-2] - follower))
		EOF
		[ ! -e "$REG/.c$round.coalesce" ] || flock -n "$REG/.c$round.coalesce" true
	done
}

@test "coalesce: the message and count of a folded call; with nothing running it just runs" {
	run --separate-stderr jobreg-dispatch --coalesce j true
	[ "$status" -eq 0 ]
	[ "$(field j runs)" = 1 ]
	bg_dispatch j
	jobreg-dispatch --coalesce j true 3>&- &
	local follower=$!
	BG_PIDS+=("$follower")
	poll_until field_is "j" wait_next "2"
	run --separate-stderr jobreg-dispatch --coalesce j true
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: j: coalesced into the waiting run" ]
	[ "$(field j coalesced)" = 1 ]
	# a follower killed before it runs leaves the line; the next call starts afresh
	kill -KILL "$follower"
	wait_bg "$follower"   # (gone, so its lock is free: else the call might fold into it)
	run --separate-stderr jobreg-dispatch --coalesce --wait 0.2 j true
	[ "$status" -eq 75 ]
	[[ $stderr == *"still running after --wait 0.2"* ]]
	: >"$T/release"
}

@test "coalesce: a follower that gives up says how many folded calls it leaves unanswered" {
	bg_dispatch j
	jobreg-dispatch --coalesce --wait 4 j true 2>"$T/follower.err" 3>&- &
	local follower=$!
	BG_PIDS+=("$follower")
	poll_until field_is "j" wait_next "2"
	# (their --wait only bounds the test should the follower have left: folded, they exit 0)
	jobreg-dispatch -q --coalesce --wait 4 j true
	jobreg-dispatch -q --coalesce --wait 4 j true
	[ "$(field j coalesced)" = 2 ]
	local rc=0
	wait "$follower" || rc=$?
	[ "$rc" -eq 75 ]
	grep -qx "jobreg-dispatch: j: 2 coalesced calls left unanswered" "$T/follower.err" ||
		flunk "$(cat "$T/follower.err")"
	: >"$T/release"
}

@test "coalesce: every folded call is told of by the follower that leaves it, even one folded as the follower gives up" {
	bg_dispatch j
	# 150 calls 5 ms apart, each giving up after 0.1 s: followers come and go while
	# calls fold into them.  Nothing runs, so each call that exited 0 must be in one
	# follower's "N coalesced calls left unanswered".
	local i folded=0 told=0 n calls=()
	for ((i = 0; i < 150; i++)); do
		jobreg-dispatch --coalesce --wait 0.1 j true 2>"$T/call.$i" 3>&- &
		calls+=("$!")
		BG_PIDS+=("$!")
		nap 0.005
	done
	wait "${calls[@]}" || true
	for ((i = 0; i < 150; i++)); do
		if grep -qx "jobreg-dispatch: j: coalesced into the waiting run" "$T/call.$i"; then
			folded=$((folded + 1))
		fi
		n=$(sed -nE 's/^jobreg-dispatch: j: ([0-9]+) coalesced calls? left unanswered$/\1/p' "$T/call.$i")
		told=$((told + ${n:-0}))
	done
	echo "# $folded calls folded, $told told of" >&3
	[ "$folded" -gt 0 ]
	[ "$told" -eq "$folded" ]
	[ "$(field j coalesced)" = "$folded" ]
	[ "$(field j runs)" = 1 ]
	: >"$T/release"
}

# ---- cancel, the dispatcher's side --------------------------------------------

# ask_cancel JOB RUN [SIGNAL] [KILL_AFTER]: write a cancel request into JOB's record
# under its job lock, as jobreg-set --cancel does (without the wake-up).
ask_cancel() {
	flock "$REG/.$1.lock" sh -c '
		grep -v "^cancel_" "$0/$1" >"$0/.$1.tmp"
		printf "cancel_run=%s\ncancel_signal=%s\ncancel_kill_after=%s\ncancel_by=ops@elsewhere\ncancel_at=%s\n" \
			"$2" "$3" "$4" "$5" >>"$0/.$1.tmp"
		mv "$0/.$1.tmp" "$0/$1"' "$REG" "$1" "$2" "${3:-TERM}" "${4:-10}" "$(now_rfc3339)"
}

# bats test_tags=serial
@test "cancel: a request for the run is taken up within a second, the run stopped and recorded DONE cancelled" {
	jobreg-dispatch j sleep 30 2>"$T/err" 3>&- &
	local d=$!
	BG_PIDS+=("$d")
	poll_until field_is "j" status "RUNNING"
	local t0=$EPOCHREALTIME
	ask_cancel j 1
	local rc=0
	wait "$d" || rc=$?
	local ms=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
	((ms < 1500)) || flunk "took $ms ms"
	[ "$rc" -eq 143 ]
	[[ $(cat "$T/err") == "jobreg-dispatch: j: run 1 cancelled by ops@elsewhere (TERM to pid "[0-9]*")" ]]
	[ "$(field j status)" = DONE ]
	[ "$(field j cancelled)" = 1 ]
	[ "$(field j cancelled_by)" = ops@elsewhere ]
	[ "$(field j signal)" = TERM ]
	[ "$(field j cancelled_runs)" = 1 ]
	[ "$(field j failures)" = "" ]
	[ "$(field j consecutive_failures)" = "" ]
	[ "$(field j last_success)" = "" ]
	[ -z "$(grep '^cancel_' "$REG/j")" ]
	[[ $(cat "$REG/.j.history") == "run=1 outcome=CANCELLED "* ]]
	# CANCELLED, not FAILED, in status lists
	[ "$(jobreg-get -a -s CANCELLED)" = "j DONE" ]
	[ "$(jobreg-get -a -s FAILED)" = "" ]
	jobreg-get --is CANCELLED j
	run jobreg-get --is FAILED,OK j
	[ "$status" -eq 1 ]
	# --once replays it as failed; --retry-failed runs it again
	run --separate-stderr jobreg-dispatch --once j true
	[ "$status" -eq 143 ]
	[[ $stderr == "jobreg-dispatch: j: already done: cancelled (cancelled by ops@elsewhere, signal TERM, ended "* ]]
	run jobreg-dispatch --once --retry-failed j true
	[ "$status" -eq 0 ]
	[ "$(field j runs)" = 2 ]
}

@test "cancel: a command that ignores the signal gets KILL after cancel_kill_after, and one that exits 0 is still cancelled" {
	jobreg-dispatch j env --ignore-signal=TERM sleep 30 3>&- 2>/dev/null &
	local d=$!
	BG_PIDS+=("$d")
	poll_until field_is "j" status "RUNNING"
	ask_cancel j 1 TERM 0.5
	local rc=0
	wait "$d" || rc=$?
	[ "$rc" -eq 137 ]
	[ "$(field j signal)" = KILL ]
	[ "$(field j cancelled)" = 1 ]
	jobreg-dispatch j sh -c 'trap "exit 0" TERM; while :; do sleep 0.05; done' 3>&- 2>/dev/null &
	d=$!
	BG_PIDS+=("$d")
	poll_until field_is "j" runs "2"
	ask_cancel j 2 TERM
	rc=0
	wait "$d" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(field j exit)" = 0 ]
	[ "$(field j cancelled)" = 1 ]
	[ "$(field j cancelled_runs)" = 2 ]
	# a cancelled run is no success to replay, whatever its status
	run jobreg-dispatch --once j true
	[ "$status" -eq 1 ]
}

@test "cancel: a stale request (for run N, written while run N+1 runs) stops nothing" {
	jobreg-dispatch j true
	jobreg-dispatch j sleep 30 3>&- 2>/dev/null &
	local d=$!
	BG_PIDS+=("$d")
	poll_until field_is "j" runs "2"
	ask_cancel j 1
	sleep 1.5
	[ "$(field j status)" = RUNNING ]
	[ -z "$(field j cancel_seen)" ]
	ask_cancel j 2
	wait "$d" || true
	[ "$(field j cancelled)" = 1 ]
}

@test "cancel: a request between two attempts ends the retries, with no new attempt; the failed attempt stands" {
	jobreg-dispatch --retries 3 --retry-delay 30 j sh -c 'echo "$JOBREG_RUN" >>"$0"; exit 3' "$T/attempts" \
		3>&- 2>"$T/err" &
	local d=$!
	BG_PIDS+=("$d")
	poll_until sh -c 'grep -q "^retry_at=" "$0"' "$REG/j"
	ask_cancel j 1
	local rc=0
	wait "$d" || rc=$?
	[ "$rc" -eq 3 ]
	[ "$(cat "$T/attempts")" = 1 ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 3 ]
	[ "$(field j cancelled)" = "" ]
	[ "$(field j retries_cancelled_by)" = ops@elsewhere ]
	[ "$(field j cancelled_runs)" = "" ]
	[ "$(field j failures)" = 1 ]
	[ "$(wc -l <"$REG/.j.history")" = 1 ]
	[[ $(cat "$REG/.j.history") == "run=1 outcome=FAILED "* ]]
	grep -qx "jobreg-dispatch: j: retries cancelled by ops@elsewhere" "$T/err"
}

# ---- replace -------------------------------------------------------------------

@test "replace: 10 concurrent --replace and a running run: never two commands at once, one completes, the rest cancelled or superseded" {
	local i rc n_ok=0 n_cancelled=0 n_superseded=0
	# each command holds a lock of its own while it lives: a second one alive at the
	# same time cannot take it
	# (the first run outlasts any start-up of the replacers; theirs last 3 s, more
	# than the replacers take to arrive, so that exactly one completes)
	cmd=(flock -n -E 99 "$T/excl" sh -c 'echo "$JOBREG_RUN" >>"$0"; sleep "$1"; echo "$JOBREG_RUN" >>"$0.done"' "$T/ran")
	jobreg-dispatch j "${cmd[@]}" 30 3>&- 2>/dev/null &
	BG_PIDS+=("$!")
	local first=$!
	poll_until test -e "$T/ran"
	for ((i = 0; i < 10; i++)); do
		(
			rc=0
			jobreg-dispatch --replace --kill-after 0.5 j "${cmd[@]}" 3 2>>"$T/replace.err" || rc=$?
			echo "$rc" >>"$T/codes"
		) 3>&- &
		BG_PIDS+=("$!")
	done
	poll_until 20 lines_are "$T/codes" 10
	wait "$first" || true
	[ "$(wc -l <"$T/ran.done")" = 1 ] || flunk "completed: $(cat "$T/ran.done")"
	while read -r rc; do
		case $rc in
		0) n_ok=$((n_ok + 1)) ;;
		75) n_superseded=$((n_superseded + 1)) ;;
		143) n_cancelled=$((n_cancelled + 1)) ;;
		*) flunk "a replacer exited $rc: $(cat "$T/replace.err")" ;;
		esac
	done <"$T/codes"
	[ "$n_ok" -eq 1 ]
	[ "$((n_superseded + n_cancelled))" -eq 9 ]
	[ "$(grep -c 'superseded by a newer --replace' "$T/replace.err")" -eq "$n_superseded" ]
	# no command found another alive (flock -n would have exited 99, failing its run)
	! grep -q 'outcome=FAILED' "$REG/.j.history"
	# every cancelled run in the history once, and the record agrees
	local runs cancelled
	runs=$(field j runs)
	cancelled=$(grep -c 'outcome=CANCELLED' "$REG/.j.history")
	[ "$cancelled" -eq "$((runs - 1))" ]
	[ "$(field j cancelled_runs)" -eq "$cancelled" ]
	[ "$(cut -d' ' -f1 "$REG/.j.history" | sort | uniq -d)" = "" ]
	# every command that began was a run of its own (a run cancelled before its
	# command wrote its line, which a loaded machine allows, began none)
	[ "$(wc -l <"$T/ran")" -le "$runs" ]
	[ "$(sort "$T/ran" | uniq -d)" = "" ]
}

@test "replace: with nothing running it runs; its --signal and --kill-after are the cancel's" {
	run jobreg-dispatch --replace j true
	[ "$status" -eq 0 ]
	jobreg-dispatch j sh -c 'trap "exit 7" USR1; while :; do sleep 0.05; done' 3>&- 2>/dev/null &
	local d=$!
	BG_PIDS+=("$d")
	poll_until field_is "j" runs "2"
	run jobreg-dispatch --replace --signal USR1 j true
	[ "$status" -eq 0 ]
	local rc=0
	wait "$d" || rc=$?
	[ "$rc" -eq 7 ]
	[ "$(grep -c outcome=CANCELLED "$REG/.j.history")" = 1 ]
	run jobreg-dispatch --signal USR1 j true
	[ "$status" -eq 64 ]
	run jobreg-dispatch --replace --coalesce j true
	[ "$status" -eq 64 ]
}

# ---- pause, the dispatcher's side ----------------------------------------------

@test "paused: a dispatch refuses a paused job (75, who, until when, why; skipped), --once still replays, an expired pause is none" {
	local until
	until=$(now_rfc3339 3600)
	write_record j version=1 status=DONE "since=$(now_rfc3339)" exit=0 "paused_until=$until" \
		paused_by=ops@h "paused_note=kernel upgrade"
	run --separate-stderr jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: j: paused until $until (by ops@h: kernel upgrade); jobreg-set --resume j ends it" ]
	[ ! -e "$T/ran" ]
	[ "$(field j skipped)" = 1 ]
	[ "$(field j skip_reason)" = paused ]
	run jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 0 ]
	[ ! -e "$T/ran" ]
	sed -i 's/^paused_until=.*/paused_until=inf/' "$REG/j"
	run --separate-stderr jobreg-dispatch -E 3 j touch "$T/ran"
	[ "$status" -eq 3 ]
	[ "$stderr" = "jobreg-dispatch: j: paused until resumed (by ops@h: kernel upgrade); jobreg-set --resume j ends it" ]
	sed -i "s/^paused_until=.*/paused_until=$(now_rfc3339 -1)/" "$REG/j"
	jobreg-dispatch j touch "$T/ran"
	[ -e "$T/ran" ]
	jobreg-get --is OK j
}

@test "paused: a run going on is left alone, and dispatch --clear keeps the pause that came meanwhile" {
	bg_dispatch j --clear
	local until
	until=$(now_rfc3339 3600)
	flock "$REG/.j.lock" sh -c 'cp "$0/j" "$0/.j.tmp"; echo "paused_until=$1" >>"$0/.j.tmp"; mv "$0/.j.tmp" "$0/j"' \
		"$REG" "$until"
	: >"$T/release"
	wait_bg "$BG_PID"
	[ "$BG_RC" -eq 0 ]
	[ "$(field j status)" = PENDING ]
	[ "$(field j paused_until)" = "$until" ]
	[ "$(field j runs)" = "" ]
	run jobreg-get -a -s PAUSED
	[ "$output" = "j PENDING" ]
}

@test "paused: a --replace stops no run it cannot follow: refused as paused (75, skipped), the run going on left alone" {
	bg_dispatch j
	jobreg-set --pause -m drain j
	run --separate-stderr jobreg-dispatch --replace j true
	[ "$status" -eq 75 ]
	[[ $stderr == *"paused until resumed"*"drain"* ]]
	[ "$(field j cancel_run)" = "" ]
	[ "$(field j skipped)" = 1 ]
	[ "$(field j status)" = RUNNING ]
	! gone "$BG_PID"
	: >"$T/release"
	wait_bg "$BG_PID"
	[ "$BG_RC" -eq 0 ]
	[ "$(field j cancelled_runs)" = "" ]
}

@test "replace: --kill-after inf asks for no KILL: a run that ignores its signal goes on, and a second ask is not made" {
	jobreg-dispatch j sh -c 'trap "" TERM; while :; do sleep 0.05; done' 3>&- 2>/dev/null &
	local d=$!
	BG_PIDS+=("$d")
	poll_until field_is j runs 1
	run --separate-stderr jobreg-dispatch --replace --kill-after inf --wait 1.5 j true
	[ "$status" -eq 75 ]
	[ "$(field j cancel_kill_after)" = 0 ]
	[ -n "$(field j cancel_seen)" ]
	[ "$(field j status)" = RUNNING ]
	run jobreg-dispatch --replace --wait 0.2 j true
	[ "$status" -eq 75 ]
	[ "$(field j cancel_kill_after)" = 0 ]   # (the run was asked already)
	kill_tree "$d" KILL
}

@test "line: numbers far apart in a record edited by hand cost a bounded look, never a job locked for good" {
	jobreg-dispatch j true
	echo "wait_next=9223372036854775807" >>"$REG/j"
	local t0=$EPOCHREALTIME
	timeout 20 jobreg-dispatch j true
	timeout 20 jobreg-get -j j >/dev/null
	timeout 20 jobreg-clear j
	[ ! -e "$REG/j" ]
	(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 < 15000 ))
}

@test "cancel and replace: a signal that stops or continues (STOP, TSTP, TTIN, TTOU, CONT) would stop nothing: 64" {
	local sig
	for sig in STOP TSTP TTIN TTOU CONT SIGSTOP 19; do
		run --separate-stderr jobreg-set --cancel --signal "$sig" j
		[ "$status" -eq 64 ] || flunk "set $sig: $status"
		run --separate-stderr jobreg-dispatch --replace --signal "$sig" j touch "$T/ran"
		[ "$status" -eq 64 ] || flunk "dispatch $sig: $status"
		[[ $stderr == *"would not stop a cancelled run"* ]]
	done
	[ ! -e "$T/ran" ]
	# --timeout's own signal is as before
	run jobreg-dispatch --timeout 5 --signal CONT j true
	[ "$status" -eq 0 ]
}

@test "line: a line number above 2^63-1 makes the record corrupt (65), so no later waiter overtakes and no --replace supersedes for good" {
	local t key
	t=$(now_rfc3339)
	for key in wait_next=18446744073709551614 wait_head=9223372036854775808 \
		replaced_below=18446744073709551615; do
		write_record j version=1 status=DONE "since=$t" "$key"
		run --separate-stderr jobreg-dispatch --wait 1 j touch "$T/ran"
		[ "$status" -eq 65 ] || flunk "$key: $status $stderr"
		[[ $stderr == *"corrupt record"*"bad number"* ]]
		[ ! -e "$T/ran" ]
		[ -z "$(ls "$REG"/.j.wait.* 2>/dev/null)" ]
	done
	# the largest counter is a number like any other
	write_record j version=1 status=DONE "since=$t" runs=9223372036854775807
	jobreg-dispatch j true
	[ "$(field j runs)" = 9223372036854775807 ]
}

@test "line: a line at its last number, 2^63-1, takes no place (74) rather than wrap, and runs nothing" {
	local last=9223372036854775807
	write_record j version=1 status=DONE "since=$(now_rfc3339)" "wait_next=$last" \
		"wait_head=$((last - 1))"
	hold_place j "$((last - 1))"
	run --separate-stderr jobreg-dispatch --wait 5 j touch "$T/ran"
	[ "$status" -eq 74 ]
	[ "$stderr" = "jobreg-dispatch: j: take a place in line: its numbers are used up (clear the job once nobody waits)" ]
	[ ! -e "$T/ran" ]
	[ "$(field j wait_next)" = "$last" ]
	[ ! -e "$REG/.j.wait.$last" ]
}

@test "line: a probe of a place that fails (open: EMFILE, flock: ENOLCK) decides nothing: 74, never a run past a live waiter" {
	command -v strace >/dev/null || skip "no strace"
	write_record j version=1 status=DONE "since=$(now_rfc3339)" wait_next=3 wait_head=1
	hold_place j 2
	# (strace matches the name as dispatch opens it, relative to the registry)
	run --separate-stderr traced -qq -f -P .j.wait.2 -e trace=openat -e inject=openat:error=EMFILE \
		-o /dev/null jobreg-dispatch j touch "$T/ran"
	[ "$status" -eq 74 ]
	[[ $stderr == *"jobreg-dispatch: j: look at the place $REG/.j.wait.2: Too many open files" ]]
	run --separate-stderr traced -qq -f -P "$REG/.j.wait.2" -e trace=flock \
		-e inject=flock:error=ENOLCK -o /dev/null jobreg-dispatch --once j touch "$T/ran"
	[ "$status" -eq 74 ]
	[[ $stderr == *"jobreg-dispatch: j: look at the place $REG/.j.wait.2: No locks available" ]]
	[ ! -e "$T/ran" ]
	[ "$(field j wait_head)" = 1 ]
	[ "$(field j runs)" = "" ]
	place_held "$REG/.j.wait.2"
}

@test "line: each waiter writes who waits into its place, one line: kind (wait, once, coalesce, replace), pid, host, since" {
	local kind opt w n line
	live_record j   # a run no --replace asks to stop: every kind waits for it
	for kind in wait once coalesce replace; do
		case $kind in wait) opt=(--wait inf) ;; *) opt=("--$kind") ;; esac
		field_into n j wait_next
		n=${n:-1}
		jobreg-dispatch "${opt[@]}" j true 3>&- >/dev/null 2>&1 &
		w=$!
		BG_PIDS+=("$w")
		poll_until field_is j wait_next "$((n + 1))"
		line=$(cat "$REG/.j.wait.$n")
		[[ $line =~ ^kind=$kind\ pid=$w\ host=$HOST\ since=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] ||
			flunk "$kind: '$line'"
		[ "$(wc -l <"$REG/.j.wait.$n")" -eq 1 ]
		kill_tree "$w" KILL
	done
}
