# Helpers of the tests/sharedfs/*.bats suites (after ../lib/helper): clocks,
# polls, each test's directory on two mounts, another host, and a
# dispatched run held on one mount while it is cut off.

# ms: the monotonic clock in milliseconds (10 ms steps).
ms() {
	local up
	read -r up _ < /proc/uptime
	echo $(( ${up%.*} * 1000 + 10#${up#*.} * 10 ))
}

# poll_until SECONDS CMD...: run CMD every 10 ms until it succeeds.
poll_until() {
	local end=$(( $(ms) + $1 * 1000 )); shift
	until "$@"; do
		[ "$(ms)" -lt "$end" ] || return 1
		sleep 0.01
	done
}

# mounted DIR...: each DIR is a mount that answers, within 10 s (a client
# cut off and healed while it was idle finds its connection dead only at
# its next call, and reconnects about 3 s later).
mounted() {
	local d
	for d in "$@"; do poll_until 10 mountpoint -q "$d" || return 1; done
}

# two_mounts_setup, a file's local_setup: the test's own directory, R1 on
# mount 1 and R2 the same through mount 2; T and PIDS (kill_children's, in
# two_mounts_teardown).  Skipped without both mounts.
two_mounts_setup() {
	[ -n "${JOBREG_MNT1:-}" ] && [ -n "${JOBREG_MNT2:-}" ] ||
		skip "no shared mounts: run tests/sharedfs/run"
	mounted "$JOBREG_MNT1" "$JOBREG_MNT2" || skip "$JOBREG_MNT1 or $JOBREG_MNT2 is not mounted"
	local sub=${BATS_TEST_FILENAME##*/}
	sub=${sub%.bats}$BATS_TEST_NUMBER.$$
	mkdir "$JOBREG_MNT1/$sub"
	R1=$JOBREG_MNT1/$sub R2=$JOBREG_MNT2/$sub
	T=$BATS_TEST_TMPDIR
	PIDS=()
}

two_mounts_teardown() {
	kill_children "${PIDS[@]}"
	[ -z "${R1:-}" ] || ! mountpoint -q "$JOBREG_MNT1" || rm -rf "$R1"
}

# other_host CMD...: CMD in a new UTS and pid namespace named "otherhost"
# (all of it killed when this process is).
other_host() {
	unshare --uts --pid --fork --kill-child --mount-proc sh -c 'hostname otherhost && exec "$@"' sh "$@"
}

# status_is DIR JOB STATUS
status_is() {
	[ "$(jobreg-get -d "$1" "$2" 2>/dev/null)" = "$3" ]
}

# record_field DIR JOB KEY: KEY's value in the record, read through DIR.
record_field() {
	sed -n "s/^$3=//p" "$1/$2"
}

# hold_run DIR JOB: dispatch JOB in DIR, in the background and in a session
# of its own, its command holding the run until $T/JOB.go appears.  Left in
# $T: JOB.dpid (dispatch's pid, its session's id), JOB.tok (JOBREG_RUN),
# JOB.cmd (the command's pid), JOB.rc and JOB.err (dispatch's exit status
# and standard error), JOB.stop (ms() when the command's process had
# ended, polled every 20 ms).  end_runs ends them all.
hold_run() {
	local job=$2
	(
		setsid jobreg-dispatch -d "$1" "$job" sh -c 'echo $$ > "$1.cmd.new" && mv "$1.cmd.new" "$1.cmd"
			echo "$JOBREG_RUN" > "$1.tok"
			while [ ! -e "$1.go" ]; do sleep 0.05; done' sh "$T/$job" 2> "$T/$job.err" &
		echo $! > "$T/$job.dpid"
		st=0
		wait $! || st=$?
		echo "$st" > "$T/$job.rc"
	) 2> /dev/null &
	PIDS+=($!)
	(
		i=0
		while [ ! -s "$T/$job.cmd" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i + 1)); done
		p=$(cat "$T/$job.cmd" 2>/dev/null) || exit 0
		while ! ended "$p"; do sleep 0.02; done
		ms > "$T/$job.stop"
	) &
	PIDS+=($!)
}

# end_runs: kill -9 the dispatches and commands that hold_run started (each
# checked to be ours first: on a busy machine a pid is soon someone
# else's), and wait for the tests' background processes (PIDS).
end_runs() {
	local f p
	for f in "$T"/*.dpid "$T"/*.cmd; do
		[ -s "$f" ] || continue
		p=$(cat "$f")
		tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline" | grep -qF "$T/" || continue
		kill -9 "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# kill_children PID...: kill -9 each PID that is still a child of this
# shell (one that has ended may be someone else's pid by now), with its
# process group when it leads one (a setsid'd dispatch: its command too,
# which may hold bats' output open), and wait.
kill_children() {
	local p st f
	for p in "$@"; do
		st=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		read -ra f <<< "${st##*) }"
		[ "${f[1]}" = "$BASHPID" ] || continue
		[ "${f[2]}" != "$p" ] || kill -9 -- "-$p" 2>/dev/null || true
		kill -9 "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}

# ended PID: the process has ended, or is a zombie (its dispatch, blocked on
# a filesystem that does not answer, has not reaped it yet).
ended() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	st=${st##*) }
	[ "${st%% *}" = Z ]
}

# lost_lock_reported JOB RUN: dispatch of JOB said, in one line
# "jobreg-dispatch: JOB: ..." naming the run's number, that it lost its
# lock, and exited 74 (SPEC §6).
lost_lock_reported() {
	local err
	[ "$(cat "$T/$1.rc" 2>/dev/null)" = 74 ] || return 1
	err=$(grep -v 'taking over' "$T/$1.err" 2>/dev/null)
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] && [[ "$err" == "jobreg-dispatch: $1: "* ]] || return 1
	err=${err#"jobreg-dispatch: $1: "}
	[[ "$err" =~ (^|[^0-9])$2([^0-9]|$) ]] && [[ "$err" == *lost* ]]
}

# stats N...: "min/median/max" of the numbers.
stats() {
	[ $# -gt 0 ] || { echo -; return; }
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%d/%d/%d", v[1], v[int((NR + 1) / 2)], v[NR]; else printf "-" }'
}
