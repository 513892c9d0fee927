#!/usr/bin/env bats
# A network partition between the servers and the client host that holds a
# dispatched run (SPEC §6; jobreg(7) SHARED FILESYSTEMS): the client's link
# is cut without dropping the carrier, another client reads the job and
# takes it over, the link is healed.  Run by tests/sharedfs/run, which sets
# JOBREG_MNT1..3 (one mount per client; a third, where there is one, lets a
# cut client reconnect while the next round runs), SHAREDFS_FS,
# SHAREDFS_RUN (the setup script: cut, heal, remount), SHAREDFS_LOSS_SECONDS
# (how long the filesystem takes to let a lost client's locks go) and
# SHAREDFS_CUT_ROUNDS; figures go to fd 3.
bats_require_minimum_version 1.5.0
load ../lib/helper
load sharedfs
JOBREG_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$JOBREG_ROOT/bin:$PATH"

ROUNDS=${SHAREDFS_CUT_ROUNDS:-20}
FS=${SHAREDFS_FS:-?}
LOSS=${SHAREDFS_LOSS_SECONDS:-42}

local_setup() {
	[ -n "${JOBREG_MNT1:-}" ] && [ -n "${JOBREG_MNT2:-}" ] && [ -n "${SHAREDFS_RUN:-}" ] ||
		skip "no shared mounts: run tests/sharedfs/run"
	MNT=("$JOBREG_MNT1" "$JOBREG_MNT2")
	[ -z "${JOBREG_MNT3:-}" ] || MNT+=("$JOBREG_MNT3")
	mounted "${MNT[@]}" || skip "${MNT[*]}: not all mounted"
	SUB=p$BATS_TEST_NUMBER.$$
	mkdir "$JOBREG_MNT1/$SUB"
	T=$BATS_TEST_TMPDIR
	PIDS=()
}

teardown() {
	local i
	for i in "${!MNT[@]}"; do "$SHAREDFS_RUN" heal "m$((i + 1))" 2>/dev/null || true; done
	end_runs
	[ -z "${SUB:-}" ] || rm -rf "$JOBREG_MNT2/$SUB" 2>/dev/null || true
}

# fail ROUND WHAT: one line for the round's report.
fail() { echo "round $1: $2" >> "$T/wrong"; }

# cut_round R H O: round R.  Mount H holds a run of job c.R; H's client is
# cut off; mount O reads the job until STALE (its longest read kept), and
# dispatches it again.  On GlusterFS the cut side must notice and stop its
# run within 3 s of the loss, while still cut (SPEC §6).  Its client gives
# the brick up at its own ping timeout, after the brick let the lock go;
# its lock check fails with ENOTCONN then and with EBADFD 0.1 s later.  In
# 100 cuts at load 5-8 it stopped -0.10/0.72/2.23 s (min/median/max) after
# the loss: the bound is the slowest + 35%.  On CephFS it cannot know before the heal: its lock
# check waits for the MDS until then, and then fails with ESHUTDOWN (the MDS
# evicted and blocklisted the client), a lost lock; so there the heal comes
# first, and the cut side must stop its run within 5 s of it (0.1-1.3 s
# measured: ceph-fuse reconnects and learns of its eviction).  H is healed;
# what follows the heal is checked by settle_round.
cut_round() {
	local r=$1 h=$2 o=$3 job=c.$1 st rc r0 r1 tc tl tstop slowest=0
	local rh=${MNT[$h]}/$SUB ro=${MNT[$o]}/$SUB
	hold_run "$rh" "$job"
	if ! poll_until 10 test -s "$T/$job.tok" || ! poll_until 10 status_is "$ro" "$job" RUNNING; then
		fail "$r" "run 1 did not start on mount $((h + 1)): $(cat "$T/$job.err")"
		touch "$T/$job.go"
		return
	fi
	tc=$(ms)
	"$SHAREDFS_RUN" cut "m$((h + 1))" || fail "$r" "the cut failed"
	while :; do
		r0=$(ms)
		rc=0
		st=$(jobreg-get -d "$ro" "$job" 2>&1) || rc=$?
		r1=$(ms)
		[ $((r1 - r0)) -le "$slowest" ] || slowest=$((r1 - r0))
		[ "$rc/$st" != 0/STALE ] || break
		[ "$rc/$st" = 0/RUNNING ] || fail "$r" "mount $((o + 1)) read: exit $rc: $st"
		if [ $((r1 - tc)) -gt $(( (LOSS + 10) * 1000 )) ]; then
			fail "$r" "not STALE on mount $((o + 1)) $((LOSS + 10)) s after the cut"
			break
		fi
		sleep 0.01
	done
	# (the loss: when another client can tell.  On CephFS this read began
	# long before, and waited for the eviction.)
	tl=$r1
	echo "$((r1 - tc))" >> "$T/stale"
	echo "$slowest" >> "$T/slowest"
	[ $((r1 - tc)) -le $(( (LOSS + 2) * 1000 )) ] ||
		fail "$r" "STALE on mount $((o + 1)) only $((r1 - tc)) ms after the cut (more than $LOSS + 2 s)"
	rc=0
	jobreg-dispatch -d "$ro" "$job" sh -c 'echo "$JOBREG_RUN" > "$1.tok2"' sh "$T/$job" 2> "$T/$job.err2" || rc=$?
	[ "$rc" = 0 ] || fail "$r" "dispatch on mount $((o + 1)) exited $rc: $(cat "$T/$job.err2")"
	[ "$(cat "$T/$job.tok2" 2>/dev/null)" = $(( $(cat "$T/$job.tok") + 1 )) ] ||
		fail "$r" "run 2's JOBREG_RUN is $(cat "$T/$job.tok2" 2>/dev/null), run 1's $(cat "$T/$job.tok")"
	if [ "$FS" = ceph ]; then
		# run 1 stopped within 5 s of the heal (waiting 2 s more, to
		# measure; a run not stopped is then let end)
		heal_round "$h" "$job"
		poll_until 7 test -s "$T/$job.stop" || true
		if [ -s "$T/$job.stop" ]; then
			tstop=$(( $(cat "$T/$job.stop") - $(cat "$T/$job.heal") ))
			echo "$tstop" >> "$T/stopped"
			[ "$tstop" -le 5000 ] || fail "$r" "run 1 stopped $tstop ms after the heal"
		else
			fail "$r" "run 1 still running $(( $(ms) - $(cat "$T/$job.heal") )) ms after the heal"
			touch "$T/$job.go"
		fi
		return
	fi
	# run 1 stopped within 3 s of the loss (waiting 1 s more, to measure)
	poll_until $(( (tl + 4000 - $(ms)) / 1000 + 1 )) test -s "$T/$job.stop" || true
	if [ -s "$T/$job.stop" ]; then
		tstop=$(cat "$T/$job.stop")
		echo "$((tstop - tl))" >> "$T/stopped"
		[ $((tstop - tl)) -le 3000 ] || fail "$r" "run 1 stopped $((tstop - tl)) ms after the loss"
	else
		fail "$r" "run 1 still running $(( $(ms) - tl )) ms after the loss"
	fi
	heal_round "$h" "$job"
}

# heal_round H JOB: heal mount H's client; in the background, note when the
# mount answers again, and then let run 1's command end (if it still runs,
# its dispatch then finds that the record is no longer its own).
heal_round() {
	"$SHAREDFS_RUN" heal "m$(($1 + 1))"
	ms > "$T/$2.heal"
	# (on CephFS the evicted client's mount answers nothing until mounted
	# again, by settle_round)
	[ "$FS" != ceph ] || return 0
	(
		poll_until 30 jobreg-get -d "${MNT[$1]}/$SUB" "$2" > /dev/null 2>&1 && ms > "$T/$2.back"
		touch "$T/$2.go"
	) &
	PIDS+=($!)
}

# settle_round R H VIA: after the heal, dispatch of round R on mount H has
# ended, saying that it lost its lock (exit 74) and leaving the record
# alone: mount H, once it answers again, and mount VIA (one that answers)
# read run 2's DONE, whole.
settle_round() {
	local r=$1 h=$2 via=$3 job=c.$1 rec d
	poll_until 30 test -s "$T/$job.rc" || { fail "$r" "dispatch of run 1 still running 30 s after the heal"; return; }
	lost_lock_reported "$job" "$(cat "$T/$job.tok")" ||
		fail "$r" "dispatch of run 1 exited $(cat "$T/$job.rc"): $(tr '\n' ' ' < "$T/$job.err")"
	if [ "$FS" = ceph ]; then
		# an evicted client's mount fails every call: mount it again
		"$SHAREDFS_RUN" remount "m$((h + 1))" > /dev/null || fail "$r" "mount $((h + 1)) could not be mounted again"
	fi
	poll_until 30 jobreg-get -d "${MNT[$h]}/$SUB" "$job" > /dev/null 2>&1 ||
		{ fail "$r" "mount $((h + 1)) does not answer 30 s after the heal"; return; }
	# (heal_round's own read may answer a moment after ours: its figure is
	# waited for, not read empty as 0)
	if [ "$FS" != ceph ] && poll_until 5 test -s "$T/$job.back"; then
		echo "$(( $(cat "$T/$job.back") - $(cat "$T/$job.heal") ))" >> "$T/back"
	fi
	for d in "${MNT[$h]}" "${MNT[$via]}"; do
		rec=$(jobreg-get -d "$d/$SUB" -l "$job" 2>&1) || fail "$r" "after the heal, through $d: $rec"
		[ "$(record_field "$d/$SUB" "$job" runs)/$(record_field "$d/$SUB" "$job" status)/$(record_field "$d/$SUB" "$job" exit)" = "$(cat "$T/$job.tok2")/DONE/0" ] ||
			fail "$r" "after the heal, through $d: $(tr '\n' ' ' < "$d/$SUB/$job")"
	done
	rm -f "$T/pending.$r"
}

@test "a client cut off while it holds a run: another reads STALE within the filesystem's timeout + 2 s and runs it as the next run; the cut one stops its run, on GlusterFS within 3 s of the loss, on CephFS within 5 s of the heal; after the heal the record is the new run's" {
	local r h o k n=${#MNT[@]} t0 t1 p
	t0=$(ms)
	for ((r = 1; r <= ROUNDS; r++)); do
		h=$(( (r - 1) % n )) o=$(( r % n ))
		# a round that cut a mount of this one is settled first (with
		# three mounts, that mount had a round to reconnect); mount H
		# read the last round's job, it answers
		for p in "$T"/pending.*; do
			[ -e "$p" ] || continue
			read -r k _ < "$p"
			[ "$k" != "$h" ] && [ "$k" != "$o" ] || settle_round "${p##*.}" "$k" "$h"
		done
		echo "$h" > "$T/pending.$r"
		cut_round "$r" "$h" "$o"
	done
	for p in "$T"/pending.*; do
		[ -e "$p" ] || continue
		read -r k _ < "$p"
		settle_round "${p##*.}" "$k" "$o"
	done
	t1=$(ms)
	local stale slowest stopped back
	stale=$(stats $(cat "$T/stale" 2>/dev/null))
	slowest=$(stats $(cat "$T/slowest" 2>/dev/null))
	stopped=$(stats $(cat "$T/stopped" 2>/dev/null))
	back=$(stats $(cat "$T/back" 2>/dev/null))
	echo "# $FS: $ROUNDS cuts of the client holding a run, $(cut -d: -f1 "$T/wrong" 2>/dev/null | sort -u | wc -l) rounds wrong, $(( (t1 - t0) / ROUNDS )) ms a round" >&3
	echo "# $FS:   STALE on another client after $stale ms (min/median/max; bound $((LOSS + 2)) s); its slowest read meanwhile $slowest ms" >&3
	if [ "$FS" = ceph ]; then
		echo "# $FS:   run 1 stopped $stopped ms after the heal ($(cat "$T/stopped" 2>/dev/null | wc -l) of $ROUNDS; bound 5 s)" >&3
	else
		echo "# $FS:   run 1 stopped $stopped ms after the loss ($(cat "$T/stopped" 2>/dev/null | wc -l) of $ROUNDS); the cut client answered again $back ms after the heal" >&3
	fi
	if [ -s "$T/wrong" ]; then
		sort -t: -k1,1 -s "$T/wrong" | head -n 40
		false
	fi
}
