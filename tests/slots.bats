#!/usr/bin/env bats
# Slots: SPEC.md §1 (slot files), §3 (slots=), §5 step 2f and JOBREG_SLOTS,
# §5b Slots, jobreg-get --slots and -P's slot series.
bats_require_minimum_version 1.5.0
load lib/helper

# ---- local helpers -------------------------------------------------------

load lib/procs

local_setup() {
	# slotted: the command of the contention tests.  It checks what the
	# slots promise by itself: a lock of its own per slot K (two commands
	# in one K would meet there) and a file a live command, counted.
	cat >"$T/slotted" <<'EOF'
#!/bin/bash
t=$1 max=$2
k=${JOBREG_SLOTS##*:}
exec {marker}>"$t/k.$k"   # (a number of its own: fd 9 may be the slot's)
flock -n "$marker" || echo "slot $k held twice" >>"$t/errors"
: >"$t/alive/$$"
n=$(ls "$t/alive" | wc -l)
[ "$n" -le "$max" ] || echo "$n commands alive at once" >>"$t/errors"
sleep 0.02
rm -f "$t/alive/$$"
echo ran >>"$t/ran"
EOF
	chmod +x "$T/slotted"
	mkdir -p "$T/alive"
}

# in_line GROUP: somebody waits in GROUP's line (a place file exists).
in_line() {
	compgen -G "$REG/.$1.slotwait.*" >/dev/null
}

# ---- taking slots --------------------------------------------------------

@test "30 dispatchers of 10 jobs contending for heavy:3 never run more than 3 commands, nor two in one slot" {
	local round i pids
	for round in $(seq 10); do
		pids=()
		for i in $(seq 30); do
			jobreg-dispatch --wait 60 --slots heavy:3 "job$((i % 10))" "$T/slotted" "$T" 3 \
				3>&- >/dev/null 2>>"$T/stderr" &
			pids+=("$!")
		done
		for i in "${pids[@]}"; do
			wait "$i" || flunk "round $round: a dispatcher exited $?: $(cat "$T/stderr")"
		done
	done
	[ ! -e "$T/errors" ] || flunk "$(cat "$T/errors")"
	[ "$(wc -l <"$T/ran")" -eq 300 ]
	[ ! -s "$T/stderr" ] || flunk "$(cat "$T/stderr")"
	# Nobody left in line, and the line went on in order.
	! in_line heavy
	grep -qx 'head=[0-9]*' "$REG/.heavy.slotline"
}

@test "dispatchers taking a:1 and b:1 in either option order never deadlock" {
	local round i pids
	for round in $(seq 10); do
		pids=()
		for i in $(seq 20); do
			if [ $((RANDOM % 2)) -eq 0 ]; then
				set -- --slots a:1 --slots b:1
			else
				set -- --slots b:1 --slots a:1
			fi
			jobreg-dispatch --wait 60 "$@" "job$i" true 3>&- 2>>"$T/stderr" &
			pids+=("$!")
		done
		for i in "${pids[@]}"; do
			wait "$i" || flunk "round $round: a dispatcher exited $?: $(cat "$T/stderr")"
		done
	done
	[ ! -s "$T/stderr" ] || flunk "$(cat "$T/stderr")"
}

@test "waiters for a slot are served in the order they came, each in its place in the group's line" {
	bg_dispatch a --slots heavy:1
	local i pids=()
	for i in 1 2 3 4; do
		jobreg-dispatch --wait 20 --slots heavy:1 "w$i" sh -c 'echo "$JOBREG_JOB" >>"$0"' "$T/order" 3>&- &
		pids+=("$!")
		BG_PIDS+=("$!")
		poll_until test -e "$REG/.heavy.slotwait.$i"
	done
	: >"$T/release"
	for i in "${pids[@]}"; do wait_bg "$i"; [ "$BG_RC" -eq 0 ]; done
	[ "$(cat "$T/order")" = $'w1\nw2\nw3\nw4' ]
	! in_line heavy
	grep -qx 'next=5' "$REG/.heavy.slotline"
	grep -qx 'head=5' "$REG/.heavy.slotline"
}

@test "a call that waits goes behind those already in the group's line, even with a slot free" {
	mkdir -p "$REG"
	printf 'next=2\nhead=1\n' >"$REG/.heavy.slotline"
	flock -x "$REG/.heavy.slotwait.1" sleep 30 3>&- &   # somebody in line
	local waiter=$!
	BG_PIDS+=("$waiter")
	poll_until bash -c '! flock -n -s "$1" true' _ "$REG/.heavy.slotwait.1"
	run -75 jobreg-dispatch --wait 0.3 --slots heavy:1 w touch "$T/w"
	[ ! -e "$T/w" ]
	# A call that does not wait just takes a free slot.
	jobreg-dispatch --slots heavy:1 n true
	jobreg-dispatch --wait 10 --slots heavy:1 w touch "$T/w" 3>&- &
	local w=$!
	BG_PIDS+=("$w")
	poll_until test -e "$REG/.heavy.slotwait.3"
	[ ! -e "$T/w" ]
	kill_tree "$waiter" KILL
	wait_bg "$w"
	[ "$BG_RC" -eq 0 ]
	[ -e "$T/w" ]
}

# bats test_tags=serial
@test "a slot whose holder is killed with kill -9 goes to a waiter within 100 ms" {
	# (one process holds the slot: a shell's loop would start another
	# sleep, holding it on, between the kills of kill_run)
	jobreg-dispatch --slots heavy:1 a sleep 30 3>&- &
	local holder=$!
	BG_PIDS+=("$holder")
	poll_until jobreg-get -q --is RUNNING a
	jobreg-dispatch --wait 10 --slots heavy:1 b \
		sh -c 'date +%s.%N >"$0"' "$T/b.started" 3>&- 2>"$T/b.err" &
	local b=$!
	BG_PIDS+=("$b")
	poll_until in_line heavy
	poll_until blocked "$b"   # (asleep in its line)
	local killed
	kill_run "$holder"
	killed=$EPOCHREALTIME   # (no process: the slot is free from here on)
	poll_until test -s "$T/b.started"
	local ms
	ms=$(awk -v a="$killed" -v b="$(cat "$T/b.started")" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "the waiter ran ${ms} ms after the kill"
	[ "$ms" -lt 100 ]
}

@test "a waiter whose turn came, waiting for a slot, that a newer --replace supersedes exits 75 within seconds (a look once a second), not when a slot comes" {
	jobreg-dispatch --slots heavy:1 other sleep 30 3>&- &
	local holder=$!
	BG_PIDS+=("$holder")
	poll_until jobreg-get -q --is RUNNING other
	bg_dispatch j
	jobreg-dispatch --wait inf --slots heavy:1 j touch "$T/w.ran" 3>&- 2>"$T/w.err" &
	local w=$!
	BG_PIDS+=("$w")
	poll_until field_is j wait_next 2
	: >"$T/release"   # j's run ends: the waiter's turn, and it waits for heavy
	poll_until in_line heavy
	jobreg-dispatch --replace --wait 10 --slots heavy:1 j touch "$T/r.ran" 3>&- 2>"$T/r.err" &
	local r=$!
	BG_PIDS+=("$r")
	local t0=$EPOCHREALTIME
	wait_bg "$w"
	[ "$BG_RC" -eq 75 ]
	grep -qx "jobreg-dispatch: j: superseded by a newer --replace" "$T/w.err" || flunk "$(cat "$T/w.err")"
	awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { exit !(a - b < 4) }' || flunk "it took $t0 .. $EPOCHREALTIME"
	kill_run "$holder"   # the slot is free: the replacer runs
	wait_bg "$r"
	[ "$BG_RC" -eq 0 ] || flunk "$(cat "$T/r.err")"
	[ -e "$T/r.ran" ]
	[ ! -e "$T/w.ran" ]
}

@test "the command inherits its slot: a dispatcher killed alone leaves it held" {
	bg_dispatch a --slots heavy:1
	kill -KILL "$BG_PID"
	run -75 jobreg-dispatch --slots heavy:1 b true
	[[ "$output" == *"no free slot of heavy"* ]]
	: >"$T/release"
	poll_until jobreg-dispatch -q --slots heavy:1 b true
}

@test "no free slot held by what an ended run left: 'by no run on record', never '0 held'" {
	jobreg-dispatch --slots heavy:1 a sh -c 'sleep 30 >/dev/null 2>&1 & echo $! >"$0"' "$T/left" 3>&- 2>/dev/null
	[ "$(field a status)" = DONE ]
	run -75 --separate-stderr jobreg-dispatch --slots heavy:1 b true
	[ "$stderr" = "jobreg-dispatch: b: no free slot of heavy (1 held: 1 by no run on record)" ]
	kill "$(cat "$T/left")"
}

@test "no free slot: a call that does not wait exits 75, says who holds them, and counts a skip" {
	bg_dispatch a --slots heavy:2
	bg_dispatch b --slots heavy:2
	run -75 --separate-stderr jobreg-dispatch --slots heavy:2 c touch "$T/ran"
	[ "$stderr" = "jobreg-dispatch: c: no free slot of heavy (2 held: a, b)" ]
	[ ! -e "$T/ran" ]
	[ "$(field c skipped)" = 1 ]
	is_time=$(field c last_skipped)
	[[ "$is_time" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]]
	[ "$(field c status)" = PENDING ]
	run -3 jobreg-dispatch -q -E 3 --slots heavy:2 c true
	[ -z "$output" ]
	[ "$(field c skipped)" = 2 ]
	# A waiting call waits in line within its --wait limit.
	run -75 jobreg-dispatch --wait 0.3 --slots heavy:2 c true
	[[ "$output" == *"no free slot of heavy (2 held: a, b) after --wait 0.3"* ]]
	! in_line heavy
}

@test "the slots are in JOBREG_SLOTS and the RUNNING record's slots=, sorted by group, and gone with DONE" {
	run jobreg-dispatch --slots zeta:2 --slots alpha:1 j \
		sh -c 'echo "$JOBREG_SLOTS"; grep "^slots=" "$JOBREG_DIR/j"; cat "$JOBREG_DIR/.zeta.slot.1"'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "alpha:1,zeta:1" ]
	[ "${lines[1]}" = "slots=alpha:1,zeta:1" ]
	[ "${lines[2]}" = "j 1" ]
	[ -z "$(field j slots)" ]
	[ "$(field j status)" = DONE ]
	# A second slot when the first is held; no JOBREG_SLOTS without --slots,
	# even inside a run that has some.
	bg_dispatch a --slots zeta:2
	run jobreg-dispatch --slots zeta:2 j sh -c 'echo "$JOBREG_SLOTS"; jobreg-dispatch k sh -c "echo \${JOBREG_SLOTS-none}"'
	[ "${lines[0]}" = "zeta:2" ]
	[ "${lines[1]}" = "none" ]
}

@test "slots are held through retries" {
	run --separate-stderr jobreg-dispatch --retries 1 --retry-delay 0.1 --slots heavy:1 j \
		sh -c 'echo "$JOBREG_SLOTS $(grep ^slots= "$JOBREG_DIR/j")"; exit 1'
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "heavy:1 slots=heavy:1" ]
	[ "${lines[1]}" = "heavy:1 slots=heavy:1" ]
}

@test "dispatch --slots: N must be 1 or more, NAME a job id, and each group given once" {
	local bad
	for bad in heavy:0 heavy: heavy heavy:x heavy:10001 .heavy:1 'he/avy:1' ':1'; do
		run -64 jobreg-dispatch --slots "$bad" j touch "$T/ran"
		[[ "$output" == *"--slots $bad"* ]] || flunk "$bad: $output"
	done
	run -64 jobreg-dispatch --slots heavy:1 --slots heavy:2 j touch "$T/ran"
	[[ "$output" == *"the same group given twice"* ]]
	[ ! -e "$T/ran" ]
	[ ! -e "$REG" ]
}

@test "slot files and a group's line are made like lock files: group-shared in a group-writable registry" {
	mkdir -p "$REG"
	chmod 2775 "$REG"
	umask 022
	bg_dispatch a --slots heavy:2
	bg_dispatch b --slots heavy:2
	run -75 jobreg-dispatch --wait 0.1 --slots heavy:2 c true
	local f
	for f in .heavy.slot.1 .heavy.slot.2 .heavy.slotline; do
		[ "$(stat -c %a "$REG/$f")" = 664 ] || flunk "$f: $(stat -c %a "$REG/$f")"
	done
	grep -qx 'next=2' "$REG/.heavy.slotline"
	grep -qx 'head=2' "$REG/.heavy.slotline"
}

# ---- reading slots -------------------------------------------------------

@test "get --slots lists every slot, held or free, with its holder's run" {
	bg_dispatch a --slots heavy:3
	bg_dispatch b --slots db:1 --slots heavy:3
	local pa pb
	pa=$(field a pid) pb=$(field b pid)
	run jobreg-get --slots
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "$(printf 'db\t1\theld\tb\t1\t%s\t%s' "$HOST" "$pb")" ]
	[ "${lines[1]}" = "$(printf 'heavy\t1\theld\ta\t1\t%s\t%s' "$HOST" "$pa")" ]
	[ "${lines[2]}" = "$(printf 'heavy\t2\theld\tb\t1\t%s\t%s' "$HOST" "$pb")" ]
	[ "${lines[3]}" = "$(printf 'heavy\t3\tfree\t-\t-\t-\t-')" ]
	run jobreg-get -j --slots db
	[ "$output" = "{\"group\": \"db\", \"slot\": 1, \"state\": \"held\", \"job\": \"b\", \"run\": 1, \"host\": \"$HOST\", \"pid\": $pb}" ]
	: >"$T/release"
	wait_bg "$BG_PID"
	run jobreg-get -j --slots db
	[ "$output" = '{"group": "db", "slot": 1, "state": "free"}' ]
}

@test "get --slots never locks a slot file, and trusts only a live RUNNING record that names the slot" {
	mkdir -p "$REG"
	echo "x 4" >"$REG/.heavy.slot.1"
	echo "y 2" >"$REG/.heavy.slot.2"
	stale_record x slots=heavy:1
	live_record y
	echo "slots=heavy:1" >>"$REG/y"   # alive, but names another slot
	run jobreg-get --slots heavy
	[ "${lines[0]}" = "$(printf 'heavy\t1\tfree\t-\t-\t-\t-')" ]
	[ "${lines[1]}" = "$(printf 'heavy\t2\tfree\t-\t-\t-\t-')" ]
	command -v strace >/dev/null || skip "strace is not installed"
	run traced -e trace=flock jobreg-get --slots
	[ "$status" -eq 0 ]
	[[ "$output" != *"heavy.slot"* ]]
	[[ "$output" != *"flock("*"LOCK_EX"* ]] || flunk "$output"
}

@test "get --slots and its options" {
	run -64 jobreg-get --slots -a
	run -64 jobreg-get --slots -P
	run -64 jobreg-get --slots --history j
	run -64 jobreg-get --slots .bad
	run jobreg-get --slots
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "get -P -a gives jobreg_slots_in_use and jobreg_slots_capacity for each group" {
	bg_dispatch a --slots heavy:3
	jobreg-dispatch --slots db:2 b true
	run jobreg-get -P -a
	[ "$status" -eq 0 ]
	local reg
	reg=$(cd "$REG" && pwd)
	grep -qx '# TYPE jobreg_slots_in_use gauge' <<<"$output"
	grep -qx '# TYPE jobreg_slots_capacity gauge' <<<"$output"
	grep -q '^# HELP jobreg_slots_in_use ' <<<"$output"
	grep -qxF "jobreg_slots_in_use{registry=\"$reg\",group=\"heavy\"} 1" <<<"$output"
	grep -qxF "jobreg_slots_capacity{registry=\"$reg\",group=\"heavy\"} 3" <<<"$output"
	grep -qxF "jobreg_slots_in_use{registry=\"$reg\",group=\"db\"} 0" <<<"$output"
	grep -qxF "jobreg_slots_capacity{registry=\"$reg\",group=\"db\"} 2" <<<"$output"
	# (promtool's check of it: tests/prometheus.bats)
}

# ---- the other commands --------------------------------------------------

@test "clear -a leaves the slot files alone, and never takes a group for a job" {
	jobreg-dispatch --slots heavy:2 j true
	jobreg-dispatch --slots heavy:2 --slots x:1 k true
	bg_dispatch a --slots heavy:2
	run --separate-stderr jobreg-clear -a -v --if DONE
	[ "$status" -eq 0 ]
	[ "$output" = $'j\nk' ]
	[ -z "$stderr" ]
	[ -e "$REG/.heavy.slot.1" ] && [ -e "$REG/.heavy.slot.2" ] && [ -e "$REG/.x.slot.1" ]
	run jobreg-get -a
	[ "$output" = "a RUNNING" ]
	run jobreg-get --slots
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == *$'\theld\ta\t'* ]]
}

@test "a group's line with numbers far apart (.g.slotline next=400000000 head=1) costs a --wait 2 call seconds, not hours" {
	bg_dispatch a --slots g:1
	printf 'next=400000000\nhead=1\n' >"$REG/.g.slotline"
	local t0=$EPOCHREALTIME
	run --separate-stderr timeout 60 jobreg-dispatch --wait 2 --slots g:1 b touch "$T/b"
	[ "$status" -eq 75 ] || flunk "$status: $stderr"
	[[ $stderr == "jobreg-dispatch: b: no free slot of g (1 held: a) after --wait 2" ]] || flunk "$stderr"
	awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { exit !(a - b < 10) }' || flunk "it took $t0 .. $EPOCHREALTIME"
	[ ! -e "$T/b" ]
}

@test "a group's line number above 2^63-1 is a corrupt line file (65), and a line at 2^63-1 takes no place (74) rather than wrap" {
	bg_dispatch a --slots g:1
	printf 'next=18446744073709551615\nhead=1\n' >"$REG/.g.slotline"
	run --separate-stderr jobreg-dispatch --wait 1 --slots g:1 b touch "$T/b"
	[ "$status" -eq 65 ] || flunk "$status: $stderr"
	[ "$stderr" = "jobreg-dispatch: b: corrupt $REG/.g.slotline: next= is not a number up to 2^63-1" ]
	printf 'next=9223372036854775807\nhead=9223372036854775807\n' >"$REG/.g.slotline"
	run --separate-stderr jobreg-dispatch --wait 1 --slots g:1 b touch "$T/b"
	[ "$status" -eq 74 ] || flunk "$status: $stderr"
	[ "$stderr" = "jobreg-dispatch: b: take a place in the line of slot group g: its numbers are used up (remove its .slotline once nobody waits)" ]
	[ ! -e "$T/b" ]
	grep -qx 'next=9223372036854775807' "$REG/.g.slotline"
}

@test "a slot waiter writes who waits into its place, one line: job, pid, host, since" {
	bg_dispatch a --slots g:1
	jobreg-dispatch --wait 20 --slots g:1 b true 3>&- 2>/dev/null &
	local w=$!
	BG_PIDS+=("$w")
	poll_until grep -q 'next=2' "$REG/.g.slotline"
	local line
	line=$(cat "$REG/.g.slotwait.1")
	[[ $line =~ ^job=b\ pid=$w\ host=$HOST\ since=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] || flunk "'$line'"
	[ "$(wc -l <"$REG/.g.slotwait.1")" -eq 1 ]
}
