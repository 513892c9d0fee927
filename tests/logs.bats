#!/usr/bin/env bats
# Run logs (SPEC §3b; jobreg-dispatch --log, --chronic, --log-size; jobreg-get
# --log, --follow, --faillog): the relay, a process of the run; the size bound;
# the fail log kept across later successes; bad input refused before anything runs.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# in_dir DIR CMD...: CMD run in DIR (strace -P names the log as dispatch opens it).
in_dir() {
	local dir=$1
	shift
	(cd "$dir" && "$@")
}

# small_fs SIZE CMD...: CMD run in a private mount namespace where $T/small
# is a tmpfs of SIZE (nothing is mounted on the host: it goes with CMD);
# skips where that cannot be made.
small_fs() {
	local size=$1
	shift
	mkdir -p "$T/small"
	unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs "$2"' sh "$size" "$T/small" 2>/dev/null ||
		skip "no private mount namespace with a tmpfs (unshare -m, mount -t tmpfs: needs root or user namespaces)"
	unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"' sh "$size" "$T/small" "$@"
}

@test "--log passes stdout on to stdout and stderr to stderr, and keeps both in .JOB.log" {
	run --separate-stderr jobreg-dispatch --log job sh -c 'echo out1; echo err1 >&2; sleep 0.1; echo out2'
	[ "$status" -eq 0 ]
	[ "$output" = $'out1\nout2' ]
	[ "$stderr" = err1 ]
	[ "$(sort "$REG/.job.log")" = $'err1\nout1\nout2' ]
	[ "$(tail -n 1 "$REG/.job.log")" = out2 ]
	run jobreg-get --log job
	[ "$(sort <<< "$output")" = $'err1\nout1\nout2' ]
	[ "$(stat -c %a "$REG/.job.log")" = "$(printf '%o' $((0666 & ~0$(umask))))" ]
}

# bats test_tags=serial
@test "the output passes through at once: a line is on stdout and in the log within 100 ms" {
	# The command writes a line a second (the first after a second, when
	# the reader has started), each with the time it was written; the
	# reader takes the time a line arrives, in the same process, so that a
	# loaded machine's fork and exec costs are not counted.  Anything
	# holding the output back (a buffer filled first, the run's end) shows
	# as a second or more.
	cat > "$T/ticks" <<-'EOF'
	import sys, time
	for i in range(3):
	    time.sleep(1); sys.stdout.write("%d %.6f\n" % (i, time.time())); sys.stdout.flush()
	EOF
	cat > "$T/reader" <<-'EOF'
	import os, sys, time
	log = sys.argv[1]
	while True:
	    chunk = os.read(0, 4096).decode()
	    if not chunk:
	        break
	    now = time.time()
	    with open(log) as f:
	        kept = f.read().splitlines()
	    for line in chunk.splitlines():
	        i, t = line.split()
	        print("%s %.3f %s" % (i, now - float(t), "logged" if line in kept else "not-logged"))
	EOF
	run sh -c 'jobreg-dispatch --log job python3 "$1/ticks" | python3 "$1/reader" "$2/.job.log"' sh "$T" "$REG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	local l
	for l in "${lines[@]}"; do
		set -- $l
		[ "$(echo "$2 < 0.1" | bc)" = 1 ] || flunk "line $1 arrived after $2 s"
		[ "$3" = logged ] || flunk "line $1 was not in the log when it arrived"
	done
}

@test "--chronic passes nothing on and prints a FAILED run's log on stderr at its end" {
	run --separate-stderr jobreg-dispatch --chronic ok sh -c 'echo fine; echo warn >&2'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(sort "$REG/.ok.log")" = $'fine\nwarn' ]
	run --separate-stderr jobreg-dispatch --chronic bad sh -c 'echo step 1; echo oops >&2; exit 3'
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ "$(head -n 2 <<< "$stderr" | sort)" = $'oops\nstep 1' ]
	# and ends with dispatch's own line saying how it ended
	[ "$(tail -n +3 <<< "$stderr")" = "jobreg-dispatch: bad: run 1 failed: exit 3" ]
	# a --once replay of the failed run prints its log the same way
	run --separate-stderr jobreg-dispatch --once --chronic bad true
	[ "$status" -eq 3 ]
	[[ $stderr == *"already done: failed (exit 3"* ]]
	[[ $stderr == *oops* ]]
}

@test "a FAILED or lost run's log is kept as .JOB.faillog across later successes" {
	jobreg-dispatch --log job sh -c 'echo first; exit 1' >/dev/null || true
	# the failed run is the latest: its log is the fail log at once
	[ "$(jobreg-get --faillog job)" = first ]
	[ "$(jobreg-get --log job)" = first ]
	jobreg-dispatch --log job sh -c 'echo second' >/dev/null
	jobreg-dispatch --log job sh -c 'echo third' >/dev/null
	[ "$(jobreg-get --faillog job)" = first ]
	[ "$(jobreg-get --log job)" = third ]
	run jobreg-get --log none
	[ "$status" -eq 1 ]
	[ "$output" = "jobreg-get: none: no log (only a run dispatched with --log or --chronic keeps one)" ]
	run jobreg-get --faillog none
	[ "$status" -eq 1 ]
	[ "$output" = "jobreg-get: none: no log of a failed run (only a run dispatched with --log or --chronic keeps one)" ]
}

@test "the logs are always the latest run's and the last failure's: a run without --log leaves neither behind" {
	jobreg-dispatch --log job sh -c 'echo ok1' >/dev/null
	# a failure without a log: the OK run's log is neither its log nor a failure's
	run jobreg-dispatch job sh -c 'exit 3'
	run jobreg-get --log job
	[ "$status" -eq 1 ]
	[ "$output" = "jobreg-get: job: no log (only a run dispatched with --log or --chronic keeps one)" ]
	run jobreg-get --faillog job
	[ "$status" -eq 1 ]
	[ "$output" = "jobreg-get: job: no log of a failed run (only a run dispatched with --log or --chronic keeps one)" ]
	jobreg-dispatch --log job sh -c 'echo ok3' >/dev/null
	run jobreg-get --faillog job
	[ "$status" -eq 1 ]
	# an older failure's log is not the last failure's
	run jobreg-dispatch --log job sh -c 'echo bad4; exit 4'
	run jobreg-dispatch job sh -c 'exit 5'
	jobreg-dispatch job true
	run jobreg-get --faillog job
	[ "$status" -eq 1 ]
	# a run started by hand has no log
	jobreg-dispatch --log job sh -c 'echo ok7' >/dev/null
	jobreg-set job RUNNING
	run jobreg-get --log job
	[ "$status" -eq 1 ]
}

@test "attempts without --log set the last log aside too: an older failure's log is not the last failure's" {
	run jobreg-dispatch --log job sh -c 'echo old; exit 1'
	jobreg-dispatch job true
	jobreg-dispatch -q --retries 1 --retry-delay 0.1 job sh -c '[ "$JOBREG_ATTEMPT" = 2 ]'
	run jobreg-get --faillog job
	[ "$status" -eq 1 ]
	[ "$output" = "jobreg-get: job: no log of a failed run (only a run dispatched with --log or --chronic keeps one)" ]
}

@test "a lost run's log is the fail log, also after the record was reset to PENDING" {
	( exec jobreg-dispatch --log job sh -c 'echo partial; exec sleep 60' ) 3>&- >/dev/null 2>&1 &
	d=$!
	poll_until grep -q partial "$REG/.job.log"
	kill_run "$d"
	wait "$d" 2>/dev/null || true
	poll_until eval '[ "$(jobreg-get job)" = STALE ]'
	[ "$(jobreg-get --faillog job)" = partial ]
	jobreg-set job PENDING
	[ "$(jobreg-get --faillog job)" = partial ]
	jobreg-dispatch --log job sh -c 'echo next' >/dev/null
	[ "$(jobreg-get --faillog job)" = partial ]
	[ "$(jobreg-get --log job)" = next ]
}

@test "--chronic --clear prints a failed run's log before the log goes with the record" {
	run --separate-stderr jobreg-dispatch --chronic --clear job sh -c 'echo out3; exit 5'
	[ "$status" -eq 5 ]
	[ "$stderr" = $'out3\njobreg-dispatch: job: run 1 failed: exit 5' ]
	[ ! -e "$REG/job" ]
	[ ! -e "$REG/.job.log" ]
}

@test "get --log --follow of a corrupt record says so in one line, exit 65" {
	mkdir -p "$REG"
	echo garbage > "$REG/job"
	: > "$REG/.job.log"
	run --separate-stderr jobreg-get --log --follow job
	[ "$status" -eq 65 ]
	[[ $stderr == "jobreg-get: job: corrupt record $REG/job: "* ]]
	[ "$(wc -l <<< "$stderr")" -eq 1 ]
}

@test "each attempt of --retries has a log of its own; a failed one's becomes the fail log" {
	jobreg-dispatch -q --log --retries 1 --retry-delay 0.1 job sh -c 'echo "attempt $JOBREG_ATTEMPT"; [ "$JOBREG_ATTEMPT" = 2 ]' >/dev/null
	[ "$(jobreg-get --log job)" = "attempt 2" ]
	[ "$(jobreg-get --faillog job)" = "attempt 1" ]
}

@test "--log-size keeps at least the last SIZE bytes, never twice as much, and says what it dropped" {
	jobreg-dispatch --log --log-size 4k job sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i + 1)); done' >/dev/null
	size=$(stat -c %s "$REG/.job.log")
	[ "$size" -ge 4096 ] && [ "$size" -le 8192 ] || flunk "log of $size bytes"
	first=$(head -n 1 "$REG/.job.log")
	[[ $first =~ ^\[jobreg:\ ([0-9]+)\ bytes\ dropped\]$ ]] || flunk "first line: $first"
	dropped=${BASH_REMATCH[1]}
	total=$(i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i + 1)); done | wc -c)
	kept=$((size - ${#first} - 1))
	[ "$((dropped + kept))" -eq "$total" ]
	[ "$(tail -n 1 "$REG/.job.log")" = "line 1999" ]
	run jobreg-dispatch --log --log-size 100 job true
	[ "$status" -eq 64 ]
	run jobreg-dispatch --log-size 1M job true
	[ "$status" -eq 64 ]
}

@test "a flood of output keeps exactly its last bytes: the dropped count and what is kept add up" {
	head -c 3000000 /dev/urandom > "$T/data"
	jobreg-dispatch --log --log-size 1M job cat "$T/data" > "$T/out"
	cmp "$T/data" "$T/out"
	first=$(head -n 1 "$REG/.job.log")
	[[ $first =~ ^\[jobreg:\ ([0-9]+)\ bytes\ dropped\]$ ]] || flunk "first line: $first"
	dropped=${BASH_REMATCH[1]}
	tail -c +$((${#first} + 2)) "$REG/.job.log" > "$T/kept"
	kept=$(stat -c %s "$T/kept")
	[ "$kept" -ge 1048576 ] && [ "$((kept + ${#first} + 1))" -le 2097152 ] || flunk "kept $kept bytes"
	[ "$((dropped + kept))" -eq 3000000 ]
	tail -c "$kept" "$T/data" | cmp - "$T/kept"
}

@test "stdout and stderr keep their order in the log with --chronic, and with --log when both go to one place" {
	script='i=0; while [ $i -lt 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i + 1)); done'
	want=$(i=0; while [ $i -lt 300 ]; do echo "out $i"; echo "err $i"; i=$((i + 1)); done)
	jobreg-dispatch --chronic job sh -c "$script"
	[ "$(cat "$REG/.job.log")" = "$want" ]
	jobreg-dispatch --log job sh -c "$script" 2>&1 | cat > "$T/passed"
	[ "$(cat "$REG/.job.log")" = "$want" ]
	[ "$(cat "$T/passed")" = "$want" ]
}

@test "get --log --follow prints the run's output as it comes and ends when the run ends" {
	jobreg-dispatch --log job sh -c 'echo one; sleep 0.6; echo two; sleep 0.6' 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until test -s "$REG/.job.log"
	t0=$EPOCHREALTIME
	run jobreg-get --log --follow job
	[ "$status" -eq 0 ]
	[ "$output" = $'one\ntwo' ]
	elapsed_between "$t0" 0.8 3
}

@test "get --log --follow ends when the whole run is killed with kill -9" {
	jobreg-dispatch --log job sh -c 'echo up; exec sleep 60' 3>&- >/dev/null &
	d=$!
	BG_PIDS+=("$d")
	poll_until test -s "$REG/.job.log"
	jobreg-get --log --follow job 3>&- > "$T/followed" &
	f=$!
	BG_PIDS+=("$f")
	poll_until test -s "$T/followed"   # (following)
	kill_tree "$d" KILL
	wait_bg "$f"
	[ "$BG_RC" = 0 ]
	[ "$(cat "$T/followed")" = up ]
}

@test "kill -9 of dispatch leaves the command running, not killed by SIGPIPE, its output still logged" {
	jobreg-dispatch --log job sh -c 'i=0; while [ $i -lt 30 ]; do echo "tick $i"; i=$((i + 1)); sleep 0.05; done; echo done > "$1/end"' sh "$T" 3>&- >/dev/null &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'tick 3' "$REG/.job.log"
	kill -KILL "$d"
	poll_until test -e "$T/end"
	poll_until grep -q 'tick 29' "$REG/.job.log"
}

@test "a log that cannot be made (a FIFO or symlink planted, EACCES, ENOSPC) fails the dispatch before anything runs" {
	mkdir -p "$REG"
	mkfifo "$REG/.fifo.log"
	ln -s "$T/target" "$REG/.link.log"
	for job in fifo link; do
		run --separate-stderr timeout 5 jobreg-dispatch --log "$job" touch "$T/ran.$job"
		[ "$status" -eq 77 ]
		[ "$stderr" = "jobreg-dispatch: $job: not a regular file: $REG/.$job.log" ]
		[ ! -e "$T/ran.$job" ]
		[ ! -e "$REG/$job" ]
	done
	[ ! -e "$T/target" ]
	# the create of the log itself failing (root is never refused, and a
	# disk that has room for the record's temp has it for an empty log:
	# strace makes the failure, on the log's open only)
	command -v strace > /dev/null || skip "strace is not installed (for the EACCES and ENOSPC cases)"
	local err want
	for err in EACCES:77:"Permission denied" ENOSPC:74:"No space left on device"; do
		IFS=: read -r err want msg <<< "$err"
		run --separate-stderr in_dir "$REG" traced -f -qq -o /dev/null -P ".e$err.newlog" -e trace=openat -e inject=openat:error="$err" \
			jobreg-dispatch -d . --log "e$err" touch "$T/ran.$err"
		[ "$status" -eq "$want" ] || flunk "$err: exit $status: $stderr"
		[ "$stderr" = "jobreg-dispatch: e$err: create ./.e$err.newlog: $msg" ]
		[ ! -e "$T/ran.$err" ]
		[ ! -e "$REG/e$err" ]
	done
}

@test "a log on a full disk: the command is not stopped, its output passes on, one message at the end" {
	# the command fills the disk, prints, then (once the relay has met the
	# full disk) frees it for the record
	cat > "$T/full" <<-'EOF'
	export JOBREG_DIR=$1/small/reg
	jobreg-dispatch --log --log-size 1M job sh -c '
		head -c 1M /dev/zero > "$1/filler" 2>/dev/null
		head -c 600000 /dev/zero | tr "\0" x; echo
		sleep 0.5
		rm "$1/filler"' sh "$1/small" > "$1/out"
	echo $? > "$1/rc"
	cp "$JOBREG_DIR/job" "$1/record"
	EOF
	run --separate-stderr small_fs 256k sh "$T/full" "$T"
	[ "$(cat "$T/rc")" -eq 0 ]
	[ "$(stat -c %s "$T/out")" -eq 600001 ]
	[[ $stderr =~ ^jobreg-dispatch:\ job:\ could\ not\ log\ [0-9]+\ bytes\ of\ the\ run\'s\ output:\ No\ space\ left\ on\ device$ ]] ||
		flunk "stderr: $stderr"
	grep -qx 'exit=0' "$T/record"
}

@test "the log is never longer than twice --log-size, even for output that comes in large writes" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	cat > "$T/big" <<-'EOF'
	import os
	for i in range(5):
	    os.write(1, b"x" * 60000)
	EOF
	# (-ff: a file a process, so that no call is split "<unfinished ...>"
	# by another's, as happens under load)
	traced -ff -o "$T/trace" -e trace=pwrite64 jobreg-dispatch --chronic --log-size 4k job python3 "$T/big"
	# every write into the log ends within 8192 bytes of its start
	local furthest
	furthest=$(cat "$T"/trace.* | sed -n 's/.*pwrite64(.*, \([0-9]*\), \([0-9]*\)) = \([0-9]*\)$/\2 \3/p' |
		awk '{ if ($1 + $2 > m) m = $1 + $2 } END { print m + 0 }')
	[ "$furthest" -gt 4096 ] || flunk "no pwrite64 seen in the trace"
	[ "$furthest" -le 8192 ] || flunk "the log reached $furthest bytes"
	[ "$(stat -c %s "$REG/.job.log")" -le 8192 ]
}

@test "a log that filled the disk gives way to the run's record: DONE is written, and only the mending is said" {
	cat > "$T/full" <<-'EOF'
	export JOBREG_DIR=$1/small/reg
	jobreg-dispatch --log job sh -c 'head -c 200000 /dev/zero | tr "\0" x' > /dev/null
	echo $? > "$1/rc"
	cp "$JOBREG_DIR/job" "$1/record"
	jobreg-get job > "$1/got"
	EOF
	run --separate-stderr small_fs 64k sh "$T/full" "$T"
	[ "$(cat "$T/rc")" -eq 0 ]
	# the failed first try to write DONE is not said: it was mended
	[[ $stderr =~ ^jobreg-dispatch:\ job:\ could\ not\ log\ [0-9]+\ bytes\ of\ the\ run\'s\ output:\ No\ space\ left\ on\ device$'\n'"jobreg-dispatch: job: emptied the run's log to make room for its record"$ ]] ||
		flunk "stderr: $stderr"
	grep -qx 'status=DONE' "$T/record"
	grep -qx 'exit=0' "$T/record"
	[ "$(cat "$T/got")" = DONE ]
}

@test "--chronic on a full disk: a FAILED run's report is whole, its last --log-size bytes, after its record" {
	cat > "$T/lines" <<-'EOF'
	import sys
	for i in range(15000):
	    sys.stdout.write("%09d\n" % i)
	sys.stdout.flush()
	sys.exit(3)
	EOF
	cat > "$T/full" <<-'EOF'
	export JOBREG_DIR=$1/small/reg
	jobreg-dispatch --chronic --log-size 100k job python3 "$1/lines" 2> "$1/report"
	echo $? > "$1/rc"
	cp "$JOBREG_DIR/job" "$1/record"
	EOF
	run --separate-stderr small_fs 64k sh "$T/full" "$T"
	[ "$(cat "$T/rc")" -eq 3 ]
	grep -qx 'status=DONE' "$T/record"
	grep -qx 'exit=3' "$T/record"
	# the report: the line saying what was dropped, then the run's last
	# 102400 bytes (whole lines); dispatch's own lines about the log around
	local dropped
	dropped=$(sed -n 's/^\[jobreg: \([0-9]*\) bytes dropped\]$/\1/p' "$T/report")
	[ "$dropped" = $((150000 - 102400)) ] || flunk "report: $(head -n 3 "$T/report")"
	[ "$(grep -c '^[0-9]\{9\}$' "$T/report")" -eq 10240 ]
	[ "$(grep '^[0-9]\{9\}$' "$T/report" | head -n 1)" = 000004760 ]
	[ "$(grep '^[0-9]\{9\}$' "$T/report" | tail -n 1)" = 000014999 ]
}

@test "a dispatch that cannot start on a full disk (74) leaves the logs as they were" {
	cat > "$T/full" <<-'EOF'
	export JOBREG_DIR=$1/small/reg
	jobreg-dispatch --log job sh -c 'echo first failure; exit 1' > /dev/null
	jobreg-dispatch --log job sh -c 'echo last failure; exit 2' > /dev/null
	head -c 1M /dev/zero > "$1/small/filler" 2> /dev/null
	jobreg-dispatch --log job echo never
	echo $? > "$1/rc"
	rm "$1/small/filler"
	jobreg-get --faillog job > "$1/faillog"
	cp "$JOBREG_DIR/.job.log" "$1/log"
	cp "$JOBREG_DIR/.job.faillog" "$1/older"
	ls -a "$JOBREG_DIR" > "$1/entries"
	EOF
	run --separate-stderr small_fs 64k sh "$T/full" "$T"
	[ "$(cat "$T/rc")" -eq 74 ] || flunk "exit $(cat "$T/rc"): $stderr"
	[ "$(cat "$T/faillog")" = "last failure" ]
	[ "$(cat "$T/log")" = "last failure" ]
	[ "$(cat "$T/older")" = "first failure" ]
	! grep -q newlog "$T/entries"
}

@test "a reader that goes away ends a --log run as it would without --log: SIGPIPE, not a hang" {
	# -s KILL: timeout kills its whole group, the relay too, if it hangs
	run --separate-stderr timeout -s KILL 10 sh -c 'jobreg-dispatch --log job yes | head -n 1'
	[ "$status" -eq 0 ] || flunk "exit $status (137: it hung)"
	[ "$output" = y ]
	[ "$(field job status)" = DONE ]
	[ "$(field job signal)" = PIPE ]
	[ -z "$stderr" ]
	grep -qx y "$REG/.job.log"   # (its start may have been cut)
}

@test "a non-blocking stdout gets all of the output: the relay waits for it, drops nothing" {
	cat > "$T/nonblocking" <<-'EOF'
	import fcntl, os, subprocess, sys, time
	r, w = os.pipe()
	fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
	p = subprocess.Popen(sys.argv[1:], stdout=w)
	os.close(w)
	time.sleep(0.5)   # the pipe fills meanwhile
	total = 0
	while True:
	    b = os.read(r, 65536)
	    if not b:
	        break
	    total += len(b)
	print(total, p.wait())
	EOF
	run --separate-stderr python3 "$T/nonblocking" jobreg-dispatch --log job seq 1 100000
	[ "$output" = "588895 0" ]
	[ -z "$stderr" ]
}

@test "jobreg-get --log to a non-blocking stdout prints all of the log: it waits for the reader" {
	jobreg-dispatch --log job seq 1 100000 > /dev/null
	cat > "$T/nonblocking" <<-'EOF'
	import fcntl, os, subprocess, sys, time
	r, w = os.pipe()
	fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
	p = subprocess.Popen(sys.argv[1:], stdout=w)
	os.close(w)
	time.sleep(0.5)   # the pipe fills meanwhile
	total = 0
	while True:
	    b = os.read(r, 65536)
	    if not b:
	        break
	    total += len(b)
	print(total, p.wait())
	EOF
	run --separate-stderr python3 "$T/nonblocking" jobreg-get --log job
	[ "$output" = "588895 0" ]
	[ -z "$stderr" ]
}

@test "output that cannot be passed on is said in one line; the run goes on and is logged" {
	run --separate-stderr sh -c 'jobreg-dispatch --log job sh -c "echo one; echo two" > /dev/full'
	[ "$status" -eq 0 ]
	[ "$stderr" = "jobreg-dispatch: job: could not pass on 8 bytes of the run's output to stdout: No space left on device" ] ||
		[ "$stderr" = "jobreg-dispatch: job: could not pass on 4 bytes of the run's output to stdout: No space left on device" ] ||
		flunk "stderr: $stderr"
	[ "$(cat "$REG/.job.log")" = $'one\ntwo' ]
}

@test "after DONE the relay lets the run lock go: a process that keeps the output, not the lock, keeps no next run out" {
	# the command leaves a process behind that closes its run lock but
	# keeps stdout (so the relay goes on, for it)
	cat > "$T/leave" <<-'EOF'
	import os, sys, time
	if os.fork() == 0:
	    for fd in os.listdir("/proc/self/fd"):
	        try:
	            if os.readlink("/proc/self/fd/" + fd).endswith("/.job.run"):
	                os.close(int(fd))
	        except OSError:
	            pass
	    time.sleep(6)
	    print("late")
	    os._exit(0)
	EOF
	jobreg-dispatch --log job python3 "$T/leave" > "$T/out" 2> "$T/err"
	[ "$(field job status)" = DONE ]
	! grep -q 'still held' "$T/err" || flunk "$(cat "$T/err")"
	run --separate-stderr jobreg-dispatch -w 0.5 job true
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
}

@test "a stalled reader with --timeout: after DONE (124) the next run is not kept out by the relay" {
	( rc=0; jobreg-dispatch --log --timeout 1 job sh -c 'head -c 3000000 /dev/zero; sleep 30' || rc=$?
	  echo "$rc" > "$T/rc" ) 2> "$T/err" | sleep 60 &
	BG_PIDS+=("$!")
	poll_until test -s "$T/rc"
	[ "$(cat "$T/rc")" -eq 124 ]
	[ "$(field job status)" = DONE ]
	run --separate-stderr jobreg-dispatch -w 0.5 job true
	[ "$status" -eq 0 ] || flunk "exit $status: $stderr"
}

@test "a relay that could not let the run lock go is named for what it is, at the end and by the next dispatch" {
	# the command stops its relay (a sibling: dispatch's other child), so
	# that it cannot answer when the run ends
	cat > "$T/stop" <<-'EOF'
	for p in /proc/[0-9]*; do
		read -r _ ppid < <(grep '^PPid:' "$p/status" 2>/dev/null) || continue
		if [ "$ppid" = "$PPID" ] && [ "${p#/proc/}" != $$ ]; then
			echo "${p#/proc/}" > "$1/relay"
			kill -STOP "${p#/proc/}"
		fi
	done
	EOF
	# (the stopped relay keeps its stdout and stderr: files, not run's pipes)
	jobreg-dispatch --log job bash "$T/stop" "$T" > "$T/out" 2> "$T/err"
	local relay
	relay=$(cat "$T/relay")
	BG_PIDS+=("$relay")
	[ "$(cat "$T/err")" = "jobreg-dispatch: job: the run lock is still held by pid $relay (the run's log relay); the next run waits for it" ] ||
		flunk "stderr: $(cat "$T/err")"
	run --separate-stderr jobreg-dispatch -w 0.2 job true
	[ "$status" -eq 75 ]
	[ "$stderr" = "jobreg-dispatch: job: lock busy: $REG/.job.run held by pid $relay (the log relay of an earlier run)" ] ||
		flunk "stderr: $stderr"
	# once it goes on, it lets go
	kill -CONT "$relay"
	poll_until gone "$relay"
	jobreg-dispatch -w 1 job true
}

@test "a cut never shows a reader a hole: --log waits out a cut under way and prints no NUL" {
	command -v strace > /dev/null || skip "strace is not installed (to hold the relay between its writes)"
	# a flood of 5000 bytes into a 1k log: the log is written anew; the
	# relay is held 3 s after its first pwrite, while the log is read
	traced -f -qq -o /dev/null -e trace=pwrite64 -e inject=pwrite64:delay_exit=3000000:when=1 \
		jobreg-dispatch --chronic --log-size 1k job python3 -c 'import os; os.write(1, b"x" * 5000)' &
	BG_PIDS+=("$!")
	poll_until test -s "$REG/.job.log"
	jobreg-get --log job > "$T/read"
	local nuls
	nuls=$(tr -dc '\000' < "$T/read" | wc -c)
	[ "$nuls" -eq 0 ] || flunk "a reader saw $nuls NUL bytes"
	grep -q '^\[jobreg: [0-9]* bytes dropped\]$' "$T/read" || flunk "--log printed: $(head -c 80 "$T/read")"
	wait_bg "${BG_PIDS[-1]}"
	local dropped
	dropped=$(sed -n '1s/^\[jobreg: \([0-9]*\) bytes dropped\]$/\1/p' "$REG/.job.log")
	[ $((dropped + $(tail -n +2 "$REG/.job.log" | wc -c))) -eq 5000 ]
}

@test "a cut keeps whole lines: the log starts at a line's start when one begins within 4 KiB of the cut" {
	cat > "$T/lines" <<-'EOF'
	import os, sys
	for i in range(400):
	    os.write(1, b"line %04d %s\n" % (i, b"." * 89))
	EOF
	jobreg-dispatch --log --log-size 1k job python3 "$T/lines" > /dev/null
	local first dropped kept
	first=$(head -n 1 "$REG/.job.log")
	dropped=$(sed -n '1s/^\[jobreg: \([0-9]*\) bytes dropped\]$/\1/p' "$REG/.job.log")
	[ -n "$dropped" ] || flunk "first line: $first"
	kept=$(tail -n +2 "$REG/.job.log" | wc -c)
	[ $((dropped + kept)) -eq 40000 ]
	[ "$kept" -ge 1024 ]
	[ $((dropped % 100)) -eq 0 ] || flunk "cut within a line: $dropped bytes dropped"
	tail -n +2 "$REG/.job.log" | grep -qvx 'line [0-9]\{4\} \.\{89\}' && flunk "a line was cut"
	[ "$(tail -n 1 "$REG/.job.log")" = "line 0399 $(printf '%089d' 0 | tr 0 .)" ]
}

@test "a flood keeps whole lines too: the log written anew starts at a line's start" {
	cat > "$T/flood" <<-'EOF'
	import os
	os.write(1, b"".join(b"line %04d %s\n" % (i, b"." * 89) for i in range(400)))
	EOF
	jobreg-dispatch --log --log-size 2k job python3 "$T/flood" > /dev/null
	local dropped
	dropped=$(sed -n '1s/^\[jobreg: \([0-9]*\) bytes dropped\]$/\1/p' "$REG/.job.log")
	[ $((dropped % 100)) -eq 0 ] || flunk "cut within a line: $dropped bytes dropped"
	[ $((dropped + $(tail -n +2 "$REG/.job.log" | wc -c))) -eq 40000 ]
}

@test "a message of dispatch's own starts on a line of its own, after output that did not end one" {
	# --log: on the terminal (here both streams to one pipe)
	run sh -c 'jobreg-dispatch --log --retries 1 --retry-delay 0.1 job sh -c "printf \"progress 50%%\"; exit 3" 2>&1'
	[ "$status" -eq 3 ]
	[[ $output == *$'progress 50%\njobreg-dispatch: job: attempt 1 failed'* ]] || flunk "output: $output"
	# --chronic: after the report of the run's log
	run --separate-stderr jobreg-dispatch --chronic other sh -c 'printf "progress 50%%"; sleep 1 > /dev/null 2>&1 & exit 3'
	[ "$status" -eq 3 ]
	[[ $stderr == *$'progress 50%\njobreg-dispatch: other: run 1 failed: exit 3'* ]] || flunk "stderr: $stderr"
	# --chronic, the report from the log: a process left behind keeps the
	# output (and the relay) past dispatch's wait
	jobreg-dispatch --chronic third sh -c 'printf "progress 50%%"; sleep 3 & exit 3' > /dev/null 2> "$T/err" || true
	[[ $(cat "$T/err") == *$'progress 50%\njobreg-dispatch: third: run 1 failed: exit 3'* ]] ||
		flunk "stderr: $(cat "$T/err")"
}

@test "a message of dispatch's own starts a line of its own in a file that both streams go to (> FILE 2>&1)" {
	jobreg-dispatch --log --retries 1 --retry-delay 0.1 job sh -c 'printf "progress 50%%"; exit 3' > "$T/out" 2>&1 || true
	[[ $(cat "$T/out") == *$'progress 50%\njobreg-dispatch: job: attempt 1 failed'* ]] || flunk "out: $(cat "$T/out")"
	jobreg-dispatch --log --timeout 0.5 other sh -c 'printf "progress 50%%"; exec sleep 5' > "$T/out" 2>&1 || true
	[ "$(cat "$T/out")" = $'progress 50%\njobreg-dispatch: other: run 1 timed out after 0.5s (TERM)' ] || flunk "out: $(cat "$T/out")"
}

@test "a --once --chronic replay's line of its own starts a line, after a log that did not end one" {
	run --separate-stderr jobreg-dispatch -q --chronic job sh -c 'printf "progress 50%%"; exit 3'
	[ "$status" -eq 3 ]
	run --separate-stderr jobreg-dispatch -q --once --chronic job true
	[ "$status" -eq 3 ]
	[ "$stderr" = $'progress 50%\njobreg-dispatch: job: run 1 failed: exit 3' ] || flunk "stderr: $stderr"
}

@test "--log and --chronic exclude each other; clear removes the logs with the record" {
	run jobreg-dispatch --log --chronic job true
	[ "$status" -eq 64 ]
	jobreg-dispatch --log job sh -c 'exit 1' >/dev/null || true
	jobreg-dispatch --log job true >/dev/null
	[ -e "$REG/.job.log" ]
	[ -e "$REG/.job.faillog" ]
	jobreg-clear job
	[ ! -e "$REG/.job.log" ]
	[ ! -e "$REG/.job.faillog" ]
}

is_running() {
	[ "$(jobreg-get job)" = RUNNING ]
}

# in_order FILE: FILE is whole numbers, one a line, each greater than the one
# before (and its last line ends with a newline): no byte printed twice, no
# two lines spliced.  (Its first line may be the log's own, of a cut made
# before it was first read.)
in_order() {
	awk 'NR == 1 && /^\[jobreg: [0-9]+ bytes dropped\]$/ { next }
		!/^[0-9]+$/ || $1 + 0 <= last { print "line " NR ": " $0; bad = 1; exit }
		{ last = $1 + 0 } END { exit bad }' "$1" || flunk "$1 is not strictly increasing"
	[ -z "$(tail -c 1 "$1")" ] || flunk "$1 ends in the middle of a line"
}

@test "--follow under a flood prints whole lines, each once and in order, and says on stderr when the log was cut under it" {
	jobreg-dispatch --log --log-size 4k job sh -c 'while [ ! -e "$1/go" ]; do sleep 0.01; done; seq 1 3000000' sh "$T" 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until is_running
	jobreg-get --log --follow job 3>&- > "$T/followed" 2> "$T/said" &
	f=$!
	BG_PIDS+=("$f")
	: > "$T/go"
	wait_bg "$f"
	[ "$BG_RC" = 0 ] || flunk "--follow exited $BG_RC: $(cat "$T/said")"
	in_order "$T/followed"
	[ "$(tail -n 1 "$T/followed")" = 3000000 ]
	# each cut it met is one line on stderr, and it met some
	grep -qv '^jobreg-get: job: ' "$T/said" && flunk "stderr: $(cat "$T/said")"
	[ -s "$T/said" ]
}

@test "--follow follows every attempt of a run with --retries until the run ends" {
	jobreg-dispatch -q --log --retries 2 --retry-delay 0.3 job sh -c 'echo "attempt $JOBREG_ATTEMPT"; while [ ! -e "$1/go" ]; do sleep 0.01; done; [ "$JOBREG_ATTEMPT" = 3 ]' sh "$T" 3>&- >/dev/null &
	d=$!
	BG_PIDS+=("$d")
	poll_until grep -q 'attempt 1' "$REG/.job.log"
	jobreg-get --log --follow job 3>&- > "$T/followed" &
	f=$!
	BG_PIDS+=("$f")
	: > "$T/go"
	wait_bg "$d"
	[ "$BG_RC" = 0 ]
	wait_bg "$f"
	[ "$BG_RC" = 0 ]
	[ "$(cat "$T/followed")" = $'attempt 1\nattempt 2\nattempt 3' ]
}

@test "--follow started after the log is made but before the record says RUNNING follows that run" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	jobreg-dispatch job true
	# The first fsync of the dispatch is its RUNNING record's, after the
	# new log is made (.job.newlog): held back 3 s, it leaves the log
	# without its RUNNING.
	traced -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=3000000:when=1 \
		jobreg-dispatch --log job sh -c 'sleep 0.3; echo hello; sleep 0.3; echo bye' 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.job.newlog"
	[ "$(jobreg-get job)" = DONE ]
	run jobreg-get --log --follow job
	[ "$status" -eq 0 ]
	[ "$output" = $'hello\nbye' ]
}

@test "--faillog prints the last failed run's log while new runs start, never an empty one or none" {
	jobreg-dispatch -q --log job sh -c 'echo "fail $JOBREG_RUN"; exit 1' >/dev/null || true
	# Runs that fail, one after another, some with a retry; meanwhile
	# --faillog, again and again.  Calls one after another never go back to
	# an older failure.
	sh -c 'i=0; while [ $i -lt 40 ]; do
		jobreg-dispatch -q --log job sh -c "echo fail \$JOBREG_RUN; exit 1" >/dev/null 2>&1
		jobreg-dispatch -q --log --retries 1 --retry-delay 0.01 job sh -c "echo fail \$JOBREG_RUN; exit 1" >/dev/null 2>&1
		i=$((i + 1)); done; : > "$1/end"' sh "$T" 3>&- &
	BG_PIDS+=("$!")
	sh -c 'until [ -e "$1/end" ]; do out=$(jobreg-get --faillog job 2>&1); echo "$? $out"; done' sh "$T" > "$T/calls"
	awk '!/^0 fail [0-9]+$/ || $3 + 0 < last { print "call " NR ": " $0; bad = 1; exit }
		{ last = $3 + 0 } END { if (NR < 100) { print NR " calls"; bad = 1 } exit bad }' "$T/calls" ||
		flunk "a wrong --faillog"
}

@test "--log never prints the NUL bytes of a first line being written: it waits for it" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	# A first write of more than --log-size goes in after room for the
	# first line, which comes next: the relay is held 3 s between.
	traced -f -o /dev/null -e trace=pwrite64 -e inject=pwrite64:delay_exit=3000000:when=1 \
		jobreg-dispatch --log --log-size 1k job python3 -c 'import os; os.write(1, b"x" * 5000 + b"\n")' 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until test -s "$REG/.job.log"
	head -c 1 "$REG/.job.log" | od -An -c | grep -q '\\0' || flunk "no hole seen: $(head -c 40 "$REG/.job.log")"
	jobreg-get --log job > "$T/printed"
	[ "$(tr -d '\0' < "$T/printed" | wc -c)" = "$(wc -c < "$T/printed")" ] || flunk "NUL bytes printed"
	[ "$(tail -n 1 "$T/printed")" = "$(printf '%1023s' '' | tr ' ' x)" ]
}

@test "a run whose output begins with a NUL byte: --log prints it at once, while the run goes, not after it" {
	jobreg-dispatch --log job sh -c 'printf "\000abc\n"; exec sleep 30' > /dev/null 3>&- &
	BG_PIDS+=("$!")
	poll_until sh -c 'test "$(wc -c < "$1" 2>/dev/null)" = 5' sh "$REG/.job.log"
	[ "$(jobreg-get job)" = RUNNING ]
	run timeout 5 jobreg-get --log job
	[ "$status" -eq 0 ]
	[ "$(timeout 5 jobreg-get --log job | od -An -c | tr -s ' ')" = ' \0 a b c \n' ]
}

@test "--follow of a quiet run sleeps in the one wait: it reads the record on changes, not every 100 ms" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	jobreg-dispatch --log job sh -c 'echo start; sleep 2; echo end' 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until test -s "$REG/.job.log"
	traced -o "$T/trace" -e trace=openat jobreg-get --log --follow job > "$T/followed"
	[ "$(cat "$T/followed")" = $'start\nend' ]
	# about 2 s: a look a second (DIR followed by name), and at the run's end
	reads=$(grep -c 'openat(.*"job",' "$T/trace")
	[ "$reads" -le 8 ] || flunk "the record was read $reads times"
}

@test "a new log left by a dispatch that died before its run began goes: the next run's, or clear's" {
	jobreg-dispatch --log job true
	: > "$REG/.job.newlog"
	jobreg-dispatch job true
	[ ! -e "$REG/.job.log" ]
	[ ! -e "$REG/.job.newlog" ]   # a leftover: a run without a log removes it too
	: > "$REG/.job.newlog"
	jobreg-clear job
	[ ! -e "$REG/.job.newlog" ]
	jobreg-dispatch --log job true
	: > "$REG/.job.newlog"
	jobreg-dispatch --log job echo new
	[ "$(cat "$REG/.job.log")" = new ]
	[ ! -e "$REG/.job.newlog" ]
}

# bats test_tags=serial
@test "a run without --log removes a new log a dead dispatch left: --log does not wait for it while the run goes" {
	jobreg-dispatch --log job echo old > /dev/null
	: > "$REG/.job.newlog"   # a dispatch killed between making it and RUNNING
	jobreg-dispatch job sleep 30 3>&- &
	BG_PIDS+=("$!")
	poll_until jobreg-get --is RUNNING job
	[ ! -e "$REG/.job.newlog" ]
	# The last run's log is set aside just after RUNNING is written: until
	# then --log shows it (exit 0), so wait for that, not for RUNNING alone.
	poll_until test ! -e "$REG/.job.log"
	local t0=$SECONDS
	run jobreg-get --log job
	[ "$status" -eq 1 ]
	[ $((SECONDS - t0)) -lt 3 ]
}

@test "a new log that cannot be removed does not stop a run without --log" {
	mkdir "$REG" "$REG/.job.newlog"   # planted: not a file a run can remove
	run jobreg-dispatch job echo ran
	[ "$status" -eq 0 ]
	[ "$output" = ran ]
}

@test "--log and --follow while a run is starting show that run's log, never the last run's" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	jobreg-dispatch --log job echo the-last-run > /dev/null
	# The new run is held 3 s after its RUNNING record, at the turnover
	# of the last run's log (its first unlinkat), the new log still
	# .job.newlog.
	traced -o /dev/null -e trace=unlinkat -e inject=unlinkat:delay_enter=3000000:when=1 \
		jobreg-dispatch --log job sh -c 'echo this-run; sleep 0.3' 3>&- >/dev/null &
	BG_PIDS+=("$!")
	poll_until test -e "$REG/.job.newlog"
	run jobreg-get --log --follow job
	[ "$status" -eq 0 ]
	[ "$output" = this-run ]
}
