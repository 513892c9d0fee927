#!/usr/bin/env bats
# One registry seen through two FUSE mounts of one GlusterFS volume or
# CephFS, each client in a network namespace of its own, which behave as two
# client hosts (SPEC §4 across hosts; jobreg(7) SHARED FILESYSTEMS).  Run by
# tests/sharedfs/run, which sets JOBREG_MNT1, JOBREG_MNT2, SHAREDFS_FS (the
# filesystem), SHAREDFS_RUN (its setup script: pid, remount) and
# SHAREDFS_LOSS_SECONDS (how long it takes to let a dead client's locks go);
# figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

ROUNDS=${SHAREDFS_ROUNDS:-100}
READS=${SHAREDFS_READS:-2000}
RAW_ROUNDS=${SHAREDFS_RAW_ROUNDS:-300}
CROWD=${SHAREDFS_CROWD:-4}
FS=${SHAREDFS_FS:-?}
LOSS=${SHAREDFS_LOSS_SECONDS:-42}

local_setup() { two_mounts_setup; }

teardown() { two_mounts_teardown; }

@test "flock(1) locks conflict across the two mounts, and a blocked waiter on one gets the lock when the other lets go" {
	touch "$R1/lockfile"
	flock -x "$R1/lockfile" sleep 3 &
	PIDS+=($!)
	poll_until 5 sh -c '! flock -n -s "$1" true' sh "$R2/lockfile"
	run flock -n -x "$R2/lockfile" true
	[ "$status" -eq 1 ]
	run flock -n -s "$R2/lockfile" true
	[ "$status" -eq 1 ]
	local t0 t1
	t0=$(ms)
	flock -x -w 10 "$R2/lockfile" true
	t1=$(ms)
	echo "# $FS: flock: blocked waiter on mount 2 waited $((t1 - t0)) ms for mount 1's lock" >&3
	[ "$((t1 - t0))" -gt 200 ]
	# shared locks of both mounts coexist, and keep an exclusive one out
	flock -s "$R1/lockfile" sleep 3 &
	PIDS+=($!)
	poll_until 5 sh -c '! flock -n -x "$1" true' sh "$R2/lockfile"
	flock -n -s "$R2/lockfile" true
}

# crowd ROUND N WRAP: N dispatchers of job r.ROUND on each mount, those of
# mount 2 run through WRAP (env or other_host).  The command appends
# $JOBREG_RUN to $T/runs.ROUND and holds the run until every other
# dispatcher has exited (10 s at most), so no dispatcher can come after the
# run ended.  Exit statuses in $T/st.ROUND.*.
crowd() {
	local r=$1 n=$2 wrap=$3 i d others=$(( 2 * $2 - 1 ))
	local cmd='echo "$JOBREG_RUN" >> "$1"; i=0; while [ "$(ls "$2" | wc -l)" -lt "$3" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done'
	mkdir -p "$T/st.$r"
	for ((i = 0; i < 2 * n; i++)); do
		if [ "$i" -lt "$n" ]; then d=$R1; else d=$R2; fi
		(
			if [ "$i" -lt "$n" ]; then w=env; else w=$wrap; fi
			# (bats runs this subshell under set -e: keep the status)
			st=0
			"$w" jobreg-dispatch -q -d "$d" "r.$r" sh -c "$cmd" sh "$T/runs.$r" "$T/st.$r" "$others" 2>/dev/null || st=$?
			echo "$st" > "$T/st.$r/$i"
		) &
	done
	wait
}

# crowd_rounds WRAP: $ROUNDS rounds of crowd $CROWD; exactly one run each,
# every other dispatcher exits 75 (already running).
crowd_rounds() {
	local r bad=0 t0 t1
	t0=$(ms)
	for ((r = 1; r <= ROUNDS; r++)); do
		crowd "$r" "$CROWD" "$1"
		local runs exits
		runs=$(wc -l < "$T/runs.$r")
		exits=$(cat "$T/st.$r"/* | sort | uniq -c | tr -s ' \n' ' ')
		if [ "$runs" -ne 1 ] || [ "$exits" != " 1 0 $((2 * CROWD - 1)) 75 " ] ||
		   [ "$(sed -n 's/^runs=//p' "$R2/r.$r")" != 1 ] || [ "$(cat "$T/runs.$r")" != 1 ]; then
			echo "round $r: $runs runs, exits$exits, record: $(tr '\n' ' ' < "$R2/r.$r")"
			bad=$((bad + 1))
		fi
	done
	t1=$(ms)
	echo "# $FS: exactly-once ($1): $ROUNDS rounds of $CROWD+$CROWD dispatchers, $bad rounds wrong, $(( (t1 - t0) / ROUNDS )) ms a round" >&3
	[ "$bad" -eq 0 ]
}

@test "dispatchers of one job started together on both mounts run it exactly once, every round" {
	crowd_rounds env
}

@test "dispatchers on both mounts, those of mount 2 on another host (UTS and pid namespace), run it exactly once, every round" {
	crowd_rounds other_host
}

@test "dispatch --once on one mount after a run on the other replays its result instead of running again" {
	local r bad=0 t0 t1
	t0=$(ms)
	for ((r = 1; r <= ROUNDS; r++)); do
		jobreg-dispatch -d "$R1" --once "o.$r" sh -c 'echo x >> "$1"; exit 3' sh "$T/once.$r" || [ $? -eq 3 ] || bad=$((bad + 1))
		run -3 jobreg-dispatch -q -d "$R2" --once "o.$r" sh -c 'echo y >> "$1"' sh "$T/once.$r"
		[ "$(cat "$T/once.$r")" = x ] || bad=$((bad + 1))
	done
	t1=$(ms)
	echo "# $FS: --once across mounts: $ROUNDS rounds, $bad wrong, $(( (t1 - t0) / ROUNDS )) ms a round of 2 dispatches" >&3
	[ "$bad" -eq 0 ]
}

@test "dispatch --wait on mount 2 waits for mount 1's run to end and then runs, as run 2" {
	jobreg-dispatch -d "$R1" waited sh -c 'echo "$JOBREG_RUN" >> "$1"; sleep 2' sh "$T/runs" &
	PIDS+=($!)
	poll_until 5 status_is "$R2" waited RUNNING
	local t0 t1
	t0=$(ms)
	jobreg-dispatch -d "$R2" --wait 20 waited sh -c 'echo "$JOBREG_RUN" >> "$1"' sh "$T/runs"
	t1=$(ms)
	echo "# $FS: --wait across mounts: waited $((t1 - t0)) ms" >&3
	[ "$(cat "$T/runs")" = $'1\n2' ]
	[ "$(sed -n 's/^runs=//p' "$R1/waited")" = 2 ]
	status_is "$R1" waited DONE
}

# note200 WORD: WORD 200 times (without a process of its own).
note200() {
	local z
	printf -v z '%0200d' 0
	echo "${z//0/$1}"
}

@test "readers on mount 2 never see a torn or corrupt record while mount 1 rewrites it in a loop" {
	jobreg-set -d "$R1" -m "$(note200 n0)" t RUNNING
	(
		i=0
		while [ ! -e "$T/stop" ]; do
			i=$((i + 1))
			jobreg-set -d "$R1" -m "$(note200 "n$i")" t RUNNING || echo "set $i: $?" >> "$T/seterr"
		done
		echo "$i" > "$T/writes"
	) &
	PIDS+=($!)
	local k
	for k in 1 2; do
		(
			reads=0 torn=0 corrupt=0 failed=0
			while [ "$reads" -lt $((READS / 2)) ]; do
				reads=$((reads + 1))
				# (under bats' set -e: a failed read is counted, not fatal)
				st=0
				out=$(jobreg-get -d "$R2" -l t 2>"$T/err.$k.$reads") || st=$?
				if [ "$st" -eq 65 ] || [[ "$out" == *CORRUPT* ]]; then corrupt=$((corrupt + 1))
				elif [ "$st" -ne 0 ]; then failed=$((failed + 1)); continue
				fi
				note=${out##*$'\t'}
				n=${note#n}; n=${n%%n*}
				[ "$note" = "$(note200 "n$n")" ] || torn=$((torn + 1))
				rm -f "$T/err.$k.$reads"
			done
			echo "$reads $torn $corrupt $failed" > "$T/reader.$k"
		) &
	done
	wait "${!}"
	for k in 1 2; do poll_until 120 test -s "$T/reader.$k"; done
	touch "$T/stop"
	wait "${PIDS[0]}"
	local reads=0 torn=0 corrupt=0 failed=0 a b c d
	for k in 1 2; do
		read -r a b c d < "$T/reader.$k"
		reads=$((reads + a)) torn=$((torn + b)) corrupt=$((corrupt + c)) failed=$((failed + d))
	done
	echo "# $FS: torn reads: $reads reads on mount 2 during $(cat "$T/writes") sets on mount 1: $torn torn, $corrupt CORRUPT, $failed failed" >&3
	cat "$T"/err.* 2>/dev/null | sed 's/[0-9]\{1,\}/N/g' | sort | uniq -c | sort -rn | head -5 | sed 's/^ */# /' >&3 || true
	[ ! -e "$T/seterr" ]
	[ "$torn" -eq 0 ]
	[ "$corrupt" -eq 0 ]
	[ "$failed" -eq 0 ]
}

@test "a record set on mount 1 reads back new on mount 2 as soon as set returns" {
	local i old=0 failed=0 out
	for ((i = 1; i <= RAW_ROUNDS; i++)); do
		jobreg-set -d "$R1" -m "n$i" j RUNNING
		if ! out=$(jobreg-get -d "$R2" -l j 2>&1); then
			failed=$((failed + 1)); echo "read $i: $out"; continue
		fi
		[ "${out##*$'\t'}" = "n$i" ] || { old=$((old + 1)); echo "read $i: $out"; }
		# and back the other way
		jobreg-set -d "$R2" -m "m$i" j RUNNING
		[ "$(jobreg-get -d "$R1" -l j 2>&1 | sed 's/.*\t//')" = "m$i" ] || old=$((old + 1))
	done
	echo "# $FS: read-after-write: $((2 * RAW_ROUNDS)) sets each read back on the other mount: $old old, $failed failed" >&3
	[ "$old" -eq 0 ]
	[ "$failed" -eq 0 ]
}

@test "a run on mount 1 killed with kill -9 reads STALE on mount 2, and mount 2 can dispatch the job again" {
	setsid jobreg-dispatch -d "$R1" k sleep 100 &
	local dpid=$! t0 t1
	PIDS+=("$dpid")
	poll_until 5 status_is "$R2" k RUNNING
	poll_until 5 pgrep -g "$dpid" -x sleep
	t0=$(ms)
	kill -9 -- "-$dpid"
	poll_until 20 status_is "$R2" k STALE
	t1=$(ms)
	echo "# $FS: kill -9 on mount 1 to STALE on mount 2: $((t1 - t0)) ms" >&3
	[ "$((t1 - t0))" -lt 10000 ]
	jobreg-dispatch -d "$R2" k true
	[ "$(sed -n 's/^runs=//p' "$R1/k")" = 2 ]
}

@test "a pid owner written from another host reads RUNNING on mount 1 even after it died, and STALE once its --ttl ends" {
	other_host sh -c 'sleep 0.5 & jobreg-set -d "$1" --owner $! p RUNNING; jobreg-set -d "$1" --owner $! --ttl 2 q RUNNING; wait' sh "$R2"
	# the owner is gone (its pid namespace too), but from mount 1 it is
	# another host's pid: not checkable
	run -0 jobreg-get -d "$R1" -l p q
	[[ "${lines[0]}" == p$'\t'RUNNING$'\t'*$'\t'pid$'\t'otherhost$'\t'* ]]
	status_is "$R1" p RUNNING
	local t0
	t0=$(ms)
	poll_until 10 status_is "$R1" q STALE
	echo "# $FS: --ttl 2 owner of another host: STALE on mount 1 after $(( $(ms) - t0 )) ms more" >&3
	status_is "$R1" p RUNNING
}

# fenced_write STORE TOKEN VALUE: a downstream store that remembers the
# highest token it accepted and refuses a write carrying a lower one.
fenced_write() {
	local high=0
	exec {fd}>>"$1.lock"
	flock -x "$fd"
	[ ! -s "$1.token" ] || high=$(cat "$1.token")
	if [ "$2" -lt "$high" ]; then
		exec {fd}>&-
		echo "refused token $2 < $high" >&2
		return 1
	fi
	echo "$2" > "$1.token"
	echo "$3" >> "$1"
	exec {fd}>&-
}

@test "when mount 1's client dies its run's lock goes, mount 2 reads STALE and starts a second run, whose higher JOBREG_RUN fences the first out" {
	local fuse1
	fuse1=$("$SHAREDFS_RUN" pid m1)
	[ -n "$fuse1" ]
	local store=$T/store
	export -f fenced_write
	# run 1 writes once at its start, then (still alive after the crash)
	# again when released
	setsid jobreg-dispatch -d "$R1" c bash -c 'echo "$JOBREG_RUN" > "$1/tok1"; fenced_write "$2" "$JOBREG_RUN" first
		while [ ! -e "$1/go" ]; do sleep 0.05; done
		fenced_write "$2" "$JOBREG_RUN" late && echo accepted > "$1/late" || echo refused > "$1/late"' sh "$T" "$store" &
	local dpid=$! t0 t1
	PIDS+=("$dpid")
	poll_until 10 test -s "$T/tok1"
	poll_until 5 status_is "$R2" c RUNNING
	local cmd
	cmd=$(pgrep -g "$dpid" -x bash | head -n 1)
	[ -n "$cmd" ]
	t0=$(ms)
	kill -9 "$fuse1"
	# (what a reader sees meanwhile: RUNNING, or an open that blocks)
	local slowest=0 r0 r1
	until r0=$(ms); status_is "$R2" c STALE; do
		r1=$(ms)
		[ $((r1 - r0)) -le "$slowest" ] || slowest=$((r1 - r0))
		[ $((r1 - t0)) -lt $(( (LOSS + 5) * 1000 )) ] || flunk "not STALE $((LOSS + 5)) s after the client died"
		sleep 0.01
	done
	t1=$(ms)
	[ $((t1 - r0)) -le "$slowest" ] || slowest=$((t1 - r0))
	echo "# $FS: FUSE client of mount 1 killed: STALE on mount 2 after $((t1 - t0)) ms; the slowest read meanwhile took $slowest ms" >&3
	[ $((t1 - t0)) -le $(( (LOSS + 2) * 1000 )) ]
	kill -0 "$cmd"
	jobreg-dispatch -d "$R2" c bash -c 'echo "$JOBREG_RUN" > "$1/tok2"; fenced_write "$2" "$JOBREG_RUN" second' sh "$T" "$store"
	kill -0 "$cmd"
	touch "$T/go"
	poll_until 10 test -s "$T/late"
	echo "# $FS: fencing: run 1 token $(cat "$T/tok1"), run 2 token $(cat "$T/tok2"); run 1's late write $(cat "$T/late")" >&3
	[ "$(cat "$T/tok2")" -gt "$(cat "$T/tok1")" ]
	[ "$(cat "$T/late")" = refused ]
	[ "$(cat "$store")" = $'first\nsecond' ]
	"$SHAREDFS_RUN" remount m1
	mountpoint -q "$JOBREG_MNT1"
	status_is "$R1" c DONE
}
