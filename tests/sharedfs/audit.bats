#!/usr/bin/env bats
# The audit log (SPEC §3c) through two mounts of one GlusterFS volume or
# CephFS, mount 2's writers run as another host (UTS and pid namespace
# "otherhost"): appends happen only under DIR/.-audit.lock, so the lines of
# two hosts never tear or interleave, also where a filesystem's appends are
# not atomic across clients.  Run by tests/sharedfs/run, which sets
# JOBREG_MNT1, JOBREG_MNT2 and SHAREDFS_FS; figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

FS=${SHAREDFS_FS:-?}
LINES=${SHAREDFS_AUDIT_LINES:-200}

local_setup() { two_mounts_setup; }

teardown() { two_mounts_teardown; }

# writes DIR JOB NAME: $LINES jobreg-set calls of JOB in DIR, each with the
# note "NAME N" and 300 bytes more (so that a torn or interleaved line
# shows), once $T/go is there; its exit status in $T/NAME.rc.
writes() {
	local i=0 pad
	pad=$(printf 'p%.0s' {1..300})
	while [ ! -e "$T/go" ]; do sleep 0.01; done
	while [ "$i" -lt "$LINES" ]; do
		i=$((i + 1))
		jobreg-set -w 60 -d "$1" -m "$3 $i $pad" "$2" DONE || { echo 1 > "$T/$3.rc"; return; }
	done
	echo 0 > "$T/$3.rc"
}

@test "two hosts appending $LINES lines each at once leave $((2 * LINES)) whole lines, none torn or interleaved" {
	export -f writes
	export T LINES
	writes "$R1" one h1 &
	PIDS+=($!)
	# mount 2's writer as another host
	unshare --uts --pid --fork --kill-child --mount-proc \
		bash -c 'hostname otherhost && writes "$1" two h2' bash "$R2" &
	PIDS+=($!)
	local t0
	t0=$(ms)
	touch "$T/go"
	poll_until 600 test -e "$T/h1.rc" -a -e "$T/h2.rc"
	echo "# $FS: $((2 * LINES)) audit lines from two hosts in $(( $(ms) - t0 )) ms" >&3
	[ "$(cat "$T/h1.rc" "$T/h2.rc")" = $'0\n0' ]
	local log=$R1/.-audit pad
	pad=$(printf 'p%.0s' {1..300})
	[ "$(wc -l < "$log")" -eq $((2 * LINES)) ]
	# every line whole, of the form the writer wrote, from either host
	run grep -cxE "time=[^ ]+ user=[^ ]+ uid=[0-9]+ host=[^ ]+ pid=[0-9]+ command=jobreg-set action=set job=(one|two) status=DONE note='h[12] [0-9]+ $pad'" "$log"
	[ "$output" -eq $((2 * LINES)) ]
	# each note once, and each host's in its order
	[ "$(grep -o "note='h[12] [0-9]*" "$log" | sort -u | wc -l)" -eq $((2 * LINES)) ]
	[ "$(grep -o "note='h1 [0-9]*" "$log" | cut -d ' ' -f 2 | paste -sd ' ')" = "$(seq -s ' ' 1 "$LINES")" ]
	[ "$(grep -o "note='h2 [0-9]*" "$log" | cut -d ' ' -f 2 | paste -sd ' ')" = "$(seq -s ' ' 1 "$LINES")" ]
	grep -q ' host=otherhost .* job=two ' "$log"
	# and read back whole through the other mount
	[ "$(jobreg-get -d "$R2" --audit one | wc -l)" -eq "$LINES" ]
}
