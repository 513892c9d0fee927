#!/usr/bin/env bats
# Cancels, slots, --every and the line of waiters (SPEC §5a, §5b) through
# two mounts of one GlusterFS volume or CephFS, mount 2's commands run as
# another host (UTS and pid namespace "otherhost"): nothing of 0.4's
# coordination may depend on a signal or an inotify between the two.  Run
# by tests/sharedfs/run, which sets JOBREG_MNT1, JOBREG_MNT2 and
# SHAREDFS_FS; figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

FS=${SHAREDFS_FS:-?}
# --every's test: calls from each mount this often, for this long.
EVERY_FOR=${SHAREDFS_EVERY_FOR:-120}

local_setup() { two_mounts_setup; }

teardown() { two_mounts_teardown; }

# ask_cancel DIR JOB SIGNAL KILL_AFTER: jobreg-set --cancel from another
# host, which cannot wake the dispatcher (SIGURG goes only to one of its
# own host): it returns once the dispatcher has taken the request up.
ask_cancel() {
	other_host jobreg-set -d "$1" --cancel --signal "$3" --kill-after "$4" "$2"
}

# cancel_run JOB KILL_AFTER CMD...: dispatch JOB on mount 1 (CMD, which
# writes its pid to $T/JOB.pid), cancel it from mount 2 (TERM, then KILL
# after KILL_AFTER seconds), and check the outcome on both mounts.  Sets
# ASKED_MS: how long jobreg-set --cancel took (until the dispatcher took the
# request up); CMD_MS: from its start to the command's end; STOP_MS: to the
# dispatch's exit (the run recorded DONE, its leftovers killed, its locks
# let go).  Each taken by a shell of its own (a loop of the test's is
# slowed by bats' traps).
cancel_run() {
	local job=$1 kill_after=$2 t0 BY
	BY=$(id -un)@otherhost
	shift 2
	setsid sh -c 'jobreg-dispatch "$@"; echo $? > "$0.rc"; date +%s%N > "$0.end"' "$T/$job" \
		-d "$R1" "$job" "$@" 2> "$T/$job.err" &
	PIDS+=("$!")
	poll_until 10 test -s "$T/$job.pid"
	poll_until 10 status_is "$R2" "$job" RUNNING
	# (the command's end, polled by a shell of its own every 10 ms)
	sh -c 'p=$(cat "$0")
		while s=$(cat "/proc/$p/stat" 2>/dev/null); do
			case $s in *") Z "*) break ;; esac
			sleep 0.01
		done
		date +%s%N > "$1"' "$T/$job.pid" "$T/$job.cmdend" &
	PIDS+=("$!")
	t0=${EPOCHREALTIME/./}
	ask_cancel "$R2" "$job" TERM "$kill_after"
	ASKED_MS=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	poll_until $((kill_after + 10)) test -s "$T/$job.end"
	poll_until 5 test -s "$T/$job.cmdend"
	CMD_MS=$(( ($(cat "$T/$job.cmdend") / 1000 - t0) / 1000 ))
	STOP_MS=$(( ($(cat "$T/$job.end") / 1000 - t0) / 1000 ))
	# (the pids signalled follow: "(TERM to pid N)", "...; KILL to pid N)")
	[[ "$(cat "$T/$job.err")" == "jobreg-dispatch: $job: run 1 cancelled by $BY (TERM to pid"*")" ]] ||
		{ cat "$T/$job.err"; false; }
	local r
	for r in "$R1" "$R2"; do
		[ "$(record_field "$r" "$job" status)" = DONE ]
		[ "$(record_field "$r" "$job" cancelled)" = 1 ]
		[ "$(record_field "$r" "$job" cancelled_by)" = "$BY" ]
		[ "$(record_field "$r" "$job" cancelled_runs)" = 1 ]
		[ -z "$(grep '^cancel_' "$r/$job")" ]
		[[ $(cat "$r/.$job.history") == "run=1 outcome=CANCELLED "* ]]
		jobreg-get -d "$r" --is CANCELLED "$job"
	done
}

@test "jobreg-set --cancel on mount 2 (another host) stops a run on mount 1 within 1 s + --kill-after, DONE cancelled on both mounts" {
	# a command that ends on TERM: within the dispatcher's once-a-second look
	cancel_run c 10 sh -c 'echo $$ > "$0"; exec sleep 60' "$T/c.pid"
	echo "# $FS: jobreg-set --cancel from another host, TERM: taken up after $ASKED_MS ms, the command ended after $CMD_MS ms, its dispatch after $STOP_MS ms" >&3
	[ "$(cat "$T/c.rc")" = 143 ]
	[ "$(record_field "$R2" c signal)" = TERM ]
	[ "$CMD_MS" -le 1500 ]
	[ "$STOP_MS" -le 3000 ]
	# one that ignores TERM: KILL --kill-after (1 s) later
	cancel_run k 1 sh -c 'trap "" TERM; echo $$ > "$0"; sleep 60' "$T/k.pid"
	echo "# $FS: jobreg-set --cancel from another host, TERM ignored, --kill-after 1: taken up after $ASKED_MS ms, the command ended after $CMD_MS ms, its dispatch after $STOP_MS ms" >&3
	[ "$(cat "$T/k.rc")" = 137 ]
	[ "$(record_field "$R2" k signal)" = KILL ]
	[ "$CMD_MS" -ge 1000 ]
	[ "$CMD_MS" -le 2500 ]
	[ "$STOP_MS" -le 4000 ]
}

@test "dispatchers on both mounts sharing --slots g:2 never run more than 2 commands at once, nor two in one slot" {
	# slotted DIR: the command.  Its own checks through the mount it runs
	# on: a lock per slot K (two commands in one K would meet there) and
	# a file while alive, counted.
	cat > "$T/slotted" <<'EOF'
#!/bin/bash
d=$1 t=$2
k=${JOBREG_SLOTS##*:}
exec {marker}> "$d/k.$k"   # (a number of its own: fd 9 may be the slot's)
flock -n "$marker" || echo "slot $k held twice" >> "$t/errors"
: > "$d/alive/$$.$HOSTNAME"
n=$(ls "$d/alive" | wc -l)
echo "$n" >> "$t/alive"
[ "$n" -le 2 ] || echo "$n commands alive at once: $(ls "$d/alive" | tr '\n' ' ')" >> "$t/errors"
sleep 0.4
rm -f "$d/alive/$$.$HOSTNAME"
echo "$HOSTNAME" >> "$t/ran"
EOF
	chmod +x "$T/slotted"
	mkdir "$R1/alive"
	local round i n=3 rounds=3 t0 pids
	t0=$(ms)
	for ((round = 1; round <= rounds; round++)); do
		pids=()
		for ((i = 0; i < 2 * n; i++)); do
			if [ "$i" -lt "$n" ]; then
				jobreg-dispatch -d "$R1" --wait 60 --slots g:2 "s$i" "$T/slotted" "$R1" "$T" \
					2>> "$T/stderr" &
			else
				other_host jobreg-dispatch -d "$R2" --wait 60 --slots g:2 "s$i" "$T/slotted" "$R2" "$T" \
					2>> "$T/stderr" &
			fi
			pids+=("$!")
			PIDS+=("$!")
		done
		for i in "${pids[@]}"; do
			wait "$i" || flunk "round $round: a dispatcher exited $?: $(cat "$T/stderr")"
		done
	done
	local took=$(( ($(ms) - t0) / rounds )) most
	most=$(sort -n "$T/alive" | tail -n 1)
	echo "# $FS: --slots g:2 across mounts: $rounds rounds of $n+$n dispatchers, $(wc -l < "$T/ran") runs ($(grep -c otherhost "$T/ran") on mount 2), at most $most alive at once, $took ms a round" >&3
	[ ! -e "$T/errors" ] || flunk "$(cat "$T/errors")"
	[ ! -s "$T/stderr" ] || flunk "$(cat "$T/stderr")"
	[ "$(wc -l < "$T/ran")" -eq $((2 * n * rounds)) ]
	[ "$(grep -c otherhost "$T/ran")" -eq $((n * rounds)) ]
	# the group's two slots were used at once, across the mounts
	[ "$most" -eq 2 ]
}

# every_calls DIR WRAP PHASE: a call of dispatch --every 10s on DIR (through
# WRAP) every 2 s from PHASE s on, each up to 1.5 s late (at random, so
# that either mount's may be the first after the job falls due: with calls
# on the dot, the mount that ran it always would be), for EVERY_FOR s from
# $T/t0 (realtime); each command notes "JOBREG_RUN START_REALTIME HOST" in
# $T/notes.
every_calls() {
	local d=$1 wrap=$2 phase=$3 t0 k=0 at now st
	t0=$(cat "$T/t0")
	while :; do
		at=$(( t0 * 1000 + phase * 1000 + k * 2000 + RANDOM % 1500 ))
		now=${EPOCHREALTIME/./}
		now=$(( now / 1000 ))
		[ "$at" -lt $(( (t0 + EVERY_FOR) * 1000 )) ] || break
		[ "$at" -le "$now" ] || sleep "$(printf '%d.%03d' $(( (at - now) / 1000 )) $(( (at - now) % 1000 )))"
		st=0
		"$wrap" jobreg-dispatch -q -d "$d" --every 10s e \
			bash -c 'echo "$JOBREG_RUN $EPOCHREALTIME $HOSTNAME" >> "$0"; sleep 0.5' "$T/notes" \
			2>> "$T/every.err" || st=$?
		echo "$st" >> "$T/every.st"
		k=$((k + 1))
	done
}

@test "calls of dispatch --every 10s from both mounts, each every 2 s for 2 minutes (SHAREDFS_EVERY_FOR), run it once each 10 to 12 s, never within 10 s of the last start" {
	local now=${EPOCHREALTIME%.*}
	echo $((now + 1)) > "$T/t0"
	every_calls "$R1" env 0 &
	PIDS+=("$!")
	every_calls "$R2" other_host 1 &
	PIDS+=("$!")
	wait "${PIDS[@]}"
	local runs calls
	runs=$(wc -l < "$T/notes")
	calls=$(wc -l < "$T/every.st")
	# the starts as recorded (to the second) and as the commands noted them
	sed -n 's/.* started=\([^ ]*\) .*/\1/p' "$R2/.e.history" | while read -r s; do date -u -d "$s" +%s; done > "$T/started"
	python3 - "$T/notes" "$T/started" > "$T/every.out" <<-'EOF'
	import sys
	notes = [line.split() for line in open(sys.argv[1])]
	started = [int(s) for s in open(sys.argv[2])]
	bad = []
	if [int(n[0]) for n in notes] != list(range(1, len(notes) + 1)):
	    bad.append("runs noted %s" % [n[0] for n in notes])
	if len(started) != len(notes):
	    bad.append("%d in the history, %d noted" % (len(started), len(notes)))
	gaps = [b - a for a, b in zip(started, started[1:])]
	noted = [float(b[1]) - float(a[1]) for a, b in zip(notes, notes[1:])]
	# a run may start no sooner than 10 s after the last one's recorded start
	early = [float(n[1]) - s for s, n in zip(started, notes[1:]) if float(n[1]) < s + 10]
	if gaps and min(gaps) < 10:
	    bad.append("recorded starts %d s apart" % min(gaps))
	if early:
	    bad.append("runs started %s s after the last recorded start" % early)
	print("gaps %s s (recorded), %.2f-%.2f s (noted); %d on mount 2" % (
	    gaps and "%d-%d" % (min(gaps), max(gaps)), min(noted or [0]), max(noted or [0]),
	    sum(1 for n in notes if n[2] == "otherhost")))
	for b in bad:
	    print("WRONG: " + b)
	EOF
	echo "# $FS: --every 10s across mounts: $calls calls in $EVERY_FOR s, $runs runs; $(head -n 1 "$T/every.out")" >&3
	if grep WRONG "$T/every.out"; then flunk "$(cat "$T/notes")"; fi
	# (10 to 12 runs in 2 minutes)
	[ "$runs" -ge $((EVERY_FOR / 12)) ] && [ "$runs" -le $(((EVERY_FOR + 9) / 10)) ] ||
		flunk "$runs runs in $EVERY_FOR s"
	# every call ran, was not due (0) or met the run (75)
	[ -z "$(grep -v -x -E '0|75' "$T/every.st")" ] ||
		flunk "exits: $(sort "$T/every.st" | uniq -c | tr -s ' \n' ' '); $(sort -u "$T/every.err" | head -n 5)"
	[ -z "$(grep -v -E 'already running|not due' "$T/every.err")" ] || flunk "$(sort -u "$T/every.err" | head -n 5)"
}

# field_is DIR JOB KEY VALUE: the record read through DIR has KEY=VALUE now.
field_is() { [ "$(record_field "$1" "$2" "$3")" = "$4" ]; }

# stamp_cmd: a command that notes its run's start and end ($JOBREG_RUN,
# s|e, the realtime, the host) in $T/stamps, holding the run until the
# file named by its argument exists.
stamp_cmd() {
	STAMP=(bash -c 'echo "$JOBREG_RUN s $EPOCHREALTIME $HOSTNAME" >> "$0"
		while [ ! -e "$1" ]; do sleep 0.02; done
		echo "$JOBREG_RUN e $EPOCHREALTIME $HOSTNAME" >> "$0"' "$T/stamps")
}

# started RUN: the stamps say RUN started.
started() { grep -q "^$1 s " "$T/stamps" 2>/dev/null; }

# stamp_of RUN s|e: the realtime of RUN's start or end, in ms.
stamp_of() {
	local t
	t=$(sed -n "s/^$1 $2 \([^ ]*\) .*/\1/p" "$T/stamps")
	t=${t/./}
	echo $(( t / 1000 ))
}

@test "a waiter on mount 2 (another host) in line behind one on mount 1 goes after it; one killed with kill -9 is passed over" {
	stamp_cmd
	setsid jobreg-dispatch -d "$R1" j "${STAMP[@]}" "$T/go1" 2> "$T/run.err" &
	PIDS+=("$!")
	poll_until 10 started 1
	jobreg-dispatch -d "$R1" --wait 60 j "${STAMP[@]}" "$T/go2" 2> "$T/a.err" &
	PIDS+=("$!")
	poll_until 10 field_is "$R2" j wait_next 2
	other_host jobreg-dispatch -d "$R2" --wait 60 j "${STAMP[@]}" "$T/go3" 2> "$T/b.err" &
	PIDS+=("$!")
	poll_until 10 field_is "$R1" j wait_next 3
	jobreg-get -d "$R1" -j j | grep -q -E '"waiting": ?2'
	touch "$T/go1"
	poll_until 10 started 2
	sleep 1
	if started 3; then flunk "run 3 started while run 2 was running"; fi
	touch "$T/go2" "$T/go3"
	poll_until 20 status_is "$R1" j DONE
	poll_until 10 field_is "$R1" j runs 3
	poll_until 10 status_is "$R2" j DONE
	[ "$(cut -d ' ' -f 1,2,4 "$T/stamps" | tr '\n' ,)" = "1 s $HOSTNAME,1 e $HOSTNAME,2 s $HOSTNAME,2 e $HOSTNAME,3 s otherhost,3 e otherhost," ]
	[ "$(record_field "$R1" j wait_head)" = 3 ]
	[ "$(record_field "$R1" j host)" = otherhost ]

	# The line again, the run on mount 2 this time: waiter A (mount 1)
	# stopped when its turn comes, then killed; B (mount 2) behind it.
	rm -f "$T/stamps"
	other_host jobreg-dispatch -d "$R2" j "${STAMP[@]}" "$T/go4" 2> "$T/run2.err" &
	PIDS+=("$!")
	poll_until 10 started 4
	setsid jobreg-dispatch -d "$R1" --wait 60 j "${STAMP[@]}" "$T/go5" 2> "$T/a2.err" &
	local a=$!
	PIDS+=("$a")
	poll_until 10 field_is "$R2" j wait_next 4
	other_host jobreg-dispatch -d "$R2" --wait 60 j "${STAMP[@]}" "$T/go6" 2> "$T/b2.err" &
	PIDS+=("$!")
	poll_until 10 field_is "$R1" j wait_next 5
	kill -STOP "$a"
	touch "$T/go4"
	poll_until 10 grep -q '^4 e ' "$T/stamps"
	sleep 1.5
	# B does not overtake A's live place
	if started 5; then flunk "the waiter on mount 2 overtook the live place ahead of it"; fi
	local t0 t1
	t0=${EPOCHREALTIME/./}
	kill -9 "$a"
	poll_until 10 started 5
	t0=$(( t0 / 1000 )) t1=$(stamp_of 5 s)
	echo "# $FS: line across mounts: waiter on mount 1 killed with kill -9, the one behind it on mount 2 started $((t1 - t0)) ms later" >&3
	touch "$T/go6"
	poll_until 10 status_is "$R1" j DONE
	[ "$(record_field "$R1" j runs)" = 5 ]
	[ "$(record_field "$R1" j host)" = otherhost ]
	[ "$(record_field "$R1" j wait_head)" = 5 ]
	[ "$((t1 - t0))" -le 1500 ]
}
