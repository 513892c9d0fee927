# Helpers for the clear and dispatch tests: background processes started by a
# test, polled for and ended in teardown.

BG_PIDS=()


procs_teardown() {
	: >"$BATS_TEST_TMPDIR/release"
	local p
	for p in "${BG_PIDS[@]}"; do kill_tree "$p" TERM; done
	for p in "${BG_PIDS[@]}"; do
		poll_until gone "$p" || kill_tree "$p" KILL
		wait "$p" 2>/dev/null || true
	done
}

# poll_until CMD...: retry CMD every 25 ms for at most 10 s.
poll_until() {
	local i=0
	until "$@"; do
		i=$((i + 1))
		[ "$i" -lt 400 ] || return 1
		nap 0.025
	done
}

# gone PID: the process no longer exists (or is a zombie); no process started.
gone() {
	local stat
	{ read -r stat < "/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

# kill_tree PID SIG: signal PID and its descendants, by id.
kill_tree() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do kill_tree "$c" "$2"; done
	kill "-$2" "$1" 2>/dev/null || true
}

# kill_run PID: kill -9 the dispatcher PID, then everything below it: the
# dispatcher first, so that it cannot see its command die and record the
# end (kill_tree, children first, lets it): the run is lost, as when its
# host dies.
kill_run() {
	local kids c
	kids=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
	kill -KILL "$1" 2>/dev/null || true
	for c in $kids; do kill_tree "$c" KILL; done
}

# wait_bg PID: wait (at most 15 s) for a background process; its status in BG_RC.
wait_bg() {
	local i=0
	while ! gone "$1"; do
		i=$((i + 1))
		if [ "$i" -ge 600 ]; then echo "process $1 did not end" >&2; return 1; fi
		nap 0.025
	done
	BG_RC=0
	wait "$1" || BG_RC=$?
}

# pid_start PID: field 22 of /proc/PID/stat.
pid_start() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20
}

# dead_pid: the pid of a process that has ended.
dead_pid() {
	sh -c 'exit 0' &
	local p=$!
	wait "$p"
	echo "$p"
}
