#!/usr/bin/env bats
# Where owners live (SPEC §2): pid and time namespaces sharing a registry,
# /proc mounted hidepid=2, reboots, other hosts, the sub-second TTL, and a
# run lock removed or replaced during a run.  Namespaces and mounts are made
# with unshare(1) and die with the test's processes; users are removed in
# teardown.

bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs
load lib/users

local_setup() {
	OTHER_BOOT=00000000-1111-2222-3333-444444444444
	mkdir -p "$REG"
}

need_unshare() {
	unshare "$@" true 2>/dev/null || skip "unshare $* does not work here (no namespace support or privilege)"
}

# in_background CMD...: run CMD in the background as a test process.
in_background() {
	"$@" 3>&- >"$T/bg.out" 2>&1 &
	BG_PIDS+=("$!")
}

# A shell script for sh -c that waits (at most ~10 s) for $T/release.
HOLD='i=0; while [ ! -e "$RELEASE" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done'

# container_owner JOB UNSHARE_OPTION...: a process in new namespaces that sets
# JOB RUNNING --owner itself, then waits for $T/release.  Returns once set.
container_owner() {
	local job=$1; shift
	in_background env RELEASE="$T/release" READY="$T/ready.$job" JOB="$job" \
		unshare "$@" sh -c 'jobreg-set --owner $$ "$JOB" RUNNING &&
			stat -L -c %i /proc/self/ns/pid > "$READY.pid_ns" &&
			cut -d" " -f22 /proc/$$/stat > "$READY.start" &&
			echo $$ > "$READY.pid" && : > "$READY"; '"$HOLD"
	poll_until test -e "$T/ready.$job"
}

# pid_owned JOB HOST PID BOOT [LINES...]: an owner=pid RUNNING record.
pid_owned() {
	local job=$1 host=$2 pid=$3 boot=$4 start=1
	shift 4
	if [ -e "/proc/$pid" ]; then start=$(pid_start "$pid"); fi
	write_record "$job" version=1 status=RUNNING "since=$(now_rfc3339 -60)" owner=pid \
		"host=$host" "pid=$pid" "pid_start=$start" "boot_id=$boot" "$@" \
		"started=$(now_rfc3339 -60)"
}

@test "a pid owner inside a container reads RUNNING on the host while it lives, so the host takes nothing over" {
	need_unshare --pid --fork --mount-proc
	container_owner cjob --pid --fork --mount-proc
	# The container's pid 1 is the host's init: 0.1.0 compared start times.
	[ "$(field cjob pid)" = 1 ]
	run jobreg-get cjob
	[ "$output" = RUNNING ]
	run --separate-stderr jobreg-set --if PENDING,DONE,STALE cjob RUNNING
	[ "$status" -eq 1 ]
	run --separate-stderr jobreg-dispatch cjob touch "$T/ran"
	[ "$status" -eq 75 ]
	[ ! -e "$T/ran" ]
	run --separate-stderr jobreg-clear --stale -a
	[ "$status" -eq 0 ]
	[ "$(field cjob owner)" = pid ]
}

@test "a host's pid owner reads RUNNING inside a container, whose clear --stale -a leaves it and clears its own dead owners" {
	need_unshare --pid --fork --mount-proc
	start_sleeper
	jobreg-set --owner "$SLEEPER" live RUNNING
	run --separate-stderr unshare --pid --fork --mount-proc sh -c '
		sleep 30 & p=$!
		jobreg-set --owner $p own RUNNING
		jobreg-get live own
		kill $p; wait $p
		jobreg-get own
		jobreg-clear --stale -a'
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'RUNNING\nRUNNING\nSTALE')" ]
	[ ! -e "$REG/own" ]
	[ "$(jobreg-get live)" = RUNNING ]
}

@test "a record written in a pid namespace names that namespace in pid_ns, and time_ns where the kernel has one" {
	need_unshare --pid --fork --mount-proc
	container_owner cjob --pid --fork --mount-proc
	[ "$(field cjob pid_ns)" = "$(cat "$T/ready.cjob.pid_ns")" ]
	[ "$(field cjob pid_ns)" != "$(stat -L -c %i /proc/self/ns/pid)" ]
	if [ -e /proc/self/ns/time ]; then
		[ "$(field cjob time_ns)" = "$(stat -L -c %i /proc/self/ns/time)" ]
	else
		[ -z "$(field cjob time_ns)" ]
	fi
}

@test "a pid owner in a time namespace reads RUNNING on the host, and a host's owner RUNNING in it" {
	[ -e /proc/self/ns/time ] || skip "no time namespaces: /proc/self/ns/time is missing (kernel before 5.6 or CONFIG_TIME_NS=n)"
	need_unshare --time --boottime 100000
	container_owner tjob --time --boottime 100000
	local pid
	pid=$(cat "$T/ready.tjob.pid")
	# Same pid, but its start time reads shifted in there: 0.1.0 said STALE.
	[ "$(field tjob pid)" = "$pid" ]
	[ "$(field tjob pid_start)" != "$(pid_start "$pid")" ]
	[ "$(field tjob time_ns)" != "$(stat -L -c %i /proc/self/ns/time)" ]
	run jobreg-get tjob
	[ "$output" = RUNNING ]
	start_sleeper
	jobreg-set --owner "$SLEEPER" host RUNNING
	run unshare --time --boottime 100000 jobreg-get host
	[ "$output" = RUNNING ]
	run unshare --time --boottime 100000 jobreg-clear --stale -a
	[ "$status" -eq 0 ]
	[ -e "$REG/host" ]
}

# hidepid_user: a temporary user and a registry it can read; name in
# TEST_USER, registry in USER_DIR/reg.  Both removed in teardown
# (users_teardown, public_dir).  The user runs the commands from a copy it
# can reach (public_bin).
hidepid_user() {
	command -v useradd >/dev/null && command -v setpriv >/dev/null ||
		skip "useradd or setpriv missing"
	need_unshare --mount --propagation private
	TEST_USER=jrtest_live_$$_$BATS_TEST_NUMBER
	add_user "$TEST_USER"
	public_dir jrtest-live
	USER_DIR=$PUBLIC
	public_bin
	install -d -m 0777 "$USER_DIR/reg"
	export JOBREG_DIR="$USER_DIR/reg"
	REG=$JOBREG_DIR
}

# as_user_hidepid CMD...: CMD as TEST_USER, in a private mount namespace
# whose /proc is mounted hidepid=2 (in this pid namespace).
as_user_hidepid() {
	PATH="$PUBLIC_BIN:$PATH" unshare --mount --propagation private sh -c '
		mount -t proc -o hidepid=2 proc /proc || exit 99
		u=$1; shift
		exec setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"' _ "$TEST_USER" "$@"
}

# bats test_tags=multiuser
@test "with /proc mounted hidepid=2, another user's reader sees a root-owned live pid owner as RUNNING and a dead one as STALE" {
	hidepid_user
	start_sleeper
	jobreg-set --owner "$SLEEPER" live RUNNING
	pid_owned dead "$HOST" "$(dead_pid)" "$BOOT_ID" $(ns_fields)
	# The user really cannot see the pid there, but kill(2) finds it.
	run as_user_hidepid test -e "/proc/$SLEEPER"
	[ "$status" -eq 1 ]
	run --separate-stderr as_user_hidepid jobreg-get live dead
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'RUNNING\nSTALE')" ]
}

# bats test_tags=multiuser
@test "with /proc mounted hidepid=2, a user may set --owner a root process it cannot see; the record has no pid_start" {
	hidepid_user
	start_sleeper
	run --separate-stderr as_user_hidepid jobreg-set --owner "$SLEEPER" job RUNNING
	[ "$status" -eq 0 ]
	[[ "$stderr" == "jobreg-set: job: pid $SLEEPER: start time hidden"* ]]
	[ "$(field job pid)" = "$SLEEPER" ]
	[ -z "$(field job pid_start)" ]
	[ "$(jobreg-get job)" = RUNNING ]
	kill "$SLEEPER"
	wait "$SLEEPER" || true
	[ "$(jobreg-get job)" = STALE ]
	run --separate-stderr as_user_hidepid jobreg-set --owner "$SLEEPER" job2 RUNNING
	[ "$status" -eq 64 ]
}

@test "a pid owner of this host with another boot id reads STALE: the machine has rebooted, even if the pid is alive now" {
	start_sleeper
	pid_owned old "$HOST" "$SLEEPER" "$OTHER_BOOT" $(ns_fields)
	run jobreg-get old
	[ "$output" = STALE ]
	run jobreg-clear --stale -a
	[ "$status" -eq 0 ]
	[ ! -e "$REG/old" ]
}

@test "a pid owner of another host with another boot id reads RUNNING, STALE once it expires" {
	pid_owned far "other-$HOST" "$(dead_pid)" "$OTHER_BOOT"
	pid_owned gone "other-$HOST" "$(dead_pid)" "$OTHER_BOOT" "expires=$(now_rfc3339 -1)"
	run jobreg-get far gone
	[ "$output" = "$(printf 'RUNNING\nSTALE')" ]
}

# bats test_tags=serial
@test "a --ttl 1 record reads RUNNING for its first second and STALE within 2 s of being set, every round" {
	# Set at chosen fractions of one second, so that the integer compare
	# of 0.1.0 (STALE 2.0-2.9 s after) cannot pass: by 2.2 s it still said
	# RUNNING in every round.  The three rounds run side by side (times
	# in microseconds: EPOCHREALTIME without its point).
	local frac t s left
	local -A t0=() t1=() stale=() running=()
	while [ "$((10#${EPOCHREALTIME#*.}))" -ge 250000 ]; do sleep 0.01; done
	for frac in 300 500 700; do
		while [ "$((10#${EPOCHREALTIME#*.} / 1000))" -lt "$frac" ] ||
		      [ "$((10#${EPOCHREALTIME#*.} / 1000))" -gt "$((frac + 50))" ]; do sleep 0.01; done
		t0[$frac]=${EPOCHREALTIME/./}
		jobreg-set --ttl 1 "ttl$frac" RUNNING
		t1[$frac]=${EPOCHREALTIME/./}
		# (read at once too: a later round may start in the next second)
		s=$(jobreg-get "ttl$frac")
		t=${EPOCHREALTIME/./}
		if [ "$s" = RUNNING ] && ((t - t0[$frac] < 1000000)); then running[$frac]=1; fi
	done
	left=1
	while [ "$left" = 1 ]; do
		left=0
		for frac in 300 500 700; do
			[ -z "${stale[$frac]:-}" ] || continue
			t=${EPOCHREALTIME/./}
			s=$(jobreg-get "ttl$frac")
			if [ "$s" = RUNNING ] && ((t - t0[$frac] < 1000000)); then running[$frac]=1; fi
			if [ "$s" = STALE ]; then stale[$frac]=$t; continue; fi
			((t - t1[$frac] >= 2200000)) || left=1
		done
		[ "$left" = 0 ] || sleep 0.05
	done
	for frac in 300 500 700; do
		if [ -n "${stale[$frac]:-}" ]; then
			t=$((stale[$frac] - t0[$frac]))
			printf '# ttl round .%s: STALE %d.%02d s after set\n' "$frac" $((t / 1000000)) $((t % 1000000 / 10000)) >&3
		else
			echo "# ttl round .$frac: still RUNNING 2.2 s after set" >&3
		fi
		[ "${running[$frac]:-0}" = 1 ]
		[ -n "${stale[$frac]:-}" ]
		# Never before the TTL: at least 1 s after the set began.
		((stale[$frac] - t0[$frac] >= 1000000))
	done
}

@test "the liveness decision reads every row of the jobreg(7) truth table as the page says" {
	unit_table liveness_table 20
}

# run_lock_holder JOB [-s]: flock(1) holds DIR/.JOB.run (exclusively, or
# shared with -s) until $T/release.
run_lock_holder() {
	in_background env RELEASE="$T/release" READY="$T/held.$1" \
		flock ${2:-} "$REG/.$1.run" sh -c ': > "$READY"; '"$HOLD"
	poll_until test -e "$T/held.$1"
}

# lock_owned JOB PID [LINES...]: an owner=lock RUNNING record with the
# dispatcher's pid fields of PID (this host, boot and namespaces).
lock_owned() {
	local job=$1 pid=$2
	shift 2
	pid_owned "$job" "$HOST" "$pid" "$BOOT_ID" $(ns_fields) "$@"
	sed -i 's/^owner=pid$/owner=lock/' "$REG/$job"
}

inode() { stat -c %i "$1"; }

@test "a lock-owned record whose run_lock names .JOB.run is judged by the lock alone, not by the dispatcher's pid" {
	run_lock_holder held
	lock_owned held "$(dead_pid)" "run_lock=$(inode "$REG/.held.run")"
	start_sleeper
	: > "$REG/.free.run"
	lock_owned free "$SLEEPER" "run_lock=$(inode "$REG/.free.run")"
	run jobreg-get held free
	[ "$output" = "$(printf 'RUNNING\nSTALE')" ]
}

@test "a lock-owned record whose .JOB.run was removed during the run is judged by the dispatcher's pid" {
	start_sleeper
	lock_owned live "$SLEEPER" run_lock=12345
	lock_owned dead "$(dead_pid)" run_lock=12345
	run jobreg-get live dead
	[ "$output" = "$(printf 'RUNNING\nSTALE')" ]
	run jobreg-clear --stale -a
	[ "$status" -eq 0 ]
	[ ! -e "$REG/dead" ]
	[ -e "$REG/live" ]
}

@test "a lock-owned record whose .JOB.run was replaced by another inode is judged by the dispatcher's pid, held or not" {
	run_lock_holder held -s
	lock_owned held "$(dead_pid)" "run_lock=$(( $(inode "$REG/.held.run") + 1 ))"
	start_sleeper
	: > "$REG/.free.run"
	lock_owned free "$SLEEPER" "run_lock=$(( $(inode "$REG/.free.run") + 1 ))"
	run jobreg-get held free
	[ "$output" = "$(printf 'STALE\nRUNNING')" ]
}

@test "a lock-owned record without run_lock, as 0.1.0 wrote it, is judged by the lock: a missing .JOB.run is dead" {
	run_lock_holder held
	lock_owned held "$(dead_pid)"
	start_sleeper
	lock_owned gone "$SLEEPER"
	run jobreg-get held gone
	[ "$output" = "$(printf 'RUNNING\nSTALE')" ]
}

@test "removing DIR/.JOB.run during a dispatch leaves the run RUNNING, and a second dispatch does not run" {
	in_background env RELEASE="$T/release" jobreg-dispatch job sh -c ': > "$0"; '"$HOLD" "$T/started"
	local first=${BG_PIDS[-1]}
	poll_until test -e "$T/started"
	rm "$REG/.job.run"
	run jobreg-get job
	[ "$output" = RUNNING ]
	run --separate-stderr jobreg-dispatch job touch "$T/second"
	[ "$status" -eq 75 ]
	[ ! -e "$T/second" ]
	: > "$T/release"
	wait_bg "$first"
	[ "$BG_RC" -eq 0 ]
	[ "$(jobreg-get job)" = DONE ]
}

# ---- as pid 1 of a pid namespace (a container's entrypoint) ----------------

# as_init CMD...: CMD as pid 1 of a new pid namespace, in the background; its
# pid as we see it in INIT (unshare's child), its exit status later in
# $T/init.rc, its stderr in $T/init.err.
as_init() {
	need_unshare -fp --mount-proc
	( rc=0; unshare -fp --mount-proc "$@" 2>"$T/init.err" || rc=$?; echo "$rc" > "$T/init.rc" ) 3>&- >/dev/null &
	BG_PIDS+=("$!")
	INIT_PARENT=$! INIT_NAME=${1##*/} INIT=
	poll_until find_init
}

# find_init: the child of as_init's unshare, named INIT_NAME, into INIT.
find_init() {
	local u
	u=$(pgrep -x -P "$INIT_PARENT" unshare) || return 1
	INIT=$(pgrep -x -P "$u" "$INIT_NAME")
}

# catches_ending_signals PID: PID has handlers for TERM, INT and HUP (SigCgt of
# /proc/PID/status).  Until then a signal to pid 1 is dropped by the kernel, as
# it is for any pid 1 that has not yet reached its main.
catches_ending_signals() {
	local mask
	mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$mask" ] && [ $((0x$mask & 0x4003)) -eq $((0x4003)) ]
}

# init_ends_on SIG: once the init process has its handlers and waits, send it
# SIG; it must end within 10 s with 128+SIG's number.
init_ends_on() {
	poll_until catches_ending_signals "$INIT"
	poll_until blocked "$INIT"
	kill -s "$1" "$INIT"
	poll_until test -s "$T/init.rc"
	[ "$(cat "$T/init.rc")" = $((128 + $(kill -l "$1"))) ] || { cat "$T/init.err"; false; }
}

@test "as pid 1, get --wait ends on TERM, INT and HUP as any other process does" {
	local sig
	for sig in TERM INT HUP; do
		rm -f "$T/init.rc"
		as_init jobreg-get --is DONE --wait inf job
		init_ends_on "$sig"
	done
}

@test "as pid 1, dispatch --wait ends on TERM and never runs its command" {
	jobreg-dispatch job sleep 100 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until eval '[ "$(jobreg-get job)" = RUNNING ]'
	as_init jobreg-dispatch --wait inf job touch "$T/ran"
	init_ends_on TERM
	[ ! -e "$T/ran" ]
}

@test "as pid 1, dispatch waiting for the job lock ends on TERM" {
	mkdir -p "$REG"
	flock "$REG/.job.lock" sleep 100 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.job.lock"
	as_init jobreg-dispatch -w 60 job touch "$T/ran"
	init_ends_on TERM
	[ ! -e "$T/ran" ]
}

@test "as pid 1, dispatch forwards TERM to its command and records the run" {
	as_init jobreg-dispatch job sh -c 'trap "exit 7" TERM; touch "$1/started"; while :; do sleep 0.05; done' sh "$T"
	poll_until test -e "$T/started"
	kill -TERM "$INIT"
	poll_until test -s "$T/init.rc"
	[ "$(cat "$T/init.rc")" = 7 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 7 ]
}

@test "as pid 1, a signal ignored when dispatch started stays ignored, for it and for its command" {
	( trap '' HUP; exec unshare -fp --mount-proc jobreg-dispatch job -- sh -c 'touch "$1/started"; sleep 1.5; echo survived > "$1/out"' sh "$T" ) 3>&- >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	poll_until test -e "$T/started"
	init=$(pgrep -x -P "$(pgrep -x -P "$!" unshare 2>/dev/null || echo "$!")" jobreg-dispatch || pgrep -n -x jobreg-dispatch)
	kill -HUP "$init"
	poll_until test -s "$T/out"
	[ "$(cat "$T/out")" = survived ]
	poll_until eval '[ "$(field job status)" = DONE ]'
	[ "$(field job exit)" = 0 ]
}
