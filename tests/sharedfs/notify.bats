#!/usr/bin/env bats
# Notifications (SPEC §5c) through two mounts of one GlusterFS volume or
# CephFS, mount 2's commands run as another host (UTS and pid namespace
# "otherhost"): each change of a job's health announced exactly once,
# whoever notices it — the dispatchers on either mount, and sweeps every
# second on both.  Run by tests/sharedfs/run, which sets JOBREG_MNT1,
# JOBREG_MNT2 and SHAREDFS_FS; figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

FS=${SHAREDFS_FS:-?}
# The sweeps go on this long; the job changes health every few seconds meanwhile.
NOTIFY_FOR=${SHAREDFS_NOTIFY_FOR:-30}

local_setup() { two_mounts_setup; }

teardown() { two_mounts_teardown; }

# sweeps DIR SECONDS CMD...: jobreg-get --notify NOTE -a on DIR every second.
sweeps() {
	local dir=$1 end=$(( $(ms) + $2 * 1000 ))
	shift 2
	while [ "$(ms)" -lt "$end" ]; do
		"$@" jobreg-get -q -d "$dir" --notify "$NOTE" -a || true
		sleep 1
	done
}

@test "each change of health is announced exactly once across two hosts: dispatchers on both mounts, sweeps every second on both" {
	# CMD: "EVENT HOST" appended to one local file: both hosts are this machine
	NOTE="echo \"\$JOBREG_EVENT \$(hostname)\" >> '$T/calls'"
	export NOTE
	sweeps "$R1" "$NOTIFY_FOR" &
	PIDS+=($!)
	sweeps "$R2" "$NOTIFY_FOR" other_host &
	PIDS+=($!)
	local end=$(( $(ms) + (NOTIFY_FOR - 4) * 1000 )) cycles=0 want=
	# the job fails on mount 1 and recovers on mount 2, cycle after cycle
	while [ "$(ms)" -lt "$end" ]; do
		jobreg-dispatch -q -d "$R1" --notify "$NOTE" j false || true
		sleep 2.5
		other_host jobreg-dispatch -q -d "$R2" --notify "$NOTE" j true
		sleep 2.5
		cycles=$((cycles + 1))
		want+="failed recovered "
	done
	wait "${PIDS[@]}"
	PIDS=()
	# a last sweep on each, after everything: nothing left to announce
	jobreg-get -q -d "$R1" --notify "$NOTE" -a
	other_host jobreg-get -q -d "$R2" --notify "$NOTE" -a
	local got by1 by2
	got=$(cut -d' ' -f1 "$T/calls" | tr '\n' ' ')
	by1=$(grep -vc ' otherhost$' "$T/calls") || true
	by2=$(grep -c ' otherhost$' "$T/calls") || true
	echo "# $FS: notify: $cycles cycles of failed and recovered over ${NOTIFY_FOR}s of sweeps on both mounts: $((by1 + by2)) calls, $by1 by mount 1's host, $by2 by mount 2's" >&3
	[ "$got" = "$want" ] || { cat "$T/calls"; false; }
	[ "$(record_field "$R2" j notified)" = OK ]
	[ -z "$(record_field "$R2" j notifying)" ]
}
