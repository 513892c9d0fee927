# Helpers for the get and set tests: live, dead and zombie owner processes,
# and a teardown that ends what a test started in the background.

BG=()

# kill_tree PID: end a background process we started and its direct children
# (flock(1) runs its command as a child that inherits the lock).
kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill "$c" 2>/dev/null || true; done
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

owners_teardown() {
	local p
	for p in "${BG[@]}"; do kill_tree "$p"; done
}

# pid_start PID: field 22 of /proc/PID/stat, parsed after the last ')'.
pid_start() {
	local s
	s=$(cat "/proc/$1/stat") || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}

boot_id() { cat /proc/sys/kernel/random/boot_id; }

# start_sleeper: a live background process; its pid in $SLEEPER.
start_sleeper() {
	sleep 60 3>&- >/dev/null 2>&1 &
	SLEEPER=$!
	BG+=("$SLEEPER")
}

# dead_pid: a pid that existed a moment ago and has been reaped; in $DEAD.
dead_pid() {
	sleep 0 3>&- >/dev/null 2>&1 &
	DEAD=$!
	wait "$DEAD" || true
}

# make_zombie: a child that exited and is not reaped; its pid in $ZOMBIE.
make_zombie() {
	local f="$BATS_TEST_TMPDIR/zombie.pid" i z st
	# The child outlives the exec (0.3 s), so bash cannot reap it first:
	# after the exec nothing waits for it and it stays a zombie.
	bash -c 'sleep 0.3 & echo $! > "$1"; exec sleep 60' _ "$f" 3>&- >/dev/null 2>&1 &
	BG+=("$!")
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
