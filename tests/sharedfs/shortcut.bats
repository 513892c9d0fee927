#!/usr/bin/env bats
# The short cut on GlusterFS (SPEC §6; jobreg(7) SHARED FILESYSTEMS): a cut
# longer than the client's network.ping-timeout but shorter than the
# server's default detection of a lost client (keepalive after 20 s idle,
# server.tcp-user-timeout 42 s).  The client gives the server up and, once
# healed, reconnects; its lock stays held for the old connection until the
# server finds that connection dead, after the heal, and then a second run
# can start while the first is alive, connected, and told nothing.  Only
# dispatch's check of its own lock stops the first.  Run by
# tests/sharedfs/run on the volume with the server's defaults, mounted at
# JOBREG_DEF1 (client 1) and JOBREG_DEF2 (client 2); SHAREDFS_RUN cuts and
# heals; the overlap goes to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

PING=${SHAREDFS_LOSS_SECONDS:-3}

local_setup() {
	[ -n "${JOBREG_DEF1:-}" ] && [ -n "${JOBREG_DEF2:-}" ] && [ -n "${SHAREDFS_RUN:-}" ] ||
		skip "no mounts of a volume with the server's defaults: run tests/sharedfs/run"
	mounted "$JOBREG_DEF1" "$JOBREG_DEF2" || skip "$JOBREG_DEF1 or $JOBREG_DEF2 is not mounted"
	SUB=s$BATS_TEST_NUMBER.$$
	mkdir "$JOBREG_DEF1/$SUB"
	R1=$JOBREG_DEF1/$SUB R2=$JOBREG_DEF2/$SUB
	T=$BATS_TEST_TMPDIR
	PIDS=()
}

teardown() {
	"$SHAREDFS_RUN" heal m1 2>/dev/null || true
	end_runs
	[ -z "${SUB:-}" ] || rm -rf "$R2" 2>/dev/null || true
	# client 1's mounts, idle during the cut, answer again before the next
	mounted "$JOBREG_DEF1" ${JOBREG_MNT1:+"$JOBREG_MNT1"} || true
}

@test "a cut longer than the client's ping timeout but shorter than the server's detection: the first run is stopped no later than 1 s after the second starts" {
	local tc th ts t2 tstop rc st seen=
	hold_run "$R1" s
	poll_until 10 test -s "$T/s.tok"
	poll_until 10 status_is "$R2" s RUNNING
	tc=$(ms)
	"$SHAREDFS_RUN" cut m1
	sleep $((PING + 3))
	"$SHAREDFS_RUN" heal m1
	th=$(ms)
	# mount 2 reads RUNNING until the server lets the old connection go
	until st=$(jobreg-get -d "$R2" s 2>&1) && [ "$st" = STALE ]; do
		[ "$st" = RUNNING ] || seen="$seen $st;"
		[ $(( $(ms) - th )) -lt 60000 ] || flunk "not STALE 60 s after the heal"
		sleep 0.05
	done
	ts=$(ms)
	rc=0
	jobreg-dispatch -d "$R2" s sh -c 'echo "$JOBREG_RUN" > "$1.tok2"; cat /proc/uptime > "$1.start2"' sh "$T/s" 2> "$T/s.err2" || rc=$?
	[ "$rc" = 0 ] || flunk "dispatch on mount 2 exited $rc: $(cat "$T/s.err2")"
	read -r t2 _ < "$T/s.start2"
	t2=$(( ${t2%.*} * 1000 + 10#${t2#*.} * 10 ))
	poll_until 3 test -s "$T/s.stop" || true
	if [ -s "$T/s.stop" ]; then
		tstop=$(cat "$T/s.stop")
		echo "# gluster, server defaults: a cut of $((th - tc)) ms; STALE on mount 2 $((ts - th)) ms after the heal; run 1 stopped $((tstop - th)) ms after the heal: overlap with run 2 $((tstop - t2)) ms (bound 1000)" >&3
	else
		echo "# gluster, server defaults: a cut of $((th - tc)) ms; STALE on mount 2 $((ts - th)) ms after the heal; run 1 still running $(( $(ms) - t2 )) ms after run 2 started: overlap > $(( $(ms) - t2 )) ms (bound 1000)" >&3
	fi
	[ -z "$seen" ] || echo "# mount 2 also read:$seen" >&3
	[ "$(cat "$T/s.tok2")" = $(( $(cat "$T/s.tok") + 1 )) ]
	[ -s "$T/s.stop" ]
	[ $((tstop - t2)) -le 1000 ]
	touch "$T/s.go"
	poll_until 30 test -s "$T/s.rc"
	lost_lock_reported s "$(cat "$T/s.tok")" || flunk "dispatch of run 1 exited $(cat "$T/s.rc"): $(cat "$T/s.err")"
	[ "$(record_field "$R2" s runs)/$(record_field "$R2" s status)" = "$(cat "$T/s.tok2")/DONE" ]
}
