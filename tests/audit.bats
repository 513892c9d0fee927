#!/usr/bin/env bats
# The audit log: SPEC §3c, §1 (the .-audit files), §5 jobreg-set, jobreg-clear,
# dispatch --replace and jobreg-get --audit, §7.  Crash points: faults.bats (set,
# --pause, clear); two hosts at once: sharedfs/audit.bats.

bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs
load lib/users

LOG=.-audit

# lines: the audit log's lines, without the time, user, uid, host and pid fields.
lines() {
	sed -E 's/^time=[^ ]+ user=[^ ]+ (sudo_user=[^ ]+ )?uid=[0-9]+ host=[^ ]+ pid=[0-9]+ //' "$REG/$LOG"
}

# filler N JOB [BYTES]: N lines of an old jobreg-set for JOB (about 100 bytes
# each), or as many as fit in BYTES.
filler() {
	awk -v n="$1" -v job="$2" -v max="${3:-0}" 'BEGIN {
		for (i = 1; i <= n || max; i++) {
			l = sprintf("time=2020-01-01T00:00:00Z user=old uid=1 host=h pid=%d command=jobreg-set action=set job=%s status=DONE", i, job)
			if (max && (size += length(l) + 1) > max) break
			print l
		} }'
}

@test "every jobreg-set write is on the audit log first: who, the command, the action, the job, its status and the note" {
	jobreg-set -m 'kernel upgrade' job RUNNING
	jobreg-set --late-after 1d job DONE
	jobreg-set --pause --for 1h -m "it's paused" job
	jobreg-set --resume job
	jobreg-set --pause -a
	jobreg-set --resume -a
	local me
	me=$(id -un)
	run lines
	[ "${lines[0]}" = "command=jobreg-set action=set job=job status=RUNNING note='kernel upgrade'" ]
	[ "${lines[1]}" = "command=jobreg-set action=set job=job status=DONE" ]
	[[ ${lines[2]} == "command=jobreg-set action=pause job=job status=DONE until=20"*"Z note='it'\\''s paused'" ]]
	[ "${lines[3]}" = "command=jobreg-set action=resume job=job status=DONE" ]
	[ "${lines[4]}" = "command=jobreg-set action=pause job=- until=inf" ]
	[ "${lines[5]}" = "command=jobreg-set action=resume job=-" ]
	[ "${#lines[@]}" -eq 6 ]
	# the who: the real user's name, uid, host and pid, in SPEC §3c's order
	[[ $(head -n 1 "$REG/$LOG") =~ ^time=20[0-9-]+T[0-9:]+Z\ user=$me\ uid=$(id -u)\ host=$HOST\ pid=[0-9]+\ command= ]]
	# created as records are
	[ "$(stat -c %a "$REG/$LOG")" = "$(printf '%o' $((0666 & ~$(umask))))" ]
}

@test "a call that changes nothing writes no line: resume of no pause, an --if mismatch, clear -n, clear of no record" {
	jobreg-set job DONE
	: > "$REG/$LOG"
	jobreg-set --resume job
	run jobreg-set --if RUNNING job PENDING
	[ "$status" -eq 1 ]
	jobreg-clear -n job
	jobreg-clear never-seen
	jobreg-set -a --if RUNNING PENDING
	[ ! -s "$REG/$LOG" ]
}

@test "jobreg-clear puts each record it removes on the audit log, sweeps included, and leaves .-audit* alone" {
	jobreg-set a DONE
	jobreg-set b PENDING
	jobreg-set c RUNNING
	filler 2 old > "$REG/$LOG.1"
	jobreg-clear a
	jobreg-clear -a --if PENDING
	jobreg-clear -a
	run lines
	[ "${lines[3]}" = "command=jobreg-clear action=clear job=a status=DONE" ]
	[ "${lines[4]}" = "command=jobreg-clear action=clear job=b status=PENDING" ]
	[ "${lines[5]}" = "command=jobreg-clear action=clear job=c status=RUNNING" ]
	[ "${#lines[@]}" -eq 6 ]
	[ -f "$REG/$LOG" ] && [ -f "$REG/$LOG.1" ] && [ -f "$REG/$LOG.lock" ]
	[ "$(wc -l < "$REG/$LOG.1")" -eq 2 ]
}

@test "jobreg-set --cancel and dispatch --replace put the run they ask to stop on the audit log" {
	bg_dispatch job
	jobreg-set --cancel --signal INT -m stop job
	wait_bg "$BG_PID" || true
	bg_dispatch job
	local first=$BG_PID
	jobreg-dispatch -q --replace --kill-after 0.2 job true
	wait_bg "$first" || true
	run grep -c ' action=' "$REG/$LOG"
	[ "$output" -eq 2 ]
	grep -q ' command=jobreg-set action=cancel job=job status=RUNNING run=1 signal=INT note=stop$' "$REG/$LOG"
	grep -q ' command=jobreg-dispatch action=replace job=job run=2 signal=TERM$' "$REG/$LOG"
}

@test "sudo -u someone: the audit line names both the user and the person behind sudo" {
	command -v sudo >/dev/null 2>&1 || skip "sudo is not installed (.ci/run installs it)"
	need_users
	add_user "jra$$"
	public_dir
	export JOBREG_DIR=$PUBLIC/reg REG=$PUBLIC/reg
	mkdir -m 777 "$REG"
	sudo -u "jra$$" "$PUBLIC_BIN/jobreg-set" -d "$REG" job DONE
	local line
	line=$(cat "$REG/$LOG")
	[[ $line == *" user=jra$$ sudo_user=$(id -un) uid=$(id -u "jra$$") "* ]] || flunk "$line"
	jobreg-get --audit -j | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["user"] == sys.argv[1] and o["sudo_user"] == sys.argv[2] and o["uid"] == int(sys.argv[3]), o
' "jra$$" "$(id -un)" "$(id -u "jra$$")"
}

@test "a full disk refuses the change (74) and leaves the record as it was; --force makes it and says it is not on the audit log" {
	mkdir -p "$T/full"
	mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null || skip "cannot mount a tmpfs on $T/full"
	MOUNTED=$T/full
	export JOBREG_DIR=$T/full/reg REG=$T/full/reg
	jobreg-set -m before job DONE
	save job
	# the log's last page full, and the disk too
	printf '%4095s\n' '' | tr ' ' x > "$REG/$LOG"
	dd if=/dev/zero of="$T/full/fill" bs=4k 2>/dev/null || true
	run --separate-stderr jobreg-set -m after job PENDING
	[ "$status" -eq 74 ]
	[[ $stderr == "jobreg-set: job: write $REG/$LOG: No space left on device" ]] || flunk "$stderr"
	unchanged job
	[ "$(stat -c %s "$REG/$LOG")" -eq 4096 ]
	run --separate-stderr jobreg-clear job
	[ "$status" -eq 74 ]
	unchanged job
	# --force: room for the record, none for the line (strace's ENOSPC on its write)
	rm "$T/full/fill"
	command -v strace >/dev/null 2>&1 || skip "strace is not installed"
	# (LeakSanitizer cannot work under ptrace: a SANITIZE=1 build's leaks are for the
	# other tests to find)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		run --separate-stderr strace -o /dev/null -e trace=write -e inject=write:error=ENOSPC:when=1 \
		jobreg-set --force -m after job PENDING
	[ "$status" -eq 0 ]
	[[ $stderr == *"write $REG/$LOG: No space left on device"*"not on the audit log"* ]] || flunk "$stderr"
	[ "$(field job note)" = after ]
}

local_teardown() {
	if [ -n "${MOUNTED:-}" ]; then umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" || true; fi
}

@test "a symlink or a directory at .-audit is refused (77) and nothing changes, but with --force" {
	jobreg-set job DONE
	save job
	rm "$REG/$LOG"
	ln -s /etc/passwd "$REG/$LOG"
	run --separate-stderr jobreg-set job PENDING
	[ "$status" -eq 77 ]
	[[ $stderr == "jobreg-set: job: not a regular file: $REG/$LOG" ]] || flunk "$stderr"
	unchanged job
	run jobreg-get --audit
	[ "$status" -eq 77 ]
	rm "$REG/$LOG"
	mkdir "$REG/$LOG"
	run --separate-stderr jobreg-clear job
	[ "$status" -eq 77 ]
	unchanged job
	run --separate-stderr jobreg-clear --force job
	[ "$status" -eq 0 ]
	[[ $stderr == *"not on the audit log"* ]] || flunk "$stderr"
	[ ! -e "$REG/job" ]
}

@test "a change that fails after its line gets a second line, result=failed and the error" {
	jobreg-set job DONE
	mkdir "$REG/.job.tmp"
	run --separate-stderr jobreg-set -m x job PENDING
	[ "$status" -eq 77 ]
	run lines
	[ "${lines[1]}" = "command=jobreg-set action=set job=job status=PENDING note=x" ]
	[[ ${lines[2]} == "command=jobreg-set action=set job=job status=PENDING note=x result=failed error='"*".job.tmp'" ]] ||
		flunk "${lines[2]}"
}

@test "past 1 MiB the log is rotated to .-audit.1, which --audit reads first" {
	mkdir -p "$REG"
	filler 100 gone > "$REG/$LOG.1"
	filler 0 old $((1048576 - 5)) > "$REG/$LOG"
	local n
	n=$(wc -l < "$REG/$LOG")
	jobreg-set -m "$(printf 'n%.0s' {1..120})" job PENDING
	# the line that passed 1 MiB went with it, replacing the older .-audit.1
	[ ! -e "$REG/$LOG" ]
	[ "$(wc -l < "$REG/$LOG.1")" -eq $((n + 1)) ]
	jobreg-set job DONE
	[ "$(wc -l < "$REG/$LOG")" -eq 1 ]
	run jobreg-get --audit
	[ "${#lines[@]}" -eq $((n + 2)) ]
	[[ ${lines[0]} == *" pid=1 command=jobreg-set action=set job=old status=DONE" ]]
	[[ ${lines[n]} == *" action=set job=job status=PENDING note=nnn"* ]]
	[[ ${lines[n + 1]} == *" action=set job=job status=DONE" ]]
}

@test "--audit: JOB and --since filters, -j with the values unquoted back, and control characters escaped" {
	mkdir -p "$REG"
	{
		filler 1 old
		printf '%s\n' $'time=2020-01-02T00:00:00Z user=old uid=1 host=h pid=2 command=jobreg-set action=set job=evil note=a\e[31m'
	} > "$REG/$LOG"
	jobreg-set -m "it's new" job DONE
	jobreg-set --pause -a
	run jobreg-get --audit job
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == *" job=job status=DONE note='it'\\''s new'" ]]
	[[ ${lines[1]} == *" action=pause job=- until=inf" ]]
	run jobreg-get --audit --since 1h
	[ "${#lines[@]}" -eq 2 ]
	run jobreg-get --audit evil
	[ "${#lines[@]}" -eq 2 ]   # (and the registry's pause, which holds every job)
	[ "${lines[0]}" = 'time=2020-01-02T00:00:00Z user=old uid=1 host=h pid=2 command=jobreg-set action=set job=evil note=a\x1b[31m' ]
	run jobreg-get --audit -j job evil
	[ "${#lines[@]}" -eq 3 ]
	printf '%s\n' "${lines[@]}" | python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin]
assert objs[0]["note"] == "a\x1b[31m" and objs[0]["pid"] == 2 and objs[0]["uid"] == 1, objs[0]
assert objs[1]["note"] == "it'"'"'s new" and objs[1]["action"] == "set", objs[1]
assert objs[2]["job"] == "-" and objs[2]["until"] == "inf", objs[2]
'
	[[ ${lines[0]} == *'\u001b[31m'* ]]
	# no log, or no registry: nothing, 0
	rm "$REG/$LOG"
	run --separate-stderr jobreg-get --audit
	[ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ]
	run --separate-stderr jobreg-get -d "$T/none" --audit -j
	[ "$status" -eq 0 ] && [ -z "$output" ]
	run jobreg-get --since 1h job
	[ "$status" -eq 64 ]
}

@test "a long note is cut on a character boundary: a line stays within 4 KiB" {
	local note
	note=$(printf 'é%.0s' {1..2048})
	jobreg-set -m "$note" job DONE
	[ "$(head -n 1 "$REG/$LOG" | wc -c)" -le 4096 ]
	head -n 1 "$REG/$LOG" | iconv -f UTF-8 -t UTF-8 > /dev/null
	[[ $(head -n 1 "$REG/$LOG") == *" note=éé"*"é" ]]
}

@test "many writers at once leave whole lines, none interleaved" {
	local i
	for i in $(seq 1 8); do
		(for k in 1 2 3 4 5 6 7 8 9 10; do jobreg-set -m "writer $i line $k $(printf 'y%.0s' {1..300})" "j$i" DONE; done) &
	done
	wait
	[ "$(wc -l < "$REG/$LOG")" -eq 80 ]
	[ "$(grep -cE "^time=[^ ]+ user=[^ ]+ uid=[0-9]+ host=[^ ]+ pid=[0-9]+ command=jobreg-set action=set job=j[0-9] status=DONE note='writer [0-9] line [0-9]+ y{300}'\$" "$REG/$LOG")" -eq 80 ]
}

@test "--report says when a pause was set and by whom" {
	jobreg-set job DONE
	SUDO_USER=somebody jobreg-set --pause -m 'disk swap' job
	run jobreg-get --report job
	[[ ${lines[0]} == *"paused until resumed (by $(id -un)@$HOST: disk swap), set "*"s ago by somebody as $(id -un)"* ]] ||
		flunk "${lines[0]}"
}
