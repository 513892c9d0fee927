#!/usr/bin/env bats
# Chains (SPEC §5d) through two mounts of one GlusterFS volume or CephFS,
# mount 2's commands run as another host (UTS and pid namespace
# "otherhost"): the README's "upload after each new backup", with cron-like
# calls on both mounts.  Run by tests/sharedfs/run, which sets JOBREG_MNT1,
# JOBREG_MNT2 and SHAREDFS_FS; figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

FS=${SHAREDFS_FS:-?}
# How many backups (SHAREDFS_BACKUPS).
BACKUPS=${SHAREDFS_BACKUPS:-20}

local_setup() { two_mounts_setup; }

teardown() { two_mounts_teardown; }

# upload_calls DIR WRAP PHASE: the cron line of the recipe on DIR (through
# WRAP), a call each second from PHASE ms on, until $T/stop exists; each
# upload notes "u RUN s|e REALTIME HOST" in $T/stamps, each call's exit
# status goes to $T/calls.st.
upload_calls() {
	local d=$1 wrap=$2 st
	sleep "0.$3"
	while [ ! -e "$T/stop" ]; do
		st=0
		"$wrap" jobreg-dispatch -q -d "$d" --after backup upload \
			bash -c 'echo "u $JOBREG_RUN s $EPOCHREALTIME $HOSTNAME" >> "$0"; sleep 0.2
				echo "u $JOBREG_RUN e $EPOCHREALTIME $HOSTNAME" >> "$0"' "$T/stamps" \
			2>> "$T/calls.err" || st=$?
		echo "$st" >> "$T/calls.st"
		sleep 1
	done
}

# uploaded N: the stamps show N uploads started.
uploaded() { [ "$(grep -c '^u [0-9]* s ' "$T/stamps" 2>/dev/null)" -ge "$1" ]; }

@test "upload after each new backup: $BACKUPS backups, cron-like calls each second on both mounts: exactly one upload each, after the backup ended, none during a backup" {
	local i d wrap t0
	: > "$T/stamps"
	# (a backup with no record yet would be said even with -q: a misspelling)
	jobreg-set -d "$R1" backup PENDING
	upload_calls "$R1" env 0 &
	PIDS+=("$!")
	upload_calls "$R2" other_host 5 &
	PIDS+=("$!")
	t0=$(ms)
	for ((i = 1; i <= BACKUPS; i++)); do
		# each backup from the other mount than the last, 0.6 s long
		if ((i % 2)); then d=$R1 wrap=env; else d=$R2 wrap=other_host; fi
		"$wrap" jobreg-dispatch -q -d "$d" backup \
			bash -c 'echo "b $JOBREG_RUN s $EPOCHREALTIME $HOSTNAME" >> "$0"; sleep 0.6
				echo "b $JOBREG_RUN e $EPOCHREALTIME $HOSTNAME" >> "$0"' "$T/stamps" ||
			flunk "backup $i: exit $?"
		# its upload, within 10 s; then 1-2 s of calls that must not run
		poll_until 10 uploaded "$i" || flunk "no upload after backup $i: $(cat "$T/stamps")"
		sleep "1.$((RANDOM % 10))"
	done
	: > "$T/stop"
	wait "${PIDS[@]}"
	local took=$(( ($(ms) - t0) / 1000 ))
	python3 - "$T/stamps" "$BACKUPS" > "$T/after.out" <<-'EOF'
	import sys
	stamps = [line.split() for line in open(sys.argv[1])]
	n = int(sys.argv[2])
	def runs(kind, edge):
	    return [(int(s[1]), float(s[3]), s[4]) for s in stamps if s[0] == kind and s[2] == edge]
	bs, be, us = runs("b", "s"), runs("b", "e"), runs("u", "s")
	bad = []
	if [r for r, _, _ in bs] != list(range(1, n + 1)) or len(be) != n:
	    bad.append("backups %s" % bs)
	if [r for r, _, _ in us] != list(range(1, len(us) + 1)) or len(us) != n:
	    bad.append("%d uploads, of %d backups" % (len(us), n))
	ends = {r: t for r, t, _ in be}
	# upload k follows backup k: after its end, before the next one's start
	for k, (_, t, _) in enumerate(us[:n], 1):
	    if t < ends.get(k, float("inf")):
	        bad.append("upload %d started %.3f s before backup %d ended" % (k, ends[k] - t, k))
	    if k < n and t >= bs[k][1]:
	        bad.append("upload %d started after backup %d started" % (k, k + 1))
	during = [t for (_, t, _) in us for (r, start, _) in bs if start <= t <= ends.get(r, start)]
	if during:
	    bad.append("uploads started during a backup at %s" % during)
	lag = [t - ends[k] for k, (_, t, _) in enumerate(us[:n], 1) if k in ends]
	print("%d uploads, %d on mount 2; upload after its backup's end %.2f-%.2f s" % (
	    len(us), sum(1 for u in us if u[2] == "otherhost"), min(lag or [0]), max(lag or [0])))
	for b in bad:
	    print("WRONG: " + b)
	EOF
	local calls
	calls=$(wc -l < "$T/calls.st")
	echo "# $FS: --after across mounts: $BACKUPS backups in $took s, $calls upload calls; $(head -n 1 "$T/after.out")" >&3
	if grep WRONG "$T/after.out"; then flunk "$(cat "$T/stamps")"; fi
	# every call ran, was not due (0) or met the upload running (75)
	[ -z "$(grep -v -x -E '0|75' "$T/calls.st")" ] ||
		flunk "exits: $(sort "$T/calls.st" | uniq -c | tr -s ' \n' ' '); $(sort -u "$T/calls.err" | head -n 5)"
	[ -z "$(grep -v -E 'already running' "$T/calls.err")" ] || flunk "$(sort -u "$T/calls.err" | head -n 5)"
	# both mounts read the last success followed, and the list
	for d in "$R1" "$R2"; do
		[ "$(record_field "$d" upload after_seen)" = "backup:$BACKUPS" ]
		[ "$(record_field "$d" upload after)" = backup ]
		[ "$(record_field "$d" upload runs)" = "$BACKUPS" ]
	done
}
