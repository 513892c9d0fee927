#!/usr/bin/env bats
# jobreg-dispatch step 5 (SPEC.md §5): time limits (--timeout, --kill-after,
# --signal), the process group of a limited run, signal names, and signals
# from a terminal delivered once.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

no_key() {
	! grep -q "^$2=" "$REG/$1"
}

# ---- the limit -----------------------------------------------------------

@test "a command that ignores TERM is killed --kill-after later: signal=KILL, timed_out=1, exit 124" {
	t0=$EPOCHREALTIME
	run -124 jobreg-dispatch --timeout 0.5 --kill-after 0.5 j env --ignore-signal=TERM sleep 30
	elapsed_between "$t0" 1.0 6
	[ "$(field j status)" = DONE ]
	[ "$(field j signal)" = KILL ]
	[ "$(field j timed_out)" = 1 ]
	[ "$(field j timeout)" = 0.5 ]
	no_key j exit
	run jobreg-get --is FAILED j
	[ "$status" -eq 0 ]
}

@test "a command that obeys TERM ends at the limit with signal=TERM and timed_out=1, exit 124" {
	t0=$EPOCHREALTIME
	run -124 jobreg-dispatch --timeout 1 --kill-after 20 j sleep 30
	elapsed_between "$t0" 1.0 4
	[ "$(field j signal)" = TERM ]
	[ "$(field j timed_out)" = 1 ]
	[ "$(field j timeout)" = 1 ]
}

@test "a command that catches TERM and exits 3 at the limit records exit=3 and timed_out=1; dispatch exits 124" {
	run -124 jobreg-dispatch --timeout 0.5 j sh -c 'trap "exit 3" TERM; sleep 30 & wait'
	[ "$(field j exit)" = 3 ]
	[ "$(field j timed_out)" = 1 ]
	no_key j signal
}

@test "a command that ends within its limit keeps its own status and is not timed out" {
	run -5 jobreg-dispatch --timeout 30 --kill-after 5 j sh -c 'exit 5'
	[ "$(field j exit)" = 5 ]
	[ "$(field j timeout)" = 30 ]
	no_key j timed_out
	run -0 jobreg-dispatch --timeout=1.5m j true
	[ "$(field j exit)" = 0 ]
	[ "$(field j timeout)" = 90 ]
	no_key j timed_out
}

@test "during a limited run the record holds the limit in timeout=" {
	run -0 jobreg-dispatch --timeout 1h j sh -c 'cat "$JOBREG_DIR/$JOBREG_JOB" >"$0"' "$T/rec"
	grep -qx 'status=RUNNING' "$T/rec"
	grep -qx 'timeout=3600' "$T/rec"
}

@test "--timeout inf and --timeout 0 mean no limit: the command runs to its end, no timeout= is written" {
	for limit in inf 0; do
		run -0 jobreg-dispatch --timeout "$limit" --kill-after 1 j sh -c 'sleep 1.2'
		[ "$(field j exit)" = 0 ]
		no_key j timeout
		no_key j timed_out
	done
}

@test "the limit kills the command's background processes too, so the run lock is free afterwards" {
	run -124 jobreg-dispatch --timeout 1 j sh -c 'sleep 90 & echo $! >"$0"; sleep 90' "$T/bg"
	bg=$(cat "$T/bg")
	poll_until gone "$bg"
	run -0 flock -n "$REG/.j.run" true
	[ "$(field j signal)" = TERM ]
}

@test "the command of a limited run is the leader of its own process group" {
	run -0 jobreg-dispatch --timeout 30 j sh -c 'ps -o pid=,pgid= -p $$ >"$0"' "$T/ids"
	read -r pid pgid <"$T/ids"
	ours=$(ps -o pgid= -p $$ | tr -d ' ')
	[ "$pid" = "$pgid" ]
	[ "$pgid" != "$ours" ]
	# Without a limit it stays in the dispatcher's group (the terminal's job).
	run -0 jobreg-dispatch k sh -c 'ps -o pgid= -p $$ >"$0"' "$T/ids"
	[ "$(tr -d ' ' <"$T/ids")" = "$ours" ]
}

@test "with --timeout, a signal sent to the dispatcher reaches the command's whole process group" {
	jobreg-dispatch --timeout 60 j sh -c 'sleep 90 & echo $! >"$0.tmp"; mv "$0.tmp" "$0"; wait' "$T/bg" \
		3>&- >"$T/out" 2>&1 &
	d=$!
	BG_PIDS+=("$d")
	poll_until test -e "$T/bg"
	bg=$(cat "$T/bg")
	kill -TERM "$d"
	wait_bg "$d"
	[ "$BG_RC" -eq 143 ]
	poll_until gone "$bg"
	[ "$(field j signal)" = TERM ]
	no_key j timed_out
}

@test "dispatch does not spin while it waits for the limit: a 3 s limit costs it little CPU time" {
	TIMEFORMAT='%U %S'
	{ time jobreg-dispatch --timeout 3 j sleep 30 2>/dev/null; } 2>"$T/cpu" || true
	[ "$(field j timed_out)" = 1 ]
	read -r user sys <"$T/cpu"
	# A polling loop would burn most of the 3 s; blocking costs milliseconds.
	[ "$(echo "$user + $sys < 0.3" | bc)" = 1 ] || flunk "CPU $user + $sys s"
}

# ---- --signal ------------------------------------------------------------

@test "--signal takes a name, a SIG name, a number or a real-time name, and the limit sends it" {
	for sig in INT SIGHUP 10 RTMIN+3; do
		rm -f "$REG/j"
		run -124 jobreg-dispatch --timeout 0.2 --signal "$sig" j sleep 30
		case $sig in
		INT) want=INT ;;
		SIGHUP) want=HUP ;;
		10) want=$(kill -l 10) ;;
		*) want=$sig ;;
		esac
		[ "$(field j signal)" = "$want" ]
		[ "$(field j timed_out)" = 1 ]
	done
}

@test "--signal KILL ends the run at the limit, and dispatch still exits 124 and records it" {
	run -124 jobreg-dispatch --timeout 0.3 --signal KILL j sh -c 'trap "" TERM; sleep 30'
	[ "$(field j signal)" = KILL ]
	[ "$(field j timed_out)" = 1 ]
}

@test "bad --timeout, --kill-after or --signal values are usage errors (64) that run and create nothing" {
	for args in "--timeout x" "--timeout -1" "--timeout 1y" "--timeout=" "--kill-after 1" \
		"--signal TERM" "--timeout 1 --kill-after x" "--timeout 1 --signal BOGUS" \
		"--timeout 1 --signal 0" "--timeout 1 --signal 999" "--timeout 1 --signal RTMIN+999" \
		"--timeout"; do
		# shellcheck disable=SC2086
		run --separate-stderr jobreg-dispatch $args j touch "$T/ran"
		[ "$status" -eq 64 ] || { echo "$args: $status"; false; }
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ "$stderr" == "jobreg-dispatch: "* ]]
	done
	[ ! -e "$T/ran" ]
	[ ! -e "$REG" ]
}

# ---- signal names --------------------------------------------------------

@test "a command killed by a real-time signal records its kill -l name, e.g. signal=RTMIN+3, and exits 128+N" {
	n=$(bash -c 'kill -l RTMIN+3')
	run jobreg-dispatch j bash -c 'kill -s RTMIN+3 $$'
	[ "$status" -eq $((128 + n)) ]
	[ "$(field j signal)" = RTMIN+3 ]
	run jobreg-get -l j
	[ "$(printf '%s\n' "$output" | cut -f7)" = SIGRTMIN+3 ]
}

# ---- the terminal's Ctrl-C -----------------------------------------------

# ctrl_c ROUNDS [OPTION...]: run dispatch in a real pseudo-terminal ROUNDS
# times; each time press Ctrl-C once the command is ready, and print how many
# SIGINTs the command got (one line per round).  A second SIGINT that comes
# while the first is still pending merges with it, unseen; so that a
# forwarded copy is seen whenever one is sent, dispatch and the command
# share one CPU and the command runs first (real-time priority, as root).
ctrl_c() {
	local rounds=$1
	shift
	cat >"$T/count-int" <<'EOF'
import os, select, signal, time
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
except OSError:
    pass
# Count every delivery of SIGINT (the wakeup fd gets one byte per delivery),
# for 1 s after the first one.
r, w = os.pipe()
os.set_blocking(w, False)
signal.signal(signal.SIGINT, lambda *a: None)
signal.set_wakeup_fd(w)
print("ready", flush=True)
n, deadline = 0, None
while True:
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    if not select.select([r], [], [], left)[0]:
        break
    n += os.read(r, 64).count(bytes([signal.SIGINT]))
    if deadline is None:
        deadline = time.monotonic() + 1.0
print("count=%d" % n, flush=True)
EOF
	cat >"$T/pty-run" <<'EOF'
import os, pty, re, select, signal, sys, time
rounds, argv = int(sys.argv[1]), sys.argv[2:]
for i in range(rounds):
    pid, fd = pty.fork()
    if pid == 0:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        os.execvp(argv[0], argv)
    out, sent, limit = b"", False, time.monotonic() + 20
    while time.monotonic() < limit:
        if not select.select([fd], [], [], 1)[0]:
            continue
        try:
            data = os.read(fd, 1024)
        except OSError:
            break
        if not data:
            break
        out += data
        if not sent and b"ready" in out:
            os.write(fd, b"\x03")
            sent = True
    os.kill(pid, signal.SIGKILL) if time.monotonic() >= limit else None
    _, status = os.waitpid(pid, 0)
    m = re.search(rb"count=(\d+)", out)
    print(m.group(1).decode() if m else "none: %r" % out, flush=True)
EOF
	python3 "$T/pty-run" "$rounds" jobreg-dispatch "$@" j python3 "$T/count-int"
}

@test "Ctrl-C at a terminal reaches the command exactly once, round after round" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run -0 ctrl_c 10
	printf '%s\n' "$output"
	[ "${#lines[@]}" -eq 10 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u)" = 1 ]
	[ "$(field j exit)" = 0 ]
}

@test "Ctrl-C at a terminal reaches a limited command (its own process group) exactly once" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run -0 ctrl_c 5 --timeout 60
	printf '%s\n' "$output"
	[ "${#lines[@]}" -eq 5 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -u)" = 1 ]
}

@test "Ctrl-C at a terminal before the command has started reaches it as soon as it has" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e inject=fsync:delay_exit=1 true >/dev/null 2>&1 ||
		skip "this strace cannot delay system calls here"
	# Every fsync takes 1 s: Ctrl-C is pressed once RUNNING is renamed into
	# place, while the registry is synced, before the command is started.
	cat >"$T/pty-early" <<'EOF'
import os, pty, select, sys, time
record, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
limit = time.monotonic() + 20
while time.monotonic() < limit:
    try:
        with open(record) as f:
            if "status=RUNNING" in f.read():
                break
    except OSError:
        pass
    time.sleep(0.01)
os.write(fd, b"\x03")
while select.select([fd], [], [], 20)[0]:
    try:
        if not os.read(fd, 1024):
            break
    except OSError:
        break
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
EOF
	mkdir -p "$REG"
	run -0 python3 "$T/pty-early" "$REG/j" env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o /dev/null -e inject=fsync:delay_exit=1000000 jobreg-dispatch j sleep 10
	[ "$output" = 130 ]
	[ "$(field j signal)" = INT ]
}

@test "a signal sent with kill to the dispatcher at a terminal is still forwarded" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	# Inside a pty the command shares the foreground group; kill(1) is not
	# the terminal, so the dispatcher passes the signal on.
	cat >"$T/pty-kill" <<'EOF'
import os, pty, select, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, limit = b"", time.monotonic() + 20
while time.monotonic() < limit and b"ready" not in out:
    if select.select([fd], [], [], 1)[0]:
        out += os.read(fd, 1024)
os.kill(pid, signal.SIGINT)
while time.monotonic() < limit:
    if select.select([fd], [], [], 1)[0]:
        try:
            data = os.read(fd, 1024)
        except OSError:
            break
        if not data:
            break
        out += data
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
EOF
	ctrl_c 0   # writes $T/count-int
	run -0 python3 "$T/pty-kill" jobreg-dispatch j python3 "$T/count-int"
	[[ "$output" == *count=1* ]]
}

# ---- a signal before the start -------------------------------------------

@test "a signal that arrives before the command has started reaches it once it has, with or without a limit" {
	command -v strace >/dev/null || skip "strace is not installed (it delays the command's exec)"
	cp "$(command -v sleep)" "$T/cmd-sleep"
	for limit in "" "--timeout 60"; do
		rm -f "$REG/j"
		# The command's exec (of its own copy of sleep, which -P picks
		# out) is held back 2 s, so the TERM below comes before it.
		# LeakSanitizer cannot run under ptrace (make SANITIZE=1).
		# shellcheck disable=SC2086
		ASAN_OPTIONS=detect_leaks=0 strace -f -o /dev/null -P "$T/cmd-sleep" -e trace=execve \
			-e inject=execve:delay_enter=2000000 \
			jobreg-dispatch $limit j "$T/cmd-sleep" 30 3>&- >"$T/out" 2>&1 &
		s=$!
		BG_PIDS+=("$s")
		poll_until grep -qsx status=RUNNING "$REG/j"
		d=$(cat "/proc/$s/task/$s/children"); d=${d%% *}
		[ "$(cat "/proc/$d/comm")" = jobreg-dispatch ]
		kill -TERM "$d"
		wait_bg "$s"
		[ "$BG_RC" -eq 143 ]
		[ "$(field j signal)" = TERM ]
		no_key j timed_out
	done
}

# ---- a lost run lock (SPEC §6) ---------------------------------------------

# A run lock taken away (a partitioned shared filesystem releases it without a
# word) cannot be made on local files, so strace tells dispatch so: its third
# flock(2) of a fresh job is the first check of the run lock, a second after the
# command started (the first two take the job lock and the run lock).
# lose_lock ERRNO OPTION...: dispatch OPTION... with that check failing with ERRNO;
# sets status and stderr as bats' run does.
lose_lock() {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1 ||
		skip "this strace cannot inject faults (strace >= 4.16 needed)"
	local errno=$1
	shift
	run --separate-stderr traced -o "$T/trace" -e trace=flock -e inject=flock:error="$errno":when=3 \
		jobreg-dispatch "$@"
}

@test "a run that loses its run lock is stopped with TERM within a second, the record left alone, exit 74" {
	t0=$EPOCHREALTIME
	lose_lock EAGAIN j sh -c 'trap "echo TERM > \"$1/got\"; kill \$!; exit 3" TERM; sleep 30 & wait' sh "$T"
	[ "$status" -eq 74 ]
	elapsed_between "$t0" 0.9 4
	[ "$stderr" = "jobreg-dispatch: j: run 1 lost its run lock; stopping it with TERM" ]
	[ "$(cat "$T/got")" = TERM ]
	# the record is still the one the run wrote: the job's owner is gone, so STALE
	[ "$(field j status)" = RUNNING ]
	[ "$(field j runs)" = 1 ]
	run jobreg-get j
	[ "$output" = STALE ]
}

@test "--chronic: a run that lost its run lock prints its log, and its report ends saying so, even with -q" {
	lose_lock EAGAIN -q --chronic j sh -c 'echo said; exec sleep 30'
	[ "$status" -eq 74 ]
	[ "$stderr" = $'jobreg-dispatch: j: run 1 lost its run lock; stopping it with TERM\nsaid\njobreg-dispatch: j: run 1 lost its run lock' ]
	# also when the command, told to stop, exits 0: the run failed all the same
	jobreg-clear -q --force j
	lose_lock EAGAIN -q --chronic j sh -c 'trap "exit 0" TERM; echo said; while :; do sleep 0.1; done'
	[ "$status" -eq 74 ]
	[ "$stderr" = $'jobreg-dispatch: j: run 1 lost its run lock; stopping it with TERM\nsaid\njobreg-dispatch: j: run 1 lost its run lock' ]
}

@test "a lost run lock is EBADFD too; the run gets --signal, then KILL --kill-after later" {
	t0=$EPOCHREALTIME
	lose_lock EBADFD --timeout 60 --signal INT --kill-after 0.5 j \
		sh -c 'trap "echo INT >> \"$1/got\"" INT; trap "" TERM; while :; do sleep 0.1; done' sh "$T"
	[ "$status" -eq 74 ]
	elapsed_between "$t0" 1.4 5
	[ "$stderr" = "jobreg-dispatch: j: run 1 lost its run lock; stopping it with INT" ]
	[ "$(cat "$T/got")" = INT ]
	[ "$(field j status)" = RUNNING ]
}

@test "an evicted CephFS client's lock check (ESHUTDOWN) is a lost run lock too" {
	lose_lock ESHUTDOWN j sh -c 'exec sleep 30'
	[ "$status" -eq 74 ]
	[ "$stderr" = "jobreg-dispatch: j: run 1 lost its run lock; stopping it with TERM" ]
}

@test "a lock check that proved nothing (ENOTCONN) is made again within a tenth of a second" {
	lose_lock ENOTCONN j sh -c 'sleep 1.6'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# the failed check, and the next flock(2) a check again, not the end's job lock
	grep -A1 'INJECTED' "$T/trace" > "$T/two"
	[ "$(wc -l < "$T/two")" -eq 2 ]
	fd=$(sed -n 's/^flock(\([0-9]*\),.*INJECTED.*/\1/p' "$T/trace")
	[[ $(tail -n 1 "$T/two") =~ ^flock\($fd,\ LOCK_EX\|LOCK_NB\)\ *=\ 0$ ]] || flunk "$(cat "$T/trace")"
	[ "$(grep -c 'LOCK_EX|LOCK_NB' "$T/trace")" -ge 4 ]
}

@test "a lock check that fails for another reason (EIO) proves nothing: the run goes on and records DONE" {
	lose_lock EIO j sh -c 'sleep 1.5; exit 3'
	[ "$status" -eq 3 ]
	[ -z "$stderr" ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 3 ]
}

@test "a run lock file removed and made anew during the run is no loss: the run holds the old inode and records DONE" {
	run --separate-stderr jobreg-dispatch j sh -c 'rm "$JOBREG_DIR/.j.run"; touch "$JOBREG_DIR/.j.run"; sleep 2.2'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(field j status)" = DONE ]
	[ "$(field j exit)" = 0 ]
}
