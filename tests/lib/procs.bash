# Helpers for tests that start processes (`load lib/procs`): live, dead and
# zombie owners, records naming them, dispatchers in the background, and a
# teardown that ends every process a test listed in BG_PIDS, even when the
# test failed.

BG_PIDS=()

procs_teardown() {
	: >"$BATS_TEST_TMPDIR/release"
	local p mine=()
	# Only the processes of this test: one that ended may have left its pid
	# to another test's process meanwhile (pid_max is often 32768).
	for p in "${BG_PIDS[@]}"; do ours "$p" && mine+=("$p"); done
	for p in "${mine[@]}"; do kill_tree "$p" TERM; done
	for p in "${mine[@]}"; do poll_until gone "$p" || kill_tree "$p" KILL; done
	for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# ours PID: PID is alive and a process of this test: its environment has
# this test's BATS_TEST_TMPDIR (which every process it starts inherits).
ours() {
	local env
	env=$(tr '\0' '\n' 2>/dev/null < "/proc/$1/environ") || return 1
	[[ $'\n'$env$'\n' == *$'\n'"BATS_TEST_TMPDIR=$BATS_TEST_TMPDIR"$'\n'* ]]
}

# gone PID: the process no longer exists (or is a zombie); no process started.
gone() {
	local stat
	{ read -r stat < "/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

# kill_tree PID [SIG]: signal (default TERM) PID's descendants, by id,
# children first, then PID (flock(1), for one, runs its command as a child
# that inherits the lock).
kill_tree() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do kill_tree "$c" "${2:-TERM}"; done
	kill "-${2:-TERM}" "$1" 2>/dev/null || true
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

# blocked PID: PID sleeps in a system call (state S): past its start, in a
# wait, a poll or a lock.
blocked() {
	local stat
	{ read -r stat < "/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = S ]
}

# holds_open PID PATH: PID, or a process below it, has PATH open (so a
# command under strace has reached the step that opens it).
holds_open() {
	local fd c
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" != "$2" ] || return 0
	done
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do holds_open "$c" "$2" && return 0; done
	return 1
}

# pid_start PID: field 22 of /proc/PID/stat (the start time), parsed after
# the last ')'; no process started.
pid_start() {
	local s f
	{ read -r s < "/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	read -r -a f <<< "$s"
	echo "${f[19]}"
}

# dead_pid: print the pid of a process that has ended and been reaped.
dead_pid() {
	sh -c 'exit 0' 3>&- &
	local p=$!
	wait "$p"
	echo "$p"
}

boot_id() { cat /proc/sys/kernel/random/boot_id; }

# start_sleeper: a live background process; its pid in $SLEEPER.
start_sleeper() {
	sleep 60 3>&- >/dev/null 2>&1 &
	SLEEPER=$!
	BG_PIDS+=("$SLEEPER")
}

# hold_place JOB N: a live waiter's place N in JOB's line (SPEC §5a), the
# file .JOB.wait.N locked by a background process, as a waiting dispatcher
# holds it; the place is live once this returns.
hold_place() {
	flock -x "$REG/.$1.wait.$2" sleep 60 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until place_held "$REG/.$1.wait.$2"
}

# place_held FILE: FILE exists and someone holds a lock on it.
place_held() {
	[ -e "$1" ] && ! flock -n -s "$1" true
}

# make_zombie: a child that exited and is not reaped; its pid in $ZOMBIE.
make_zombie() {
	local f="$BATS_TEST_TMPDIR/zombie.pid" i z st
	# The child outlives the exec (0.3 s), so bash cannot reap it first:
	# after the exec nothing waits for it and it stays a zombie.
	bash -c 'sleep 0.3 & echo $! > "$1"; exec sleep 60' _ "$f" 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	for i in $(seq 100); do
		if [ -s "$f" ]; then
			z=$(cat "$f")
			st=$(cat "/proc/$z/stat" 2>/dev/null) || st=
			st=${st##*) }
			if [ "${st%% *}" = Z ]; then ZOMBIE=$z; return 0; fi
		fi
		sleep 0.05
	done
	return 1
}

# stale_record JOB [LINES...]: RUNNING owned by a pid that is dead on this
# boot (in STALE_PID), LINES added at the end.
stale_record() {
	local t job=$1
	shift
	t=$(now_rfc3339 -60)
	STALE_PID=$(dead_pid)
	write_record "$job" version=1 status=RUNNING "since=$t" owner=pid "host=$HOST" \
		"pid=$STALE_PID" pid_start=1 "boot_id=$BOOT_ID" $(ns_fields) "started=$t" "$@"
}

# live_record JOB: RUNNING owned by a live background sleep (its pid in
# LIVE_PID, the record's since and started in LIVE_SINCE).
live_record() {
	local t
	t=$(now_rfc3339 -60)
	LIVE_SINCE=$t
	sleep 30 3>&- >/dev/null 2>&1 &
	LIVE_PID=$!
	BG_PIDS+=("$LIVE_PID")
	write_record "$1" version=1 status=RUNNING "since=$t" owner=pid "host=$HOST" \
		"pid=$LIVE_PID" "pid_start=$(pid_start "$LIVE_PID")" "boot_id=$BOOT_ID" $(ns_fields) "started=$t"
}

# dispatch_bg JOB DISPATCH_ARG...: jobreg-dispatch DISPATCH_ARG... in the
# background (INT and QUIT not ignored, as a background job's would be), its
# pid in DISPATCH_PID, its output in $T/out.JOB; returns once JOB is RUNNING.
dispatch_bg() {
	local job=$1
	shift
	env --default-signal=INT,QUIT jobreg-dispatch "$@" 3>&- >"$T/out.$job" 2>&1 &
	DISPATCH_PID=$!
	BG_PIDS+=("$DISPATCH_PID")
	poll_until jobreg-get -q --is RUNNING "$job"
}

# bg_dispatch JOB [OPTION...]: dispatch_bg of JOB whose command waits for
# $T/release (at most ~10 s); returns once the command runs. Pid in BG_PID.
bg_dispatch() {
	local job=$1
	shift
	dispatch_bg "$job" "$@" "$job" sh -c \
		': >"$0"; i=0; while [ ! -e "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done' \
		"$T/started.$job" "$T/release"
	BG_PID=$DISPATCH_PID
	poll_until test -e "$T/started.$job"
}
