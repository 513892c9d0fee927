#!/usr/bin/env bats
# How a command is started (SPEC §5, "robust to how it is started"): with
# descriptors 0-2 closed, with a closed pipe for standard output or error, and
# with SIGPIPE ignored or not.  (As pid 1 of a pid namespace: namespaces.bats.)
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

# closed_pipe FD CMD...: run CMD with descriptor FD (1 or 2) a pipe whose
# reader has gone; prints CMD's exit status (128+N for signal N).
closed_pipe() {
	local fd=$1
	shift
	python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
fd = int(sys.argv[1])
p = subprocess.run(sys.argv[2:], stdout=w if fd == 1 else None, stderr=w if fd == 2 else None)
print(p.returncode if p.returncode >= 0 else 128 - p.returncode)' "$fd" "$@"
}

# ---- descriptors 0-2 closed ------------------------------------------------

@test "dispatch started with 0, 1 and 2 closed gives its command /dev/null there, never the run lock" {
	jobreg-dispatch job sh -c 'echo out; echo err >&2; fds=$(readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2); echo "$fds" > "$1/fds"' sh "$T" <&- >&- 2>&-
	[ "$(cat "$T/fds")" = $'/dev/null\n/dev/null\n/dev/null' ]
	[ ! -s "$REG/.job.run" ]
	[ ! -s "$REG/.job.lock" ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 0 ]
}

@test "set, get and clear started with 0-2 closed write their messages nowhere, not into a lock or record" {
	jobreg-set --exit 0 job DONE <&- >&- 2>&-
	cp "$REG/job" "$T/job.before"
	# a usage error, an --if mismatch and a busy lock all write to stderr
	# (not under `run`, whose capture would give them a pipe on 1 and 2)
	local st
	st=0; jobreg-set job BOGUS <&- >&- 2>&- || st=$?
	[ "$st" -eq 64 ]
	st=0; jobreg-set --if RUNNING job PENDING <&- >&- 2>&- || st=$?
	[ "$st" -eq 1 ]
	st=0; jobreg-get -l job <&- >&- 2>&- || st=$?
	[ "$st" -eq 0 ]
	st=0; jobreg-clear --if RUNNING job <&- >&- 2>&- || st=$?
	[ "$st" -eq 1 ]
	cmp "$REG/job" "$T/job.before"
	[ ! -s "$REG/.job.lock" ]
}

# ---- closed pipes ----------------------------------------------------------

@test "dispatch of a missing command with stderr a closed pipe still records DONE exit=127 and exits 127" {
	[ "$(closed_pipe 2 jobreg-dispatch job /nonexistent)" = 127 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 127 ]
}

@test "the leftover warning after DONE on a closed stderr does not change an OK run's exit 0" {
	[ "$(closed_pipe 2 jobreg-dispatch job sh -c 'sleep 1 >/dev/null 2>&1 &')" = 0 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 0 ]
}

@test "get with stdout a closed pipe exits 74, not by SIGPIPE" {
	jobreg-set --exit 0 job DONE
	[ "$(closed_pipe 1 jobreg-get -a)" = 74 ]
	[ "$(closed_pipe 1 jobreg-get job)" = 74 ]
}

@test "--once replaying a failed run on a closed stderr exits with that run's status" {
	jobreg-set --exit 3 job DONE
	[ "$(closed_pipe 2 jobreg-dispatch --once job true)" = 3 ]
}

@test "the command gets the SIGPIPE disposition dispatch was started with" {
	# SigIgn is a mask of ignored signals: SIGPIPE (13) is 0x1000.
	jobreg-dispatch job sh -c 'grep SigIgn /proc/self/status > "$1/default"' sh "$T"
	sh -c 'trap "" PIPE; exec jobreg-dispatch job sh -c '\''grep SigIgn /proc/self/status > "$1/ignored"'\'' sh "$1"' sh "$T"
	[ $(( 0x$(cut -f2 "$T/default") & 0x1000 )) -eq 0 ]
	[ $(( 0x$(cut -f2 "$T/ignored") & 0x1000 )) -ne 0 ]
	# and so a command writing to a closed pipe dies of it, as it would alone
	run jobreg-dispatch job sh -c 'yes | head -n 1 >/dev/null; exit 0'
	[ "$status" -eq 0 ]
}

# ---- the time zone -----------------------------------------------------------

@test "a TZ naming a FIFO blocks no command: a record's times are UTC and no time zone is read" {
	mkfifo "$T/tz"
	local before after
	before=$(date -u +%s)
	run -0 env TZ=":$T/tz" timeout 10 jobreg-set j RUNNING
	run -0 env TZ=":$T/tz" timeout 10 jobreg-dispatch --every 1h e true
	run -0 env TZ=":$T/tz" timeout 10 jobreg-dispatch --every 1h e true
	[[ $output == *"e: not due until "????-??-??T??:??:??Z ]]
	after=$(date -u +%s)
	# (date -d reads the record's form back, in UTC whatever TZ says)
	local since
	since=$(date -u -d "$(field j since)" +%s)
	[ "$since" -ge "$before" ] && [ "$since" -le "$after" ]
}
