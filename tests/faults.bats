#!/usr/bin/env bats
# Fault injection and crash points on the write paths (SPEC §4, §6), with strace(1).
#
# Faults: ENOSPC, EIO, EDQUOT, EMFILE and EACCES injected into each openat, write,
# fsync, close, rename, unlink and mkdir that jobreg-set, jobreg-clear and
# jobreg-dispatch make on their way to a record; then the exit status, the one stderr
# line, the record (byte for byte) and the temp files are checked.
#
# Crash points: SIGKILL at every system call of a run (strace's per-syscall "when="
# counts, so `inject=all:when=N` would not stop at the Nth call: each call is aimed
# at by its own name and number); then the record must be the old one or the new one,
# whole, jobreg-get must not say CORRUPT, and the next writer must sweep the temps.
#
# Call numbers are read from a plain strace of the same run, so nothing here counts
# system calls by hand (and a SANITIZE=1 build, with its many more calls, works too).
# The cases run on $JOBREG_TEST_JOBS workers (default: the number of CPUs), each with
# its own registry.
load lib/helper
load lib/procs
shopt -s extglob

ERRNOS="ENOSPC EIO EDQUOT EMFILE EACCES"
ABSENT=$'\1absent'      # what slurp says for a missing file

# What strace can do here, asked once a file, not once a test (four traced
# starts): why the tests must skip, if they must, in FAULTS_SKIP, and
# FAULTS_SECCOMP=1 where seccomp-bpf makes strace faster (it says nothing
# then); exported for local_setup.
setup_file() {
	FAULTS_SKIP= FAULTS_SECCOMP=
	if ! command -v strace >/dev/null 2>&1; then
		FAULTS_SKIP="strace not installed"
	elif ! strace -o /dev/null true >/dev/null 2>&1; then
		FAULTS_SKIP="strace cannot trace here (ptrace not permitted)"
	elif ! strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1; then
		FAULTS_SKIP="this strace cannot inject faults (strace >= 4.16 needed)"
	elif [[ -z $(strace -f --seccomp-bpf -o /dev/null true 2>&1) ]]; then
		FAULTS_SECCOMP=1
	fi
	export FAULTS_SKIP FAULTS_SECCOMP
}

local_setup() {
	[ -z "$FAULTS_SKIP" ] || skip "$FAULTS_SKIP"
	SECCOMP=()
	[ -z "$FAULTS_SECCOMP" ] || SECCOMP=(-f --seccomp-bpf)
	# LeakSanitizer cannot work under ptrace: with SANITIZE=1 builds, leaks are for the
	# other tests to find
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	J=job1
	ERR=$T/stderr
	SNAP=$T/snap          # the dispatched command copies the RUNNING record here
	FAILS=()
	CASES=0
	# the record planted before each run: an unknown key that writers must keep
	OLD=$'version=1\nstatus=DONE\nsince=2026-01-02T03:04:05Z\nstarted=2026-01-02T03:00:00Z\nended=2026-01-02T03:04:05Z\nexit=0\nnote=old\nx-future=kept by writers\n'
	# the old record's run in the history, so a write finds nothing missing there
	OLD_HISTORY='run=0 outcome=OK started=2026-01-02T03:00:00Z ended=2026-01-02T03:04:05Z duration=245 exit=0'
	# for set-done: run 1 of the job, its owner's --ttl run out (STALE), ended by
	# set --exit 0 DONE, which writes the record and the run's history line
	# for notify: run 1 failed, and nobody announced it
	OLD_FAILED=$'version=1\nstatus=DONE\nsince=2026-01-02T03:04:05Z\nstarted=2026-01-02T03:00:00Z\nended=2026-01-02T03:04:05Z\nexit=3\noutcome=FAILED\nruns=1\nfailures=1\nconsecutive_failures=1\nx-future=kept by writers\n'
	OLD_FAILED_HISTORY='run=1 outcome=FAILED started=2026-01-02T03:00:00Z ended=2026-01-02T03:04:05Z duration=245 exit=3'
	OLD_RUNNING=$'version=1\nstatus=RUNNING\nsince=2026-01-02T03:04:05Z\nstarted=2026-01-02T03:04:05Z\nexpires=2026-01-02T03:05:05Z\nruns=1\nnote=old\nx-future=kept by writers\n'
}

# ---- small tools (no forks where it matters: these run thousands of times) ----

# slurp VAR FILE: the exact bytes of FILE (or $ABSENT) into VAR.
slurp() {
	if [[ -e $2 ]]; then
		IFS= read -r -d '' "$1" < "$2" || true
	else
		printf -v "$1" '%s' "$ABSENT"
	fi
}

# norm VAR TEXT: TEXT with timestamps, pids, start times, run-lock inodes and commands masked,
# for records written just now.
norm() {
	local _n=$2
	_n=${_n//[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z/TIME}
	_n=${_n//$'\n'pid=+([0-9])$'\n'/$'\n'pid=PID$'\n'}
	_n=${_n//$'\n'pid_start=+([0-9])$'\n'/$'\n'pid_start=START$'\n'}
	_n=${_n//$'\n'run_lock=+([0-9])$'\n'/$'\n'run_lock=INODE$'\n'}
	# (the command names the worker's own directory)
	_n=${_n//$'\n'cmd=+([!$'\n'])$'\n'/$'\n'cmd=CMD$'\n'}
	printf -v "$1" '%s' "$_n"
}

# strerror_of ERRNO: the message text glibc gives, into $ERRTEXT.
strerror_of() {
	case $1 in
	ENOSPC) ERRTEXT="No space left on device" ;;
	EIO) ERRTEXT="Input/output error" ;;
	EDQUOT) ERRTEXT="Disk quota exceeded" ;;
	EMFILE) ERRTEXT="Too many open files" ;;
	EACCES) ERRTEXT="Permission denied" ;;
	esac
}

# temps: set TEMPS to the leftover temp files of $J (empty when none).
temps() {
	local f
	TEMPS=
	[[ -e $REG/.$J.tmp ]] && TEMPS=" .$J.tmp"
	return 0
}

# note_fail MESSAGE: note a failed check (one line), to be reported at the end.
note_fail() {
	local m=$*
	FAILS+=("${m//$'\n'/\\n}")
}

# untraced FUNCTION ARGS...: run FUNCTION in a subshell where a failed command
# does not end the test (no ERR trap, no errexit): failures are noted with
# note_fail and reported at the end, all of them.
untraced() {
	(
		trap - DEBUG ERR
		set +eET
		"$@"
		report
	)
}

# spread FUNCTION ITEM...: FUNCTION ITEM for every ITEM, spread over $WORKERS workers that
# each have their own directory (T, REG, ERR, SNAP), so that they never meet.  Adds
# up CASES and KILLED and gathers FAILS from the workers.
WORKERS=${JOBREG_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
((WORKERS >= 1 && WORKERS <= 8)) || WORKERS=2
spread() {
	local func=$1 base=$T w i c k line
	shift
	local items=("$@")
	for ((w = 0; w < WORKERS; w++)); do
		(
			T=$base/w$w ERR=$base/w$w/stderr SNAP=$base/w$w/snap
			mkdir -p "$T"
			scenario "$SCEN"
			FAILS=() CASES=0 KILLED=0
			for ((i = w; i < ${#items[@]}; i += WORKERS)); do
				"$func" "${items[i]}"
			done
			{
				echo "$CASES $KILLED"
				((${#FAILS[@]} == 0)) || printf '%s\n' "${FAILS[@]}"
			} > "$base/result.$w"
		) &
	done
	wait
	for ((w = 0; w < WORKERS; w++)); do
		{
			read -r c k
			CASES=$((CASES + c)) KILLED=$((KILLED + k))
			while IFS= read -r line; do FAILS+=("$line"); done
		} < "$base/result.$w"
	done
}

# report: print every failure noted; fail when there is one.
report() {
	local f
	((${#FAILS[@]} == 0)) && return 0
	for f in "${FAILS[@]}"; do printf '%s\n' "$f"; done
	echo "${#FAILS[@]} of $CASES cases failed"
	return 1
}

# status_of: the status word jobreg-get prints for $J, into $GOT.
status_of() {
	GOT=$(jobreg-get "$J" 2>&1) || true
}

# site TRACE NAME_ERE LINE_ERE NTH: the NTH call whose name matches NAME_ERE and whose
# strace line matches LINE_ERE, as "NAME WHEN" (WHEN counts that name's calls, as
# strace's when= does); nothing when there is no such call.  NTH "<N": the last call
# named NAME_ERE before the Nth line (of any call) that matches LINE_ERE.
# @REG@ in LINE_ERE stands for the registry's path.
site() {
	NRE=$2 LRE=${3//@REG@/$REG} awk -v nth="$4" '
		BEGIN { before = sub(/^</, "", nth) }
		match($0, /^[a-z0-9_]+\(/) {
			sc = substr($0, 1, RLENGTH - 1); count[sc]++
			if (before) {
				if ($0 ~ ENVIRON["LRE"] && ++hit == nth) { if (last) print last; exit }
				if (sc ~ ENVIRON["NRE"]) last = sc " " count[sc]
			} else if (sc ~ ENVIRON["NRE"] && $0 ~ ENVIRON["LRE"] && ++hit == nth) {
				print sc, count[sc]; exit
			}
		}' "$1"
}

# every_call TRACE: "NAME WHEN" for every system call in TRACE but the first execve
# (strace cannot stop the tracee before it exists).  The calls before the first one
# that names the registry cannot touch it: when there are more than 40 of them (the
# dynamic loader and a sanitizer's start-up, in a SANITIZE=1 build) only 40 of them,
# evenly spread, are kept.  Sets CALLS_TOTAL.
every_call() {
	local out
	out=$(REGPATH=$REG awk '
		match($0, /^[a-z0-9_]+\(/) {
			sc = substr($0, 1, RLENGTH - 1); count[sc]++
			if (NR == 1) next
			n++; call[n] = sc " " count[sc]
			if (!first && index($0, ENVIRON["REGPATH"])) first = n
		}
		END {
			print n
			if (!first) first = 1
			step = (first - 1 > 40) ? (first - 1) / 40 : 1
			for (i = 1; i < first; i += step) { print call[int(i)]; last = int(i) }
			if (last && last < first - 1) print call[first - 1]
			for (i = first; i <= n; i++) print call[i]
		}' "$1")
	CALLS_TOTAL=${out%%$'\n'*}
	printf '%s\n' "${out#*$'\n'}"
}

# ---- scenarios: prepare_X restores the state before the run; CMD is the run ----

prepare_record() {           # the old record and its run's history line, nothing else:
	[[ -d $REG ]] || mkdir -p "$REG"     # no temp file, no lock file, so that every run
	printf '%s' "$OLD" > "$REG/$J"       # creates them alike
	printf '%s\n' "$OLD_HISTORY" > "$REG/.$J.history"
	rm -f "$SNAP" "$REG/.$J.tmp" "$REG/.$J.lock" "$REG/.$J.run" "$REG/.$J.log" "$REG/.$J.faillog" \
		"$REG/.-audit" "$REG/.-audit.lock"
}
prepare_leftover() {         # the old record and a temp file a crash left behind
	prepare_record
	printf 'version=1\nstatus=RUN' > "$REG/.$J.tmp"
}
prepare_run() {              # the old record and both lock files, as a dispatched job has
	prepare_record
	: > "$REG/.$J.lock"
	: > "$REG/.$J.run"
}
prepare_notify() {           # a failed run nobody announced: health FAILED, notified absent
	[[ -d $REG ]] || mkdir -p "$REG"
	printf '%s' "$OLD_FAILED" > "$REG/$J"
	printf '%s\n%s\n' "$OLD_HISTORY" "$OLD_FAILED_HISTORY" > "$REG/.$J.history"
	rm -f "$T/calls" "$REG/.$J.tmp" "$REG/.$J.lock" "$REG/.$J.notify"
}
prepare_none() {             # no registry at all (nor its two parents)
	[[ ! -e $T/p && ! -e $SNAP ]] || rm -rf "$T/p" "$SNAP"
}

# scenario NAME: set PREPARE, CMD (array) and the program name PROG for NAME.
scenario() {
	export REG=$T/reg JOBREG_DIR=$T/reg
	case $1 in *-mkdir) export REG=$T/p/q/reg JOBREG_DIR=$T/p/q/reg ;; esac
	PREPARE=prepare_record
	case $1 in
	set) CMD=(jobreg-set -m new "$J" RUNNING) ;;
	set-leftover) CMD=(jobreg-set -m new "$J" RUNNING); PREPARE=prepare_leftover ;;
	set-mkdir) CMD=(jobreg-set "$J" RUNNING); PREPARE=prepare_none ;;
	set-done) CMD=(jobreg-set --exit 0 "$J" DONE); OLD=$OLD_RUNNING ;;
	clear) CMD=(jobreg-clear "$J") ;;
	pause) CMD=(jobreg-set --pause -m new "$J") ;;
	clear-run) CMD=(jobreg-clear "$J"); PREPARE=prepare_run ;;
	get) CMD=(jobreg-get "$J") ;;
	dispatch) CMD=(jobreg-dispatch -m new "$J" cp -- "$REG/$J" "$SNAP") ;;
	dispatch-clear) CMD=(jobreg-dispatch --clear "$J" cp -- "$REG/$J" "$SNAP") ;;
	dispatch-mkdir) CMD=(jobreg-dispatch "$J" cp -- "$REG/$J" "$SNAP"); PREPARE=prepare_none ;;
	dispatch-retry) CMD=(jobreg-dispatch --retries 1 --retry-delay 0 "$J" false) ;;
	waiter) CMD=(jobreg-dispatch --wait inf "$J" "${RUNS_CMD[@]}" "$T/runs") ;;
	follower | folded) CMD=(jobreg-dispatch --coalesce "$J" "${RUNS_CMD[@]}" "$T/runs") ;;
	replacer) CMD=(jobreg-dispatch --replace --kill-after 0.2 "$J" "${RUNS_CMD[@]}" "$T/runs") ;;
	canceller) CMD=(jobreg-set --cancel "$J") ;;
	notify) CMD=(jobreg-get --notify "echo \"\$JOBREG_EVENT\" >> '$T/calls'" "$J"); PREPARE=prepare_notify ;;
	esac
	PROG=${CMD[0]}
}

# plain_run TRACE: run the scenario once under a plain strace; NEW gets the record it
# leaves, RUN the RUNNING record a dispatched command saw (both masked by norm).
plain_run() {
	$PREPARE
	strace -o "$1" "${CMD[@]}" > /dev/null 2> "$ERR" || {
		cat "$ERR"
		echo "the plain run of ${CMD[*]} failed" >&2
		return 1
	}
	local s
	slurp s "$REG/$J"; norm NEW "$s"
	slurp s "$SNAP"; norm RUN "$s"
	$PREPARE
}

# strace_opts: set and clear do not fork, so seccomp-bpf (which needs -f) can speed
# fault injection up; a dispatcher is traced alone, so that its command is never hit.
# (Signal injection does not work with seccomp-bpf: crash points do without it.)
strace_opts() {
	case $PROG in
	jobreg-dispatch) SOPTS=() ;;
	*) SOPTS=("${SECCOMP[@]}") ;;
	esac
}

# ---- faults ----

# One fault case is "KIND<US>SYSCALL<US>WHEN<US>ERRNO<US>MSG_ERE<US>NOJOB" (US: the
# unit separator, since the regular expressions use every other character).
US=$'\x1f'

# fault_one CASE: inject ERRNO into the WHEN-th SYSCALL of the scenario's run and check
# the outcome KIND:
#   pre      before the record changes: 74 (77 for EACCES), the old record byte for
#            byte, no temp file, the command not run;
#   mkdir    making the registry: 73, no record;
#   dirsync  fsync of the directory after the change: 74 (whatever errno, SPEC §4),
#            the new state in place, the message says it may not be durable;
#   post     housekeeping after the change (sweeps, lock files): the new state is
#            in place; exit 0 with a warning, or 74/77 with a message that says so;
#   fin      dispatch, recording the end: 74/77, the command ran, the RUNNING record
#            of the run is whole and reads STALE, no temp file.
# KIND+rw: the read-write open of a lock to be taken exclusively: EACCES there is
# survived by the read-only fallback (SPEC §1), so it ends as the plain run did
# (exit 0, no message, the new state); other errnos are KIND.
# One line on stderr, "PROG: JOB: " (NOJOB: "PROG: "), matching MSG_ERE, with the
# path and strerror.
fault_one() {
	local kind sc when e msg nojob want st s n line what
	IFS=$US read -r kind sc when e msg nojob <<< "$1"
	what="$SCEN: $e into $sc #$when ($kind, /$msg/):"
	if [[ $kind == *+rw ]]; then
		kind=${kind%+rw}
		[[ $e == EACCES ]] && kind=rw
	fi
	CASES=$((CASES + 1))
	$PREPARE
	st=0
	strace "${SOPTS[@]}" -o /dev/null -e trace="$sc" -e inject="$sc:error=$e:when=$when" \
		"${CMD[@]}" > /dev/null 2> "$ERR" || st=$?
	strerror_of "$e"
	slurp s "$ERR"
	n=0
	while IFS= read -r line; do n=$((n + 1)); done <<< "${s%$'\n'}"
	[[ -z $s ]] && n=0
	line=${s%%$'\n'*}
	case $kind in
	pre | fin) want=74; [[ $e == EACCES ]] && want=77 ;;
	mkdir) want=73 ;;
	dirsync) want=74 ;;
	post | rw) want=0 ;;
	esac
	if [[ $kind == post && $st != 0 ]]; then
		[[ $st == 74 || $st == 77 ]] || note_fail "$what exit $st, want 0, 74 or 77"
		[[ $line =~ (in place|removed|cleared) ]] ||
			note_fail "$what exit $st, but the message does not say the change is in place: $line"
	elif [[ $st != "$want" ]]; then
		note_fail "$what exit $st, want $want; stderr: $s"
	fi
	if [[ $kind == rw ]]; then
		[[ -z $s ]] || note_fail "$what want no message: $s"
	elif [[ $kind != post || -n $s ]]; then
		((n == 1)) || note_fail "$what $n lines on stderr, want 1: $s"
		[[ $line =~ $msg ]] || note_fail "$what the message does not match /$msg/: $line"
		[[ $line == *"$ERRTEXT"* ]] || note_fail "$what the message lacks \"$ERRTEXT\": $line"
		[[ $line == *"$T/"* ]] || note_fail "$what the message lacks the path: $line"
		if [[ -z $nojob ]]; then
			[[ $line == "$PROG: $J: "* ]] || note_fail "$what the message does not start \"$PROG: $J: \": $line"
		else
			[[ $line == "$PROG: "* ]] || note_fail "$what the message does not start \"$PROG: \": $line"
		fi
	fi
	slurp s "$REG/$J"
	case $kind in
	pre)
		[[ $s == "$OLD" ]] || note_fail "$what the old record changed: ${s@Q}"
		[[ -e $SNAP ]] && note_fail "$what the command ran" ;;
	mkdir)
		[[ $s == "$ABSENT" ]] || note_fail "$what a record was written: ${s@Q}"
		[[ -e $SNAP ]] && note_fail "$what the command ran" ;;
	dirsync | post | rw)
		norm s "$s"
		[[ $s == "$NEW" ]] || note_fail "$what the new state is not in place: ${s@Q}" ;;
	fin)
		norm s "$s"
		[[ $s == "$RUN" ]] || note_fail "$what the run's RUNNING record is not whole: ${s@Q}"
		[[ -e $SNAP ]] || note_fail "$what the command did not run"
		status_of
		[[ $GOT == STALE ]] || note_fail "$what the job reads $GOT, want STALE" ;;
	esac
	temps
	[[ -z $TEMPS || $kind == mkdir ]] || note_fail "$what temp files left:$TEMPS"
	return 0
}

# faults SCENARIO: trace the scenario once, then for each line read from stdin,
#   KIND :: NAME_ERE :: LINE_ERE :: NTH :: MSG_ERE [:: nojob]
# find that call (see site) and inject each of $ERRNOS into it (see fault_one).
faults() {
	local line f where e cases=() before=$CASES
	SCEN=$1
	scenario "$1"
	strace_opts
	TRACE=$T/trace.$1
	plain_run "$TRACE" || { note_fail "$SCEN: plain run failed"; return; }
	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		f=()
		while [[ $line == *" :: "* ]]; do
			f+=("${line%% :: *}")
			line=${line#* :: }
		done
		f+=("$line")
		where=$(site "$TRACE" "${f[1]}" "${f[2]}" "${f[3]}")
		if [[ -z $where ]]; then
			note_fail "$SCEN: no call ${f[1]} #${f[3]} matching /${f[2]}/ in the plain trace"
			continue
		fi
		for e in $ERRNOS; do
			cases+=("${f[0]}$US${where% *}$US${where#* }$US$e$US${f[4]}$US${f[5]:-}")
		done
	done
	spread fault_one "${cases[@]}"
	echo "# fault cases: $SCEN: $((CASES - before))" >&3
}

OPENAT='^open(at)?$'
RENAME='^rename(at2?)?$'
UNLINK='^unlink(at)?$'
MKDIR='^mkdir(at)?$'
TMP='\.job1\.tmp'
AUDIT='"\.-audit"'
AUDIT_LOCK='\.-audit\.lock'

@test "faults: jobreg-set keeps the old record whole on every failed call of its write path" {
	untraced faults set <<-EOF
	pre :: $OPENAT :: "@REG@" :: 1 :: open registry :: nojob
	pre+rw :: $OPENAT :: "\.job1\.lock" :: 1 :: open .*/\.job1\.lock
	pre :: $OPENAT :: "\.job1\.lock" :: 2 :: cannot write to registry
	pre :: $OPENAT :: "job1", O_RDONLY :: 1 :: (open|read) .*/job1
	pre+rw :: $OPENAT :: $AUDIT_LOCK :: 1 :: open .*/$AUDIT_LOCK
	pre :: $OPENAT :: $AUDIT_LOCK :: 2 :: cannot write to registry
	pre :: $OPENAT :: $AUDIT :: 1 :: (open .*/\.-audit|cannot write to registry)
	pre :: $OPENAT :: $AUDIT :: 2 :: (open .*/\.-audit|cannot write to registry)
	pre :: ^write$ :: "time= :: 1 :: write .*/\.-audit
	pre :: ^fsync$ :: . :: 1 :: fsync .*/\.-audit
	pre :: $OPENAT :: $TMP :: 1 :: (cannot write to registry|open .*/$TMP)
	pre :: ^write$ :: "version=1 :: 1 :: write .*/$TMP
	pre :: ^fsync$ :: . :: 2 :: fsync .*/$TMP
	pre :: ^close$ :: ^rename :: <1 :: close .*/$TMP
	pre :: $RENAME :: $TMP :: 1 :: rename .*/$TMP
	dirsync :: ^fsync$ :: . :: 3 :: fsync .*new record is in place.*may not be durable
	EOF
}

@test "faults: jobreg-set into a missing registry: a failed mkdir is 73 and writes nothing" {
	untraced faults set-mkdir <<-EOF
	mkdir :: $MKDIR :: . :: 1 :: (mkdir|create registry) :: nojob
	mkdir :: $MKDIR :: . :: 2 :: (mkdir|create registry) :: nojob
	mkdir :: $MKDIR :: /reg" :: 2 :: (mkdir|create registry) :: nojob
	EOF
}

@test "faults: jobreg-set: a leftover temp file is removed only when the create meets it, and one that cannot be removed fails the write whole" {
	# SPEC §4: .JOB.tmp is unlinked only when its O_EXCL create met EEXIST
	scenario set
	$PREPARE
	traced -o "$T/trace" -e trace=unlink,unlinkat "${CMD[@]}" 2> "$ERR"
	! grep -q 'unlink' "$T/trace" || flunk "a write with no leftover unlinked: $(cat "$T/trace")"
	scenario set-leftover
	$PREPARE
	traced -o "$T/trace" -e trace=openat,unlink,unlinkat "${CMD[@]}" 2> "$ERR"
	grep -Eq 'openat\(.*"\.job1\.tmp", .*O_EXCL.* += -1 EEXIST' "$T/trace" || flunk "no EEXIST: $(cat "$T/trace")"
	grep -Eq 'unlinkat\(.*"\.job1\.tmp", 0\) += 0' "$T/trace" || flunk "the leftover was not removed"
	[ "$(field "$J" note)" = new ]
	temps
	[ -z "$TEMPS" ]
	# the leftover cannot be removed: 74, one line, the old record as it was
	$PREPARE
	local st=0 s
	strace -o /dev/null -e trace=unlink,unlinkat -e inject=unlink,unlinkat:error=EIO:when=1 \
		"${CMD[@]}" 2> "$ERR" || st=$?
	[ "$st" -eq 74 ]
	slurp s "$ERR"
	[[ $s == "jobreg-set: $J: remove leftover $REG/.$J.tmp: Input/output error"$'\n' ]] || flunk "said: $s"
	slurp s "$REG/$J"
	[[ $s == "$OLD" ]]
}

@test "faults: jobreg-clear keeps the record whole unless it is removed" {
	untraced faults clear <<-EOF
	pre :: $OPENAT :: "@REG@" :: 1 :: open registry :: nojob
	pre+rw :: $OPENAT :: "\.job1\.lock" :: 1 :: open .*/\.job1\.lock
	pre :: $OPENAT :: "\.job1\.lock" :: 2 :: cannot write to registry
	pre :: $OPENAT :: "job1", O_RDONLY :: 1 :: (open|read) .*/job1
	pre :: $OPENAT :: $AUDIT :: 2 :: (open .*/\.-audit|cannot write to registry)
	pre :: ^write$ :: "time= :: 1 :: write .*/\.-audit
	pre :: ^fsync$ :: . :: 1 :: fsync .*/\.-audit
	pre :: $UNLINK :: "job1" :: 1 :: (remove|unlink) .*/job1:
	dirsync :: ^fsync$ :: . :: 2 :: fsync .*(removed|in place).*may not be durable
	post :: $OPENAT :: "\.job1\.run" :: 1 :: open .*/\.job1\.run
	EOF
}

@test "faults: jobreg-clear: a failed removal of the lock files after the record is gone says the record is gone" {
	# SPEC §6: 74 means "the previous record is intact"; here it is not, so either the
	# clear succeeds (the lock files are housekeeping) or its message says so.  (A
	# run lock that is not there is not unlinked: the job of both lock files.)
	untraced faults clear-run <<-EOF
	post :: $UNLINK :: "\.job1\.run" :: 1 :: (remove|unlink) .*/\.job1\.run
	post :: $UNLINK :: "\.job1\.lock" :: 1 :: (remove|unlink) .*/\.job1\.lock
	EOF
}

@test "faults: no writer reads the registry directory: a write costs the same in a large registry" {
	# SPEC §4: the temp file has one name, so nothing lists the directory to find
	# leftovers (0.1 listed it before every write)
	local scen
	for scen in set set-leftover clear dispatch; do
		scenario "$scen"
		$PREPARE
		strace -f -o "$T/list.$scen" -e trace=getdents,getdents64 "${CMD[@]}" > /dev/null 2> "$ERR"
		! grep -q getdents "$T/list.$scen" || { echo "$scen read the directory"; return 1; }
	done
}

@test "faults: jobreg-dispatch: a failed call before RUNNING runs nothing; one after the run keeps its record whole" {
	untraced faults dispatch <<-EOF
	# claim: steps 1-4
	pre :: $OPENAT :: "@REG@" :: 1 :: open registry :: nojob
	pre+rw :: $OPENAT :: "\.job1\.lock" :: 1 :: open .*/\.job1\.lock
	pre :: $OPENAT :: "\.job1\.lock" :: 2 :: cannot write to registry
	pre :: $OPENAT :: "job1", O_RDONLY :: 1 :: (open|read) .*/job1
	pre+rw :: $OPENAT :: "\.job1\.run" :: 1 :: open .*/\.job1\.run
	pre :: $OPENAT :: "\.job1\.run" :: 2 :: cannot write to registry
	pre :: $OPENAT :: $TMP :: 1 :: (cannot write to registry|open .*/$TMP)
	pre :: ^write$ :: "version=1 :: 1 :: write .*/$TMP
	pre :: ^fsync$ :: . :: 1 :: fsync .*/$TMP
	pre :: ^close$ :: ^rename :: <1 :: close .*/$TMP
	pre :: $RENAME :: $TMP :: 1 :: rename .*/$TMP
	# end of the run: step 6
	fin+rw :: $OPENAT :: "\.job1\.lock" :: 3 :: open .*/\.job1\.lock
	fin :: $OPENAT :: "job1", O_RDONLY :: 2 :: (open|read) .*/job1
	fin :: $OPENAT :: $TMP :: 2 :: (cannot write to registry|open .*/$TMP)
	fin :: ^write$ :: "version=1 :: 2 :: write .*/$TMP
	fin :: ^fsync$ :: . :: 3 :: fsync .*/$TMP
	fin :: ^close$ :: ^rename :: <2 :: close .*/$TMP
	fin :: $RENAME :: $TMP :: 2 :: rename .*/$TMP
	dirsync :: ^fsync$ :: . :: 4 :: fsync .*new record is in place.*may not be durable
	# the run's line in the history, after its DONE record
	post :: $OPENAT :: "\.job1\.history" :: 2 :: (open|read) .*/\.job1\.history
	post :: $OPENAT :: $TMP :: 3 :: (cannot write to registry|open .*/$TMP)
	post :: ^write$ :: "run= :: 1 :: write .*/$TMP
	post :: ^fsync$ :: . :: 5 :: fsync .*/$TMP
	post :: $RENAME :: $TMP :: 3 :: rename .*/$TMP
	post :: ^fsync$ :: . :: 6 :: fsync .*history is in place.*may not be durable
	EOF
}

# claim_dirsync_one ERRNO: the documented case of SPEC §4 at dispatch's step 4: the
# directory fsync after RUNNING is in place fails; 74 and the message, then no
# RUNNING record may outlive the dispatcher, and no temp file is left.
claim_dirsync_one() {
	local e=$1 st s
	CASES=$((CASES + 1))
	$PREPARE
	st=0
	strace -o /dev/null -e trace=fsync -e inject="fsync:error=$e:when=2" "${CMD[@]}" 2> "$ERR" || st=$?
	slurp s "$ERR"
	[[ $st == 74 ]] || note_fail "$e into fsync #2: exit $st, want 74: $s"
	[[ $s =~ ^"jobreg-dispatch: $J: fsync ".*"in place".*"may not be durable"[^$'\n']*$'\n'$ ]] ||
		note_fail "$e into fsync #2: want one line saying the record is in place but may not be durable: $s"
	status_of
	[[ $GOT == STALE || $GOT == DONE ]] || note_fail "$e into fsync #2: the job reads $GOT, want STALE or DONE"
	temps
	[[ -z $TEMPS ]] || note_fail "$e into fsync #2: temp files left:$TEMPS"
}
claim_dirsync() {
	SCEN=dispatch
	scenario dispatch
	spread claim_dirsync_one $ERRNOS
	echo "# fault cases: dispatch: $CASES" >&3
}

@test "faults: jobreg-dispatch: a failed fsync of the directory after writing RUNNING" {
	untraced claim_dirsync
}

@test "faults: jobreg-dispatch --clear: a failed removal at the end keeps the run's record whole" {
	untraced faults dispatch-clear <<-EOF
	fin :: $UNLINK :: "job1" :: 1 :: (remove|unlink) .*/job1:
	dirsync :: ^fsync$ :: . :: 3 :: fsync .*(removed|in place).*may not be durable
	EOF
}

@test "faults: jobreg-dispatch into a missing registry: a failed mkdir is 73 and runs nothing" {
	untraced faults dispatch-mkdir <<-EOF
	mkdir :: $MKDIR :: . :: 1 :: (mkdir|create registry) :: nojob
	mkdir :: $MKDIR :: /reg" :: 2 :: (mkdir|create registry) :: nojob
	EOF
}

@test "faults: a failed write whose temp file cannot be removed either: 74, and the next writer sweeps it" {
	local st s n
	scenario set
	# the record's temp file is set's second write (its audit line the first);
	# the unlink that removes the temp file after the failed write: the first one
	# after it (a writer may also unlink a leftover before it creates the temp file)
	$PREPARE
	strace "${SECCOMP[@]}" -o "$T/discard" -e trace=write,unlinkat,unlink \
		-e inject=write:error=ENOSPC:when=2 "${CMD[@]}" 2> "$ERR" || true
	n=$(awk '{ sub(/^[0-9]+ +/, "") } /^unlink/ { n++; if (hit) { print n; exit } } /^write\(.*INJECTED/ { hit = 1 }' "$T/discard")
	[ -n "$n" ]
	$PREPARE
	st=0
	strace "${SECCOMP[@]}" -o /dev/null -e trace=write,unlinkat,unlink \
		-e inject=write:error=ENOSPC:when=2 -e inject=unlink,unlinkat:error=EIO:when="$n" \
		"${CMD[@]}" 2> "$ERR" || st=$?
	slurp s "$ERR"
	[ "$st" -eq 74 ]
	[[ ${s%%$'\n'*} == "jobreg-set: $J: write $REG/.$J.tmp: No space left on device" ]]
	slurp s "$REG/$J"
	[[ $s == "$OLD" ]]
	temps
	[ -n "$TEMPS" ]                        # it could not be removed ...
	[ "$(jobreg-get "$J")" = DONE ]        # ... and readers ignore it
	jobreg-set -m next "$J" PENDING
	temps
	[ -z "$TEMPS" ]                        # the next writer of the job removed it
	[ "$(field "$J" note)" = next ]
}

@test "faults: a failed fsync is never followed by a rename" {
	local cmd e n
	# set's first fsync is its temp file's; dispatch's 1st and 3rd are the RUNNING and
	# DONE records' temp files.
	for cmd in "set 1" "dispatch 1" "dispatch 3"; do
		scenario "${cmd% *}"
		for e in EIO ENOSPC; do
			$PREPARE
			n=${cmd#* }
			strace -o "$T/fsync.trace" -e trace=fsync,rename,renameat,renameat2 \
				-e inject="fsync:error=$e:when=$n" "${CMD[@]}" 2> "$ERR" || true
			# the injected fsync is there, and no rename after it
			grep -q "^fsync(.*(INJECTED)" "$T/fsync.trace"
			run awk '/^fsync\(.*\(INJECTED\)/ { bad = 1; next } bad && /^rename/ { print; found = 1 } END { exit found }' "$T/fsync.trace"
			[ "$status" -eq 0 ] || { echo "${CMD[*]}: rename after the failed fsync #$n: $output"; return 1; }
			slurp s "$REG/$J"
			if [ "$n" = 1 ]; then [[ $s == "$OLD" ]]; fi
			temps
			[ -z "$TEMPS" ]
		done
	done
}

# ---- ESTALE (SPEC §6) ----

# stale_site LINE: "NAME_ERE :: LINE_ERE :: NTH" of the scenario's plain trace: one
# ESTALE there is survived (exit 0, no message, the state of the plain run); ESTALE
# on every try is 74 after a few tries (more than one, fewer than ten), with one
# message naming the path, and the old record kept byte for byte.
stale_site() {
	local f=() line=$1 where sc when st s n
	while [[ $line == *" :: "* ]]; do f+=("${line%% :: *}"); line=${line#* :: }; done
	f+=("$line")
	where=$(site "$TRACE" "${f[0]}" "${f[1]}" "${f[2]}")
	[[ -n $where ]] || { note_fail "$SCEN: no call ${f[0]} #${f[2]} matching /${f[1]}/"; return; }
	sc=${where% *} when=${where#* }
	CASES=$((CASES + 2))
	$PREPARE
	st=0
	strace -o /dev/null -e trace="$sc" -e inject="$sc:error=ESTALE:when=$when" \
		"${CMD[@]}" > /dev/null 2> "$ERR" || st=$?
	slurp s "$ERR"
	[[ $st == 0 && -z $s ]] || note_fail "$SCEN: one ESTALE into $sc #$when: exit $st: $s"
	slurp s "$REG/$J"
	norm s "$s"
	[[ $s == "$NEW" ]] || note_fail "$SCEN: one ESTALE into $sc #$when: not the plain run's state: ${s@Q}"
	$PREPARE
	st=0
	strace -o "$T/stale" -e trace="$sc" -e inject="$sc:error=ESTALE:when=$when+" \
		"${CMD[@]}" > /dev/null 2> "$ERR" || st=$?
	slurp s "$ERR"
	n=$(grep -c 'ESTALE (Stale file handle) (INJECTED)' "$T/stale")
	[[ $st == 74 ]] || note_fail "$SCEN: ESTALE into every $sc from #$when: exit $st, want 74: $s"
	[[ $s =~ ^"$PROG: "[^$'\n']*"$T/"[^$'\n']*": Stale file handle"$'\n'$ ]] ||
		note_fail "$SCEN: ESTALE into every $sc from #$when: want one line with the path: $s"
	((n > 1 && n < 10)) || note_fail "$SCEN: ESTALE into every $sc from #$when: $n tries"
	STALE_TRIES_SEEN+=" $n"
	slurp s "$REG/$J"
	[[ $s == "$OLD" ]] || note_fail "$SCEN: ESTALE into every $sc from #$when: the old record changed: ${s@Q}"
	temps
	[[ -z $TEMPS ]] || note_fail "$SCEN: ESTALE into every $sc from #$when: temp files left:$TEMPS"
}

# stale SCENARIO: stale_site for each line read from stdin.
stale() {
	local line
	SCEN=$1
	scenario "$1"
	TRACE=$T/trace.$1
	plain_run "$TRACE" || { note_fail "$SCEN: plain run failed"; return; }
	while IFS= read -r line; do
		[[ -z $line ]] || stale_site "$line"
	done
	echo "# ESTALE: $SCEN: tries before 74:$STALE_TRIES_SEEN" >&3
	STALE_TRIES_SEEN=
}

@test "faults: a record operation that meets ESTALE once succeeds; ESTALE that persists is 74" {
	untraced stale get <<-EOF
	$OPENAT :: "job1", O_RDONLY :: 1
	^read$ :: ^read\\([0-9]+, "version :: 1
	EOF
	untraced stale set <<-EOF
	$OPENAT :: "\.job1\.lock" :: 1
	$OPENAT :: "job1", O_RDONLY :: 1
	$OPENAT :: $TMP :: 1
	$RENAME :: $TMP :: 1
	EOF
	untraced stale clear <<-EOF
	$OPENAT :: "job1", O_RDONLY :: 1
	$UNLINK :: "job1" :: 1
	EOF
	untraced stale dispatch <<-EOF
	$OPENAT :: "job1", O_RDONLY :: 1
	$OPENAT :: "\.job1\.run" :: 1
	$RENAME :: $TMP :: 1
	EOF
}

# stale_reads SYSCALL WHEN: jobreg-get job1, -l job1, -a and -l -a, with ESTALE injected
# into SYSCALL on job1's record only (strace -P) at WHEN; each output into $T/out.*.
stale_reads() {
	local sc=$1 when=$2 k path=$REG/job1
	local -a args
	# strace -P matches an openat by its name argument, the other calls by the file
	[[ $sc == openat ]] && path=job1
	for k in plain long all longall; do
		case $k in
		plain) args=(job1) ;; long) args=(-l job1) ;; all) args=(-a) ;; longall) args=(-l -a) ;;
		esac
		st=0
		strace -f -o /dev/null -P "$path" -e trace="$sc" -e inject="$sc:error=ESTALE:when=$when" \
			jobreg-get "${args[@]}" > "$T/out.$k" 2> "$T/err.$k" || st=$?
		echo "$st" > "$T/rc.$k"
	done
}

@test "faults: a record read that meets ESTALE is tried again, and one that keeps failing is UNREADABLE (74), never CORRUPT" {
	write_record job1 version=1 status=DONE since=2026-01-02T03:04:05Z exit=0
	write_record job2 version=1 status=PENDING since=2026-01-02T03:04:05Z
	local k sc
	for k in plain long all longall; do
		case $k in
		plain) jobreg-get job1 ;; long) jobreg-get -l job1 ;; all) jobreg-get -a ;; longall) jobreg-get -l -a ;;
		esac > "$T/want.$k"
	done
	for sc in read newfstatat openat; do
		# once, and three times in a row: both within the retries
		for when in 1 1..3; do
			stale_reads "$sc" "$when"
			for k in plain long all longall; do
				[[ $(<"$T/rc.$k") == 0 ]] || flunk "$sc ESTALE at $when: get $k exited $(<"$T/rc.$k"): $(<"$T/err.$k")"
				cmp "$T/want.$k" "$T/out.$k" || flunk "$sc ESTALE at $when: get $k printed $(<"$T/out.$k")"
			done
		done
		# every time: 74, UNREADABLE where the job's status goes, the other job as it is
		stale_reads "$sc" 1+
		for k in plain long all longall; do
			[[ $(<"$T/rc.$k") == 74 ]] || flunk "$sc ESTALE always: get $k exited $(<"$T/rc.$k")"
			grep -q 'Stale file handle' "$T/err.$k" || flunk "$sc ESTALE always: get $k said $(<"$T/err.$k")"
			! grep -q CORRUPT "$T/out.$k" || flunk "$sc ESTALE always: get $k printed CORRUPT"
		done
		[[ $(<"$T/out.plain") == UNREADABLE ]] || flunk "$sc: get job1 printed $(<"$T/out.plain")"
		[[ $(cut -f1,2 "$T/out.long") == $'job1\tUNREADABLE' ]] || flunk "$sc: get -l printed $(<"$T/out.long")"
		[[ $(<"$T/out.all") == $'job1 UNREADABLE\njob2 PENDING' ]] || flunk "$sc: get -a printed $(<"$T/out.all")"
		[[ $(cut -f1,2 "$T/out.longall") == $'job1\tUNREADABLE\njob2\tPENDING' ]] ||
			flunk "$sc: get -l -a printed $(<"$T/out.longall")"
	done
}

@test "faults: get -a calls a record that became a FIFO or a directory after the listing UNREADABLE (77), without blocking" {
	local kind
	for kind in fifo dir; do
		rm -rf "$REG"
		write_record job1 version=1 status=DONE since=2026-01-02T03:04:05Z exit=0
		write_record job2 version=1 status=PENDING since=2026-01-02T03:04:05Z
		# the listing returns, then stalls for 3 s while job1 is replaced (a
		# window that a loaded machine's look at /proc does not miss)
		st=0
		timeout 20 strace -f -o /dev/null -e trace=getdents64 -e inject=getdents64:delay_exit=3000000:when=1 \
			jobreg-get -a > "$T/out" 2> "$T/err" & pid=$!
		poll_until holds_open "$pid" "$(cd "$REG" && pwd -P)"   # (listing it)
		rm "$REG/job1"
		if [[ $kind == fifo ]]; then mkfifo "$REG/job1"; else mkdir "$REG/job1"; fi
		wait "$pid" || st=$?
		[[ $st == 77 ]] || flunk "$kind: exit $st: $(<"$T/err")"
		[[ $(<"$T/out") == $'job1 UNREADABLE\njob2 PENDING' ]] || flunk "$kind: printed $(<"$T/out")"
		grep -q "not a regular file: $REG/job1" "$T/err" || flunk "$kind: said $(<"$T/err")"
	done
}

# ---- crash points ----

# after_crash WHAT: the checks after a run was killed (or ended): the record is the old
# one or the new one, whole; jobreg-get does not say CORRUPT; the next writer leaves
# no temp file.  A dispatched job must not read RUNNING once its command is gone, and
# the next dispatch must run.
after_crash() {
	local what=$1 s n i ex
	if [[ $PROG == jobreg-dispatch ]]; then
		# the command (cp) may outlive a killed dispatcher for a moment
		for ((i = 0; i < 200; i++)); do
			status_of
			[[ $GOT == RUNNING ]] || break
			sleep 0.05
		done
	else
		status_of
	fi
	slurp s "$REG/$J"
	norm n "$s"
	case $SCEN in
	set)
		[[ $s == "$OLD" || $n == "$NEW" ]] || note_fail "$what the record is neither the old nor the new one: ${s@Q}"
		[[ $GOT == DONE || $GOT == RUNNING ]] || note_fail "$what the job reads $GOT" ;;
	set-done)
		[[ $s == "$OLD" || $n == "$NEW" ]] || note_fail "$what the record is neither the old nor the new one: ${s@Q}"
		[[ $GOT == DONE || $GOT == STALE ]] || note_fail "$what the job reads $GOT"
		history_right "$what" 0 ;;
	clear)
		[[ $s == "$OLD" || $s == "$ABSENT" ]] || note_fail "$what the record is neither the old one nor gone: ${s@Q}"
		[[ $GOT == DONE || $GOT == PENDING ]] || note_fail "$what the job reads $GOT" ;;
	pause)
		[[ $s == "$OLD" || $n == "$NEW" ]] || note_fail "$what the record is neither the old nor the new one: ${s@Q}"
		[[ $GOT == DONE ]] || note_fail "$what the job reads $GOT" ;;
	dispatch)
		[[ $s == "$OLD" || $n == "$RUN" || $n == "$NEW" ]] ||
			note_fail "$what the record is neither the old one, the run's RUNNING one nor its DONE one: ${s@Q}"
		[[ $GOT == DONE || $GOT == STALE ]] || note_fail "$what the job reads $GOT once its command is gone" ;;
	esac
	# SPEC §3c: a change by hand that landed has its audit line, written whole (a
	# line whose change did not land is allowed: the crash came between the two).
	local log
	if [[ $PROG != jobreg-dispatch ]]; then
		slurp log "$REG/.-audit"
		[[ $s == "$OLD" || $log == *" action=${SCEN%-done} job=$J"* ]] ||
			note_fail "$what the change landed without its audit line: ${log@Q}"
		[[ $log == "$ABSENT" || -z $log || $log == *$'\n' ]] || note_fail "$what a torn audit line: ${log@Q}"
	fi
	# Killed before it changed anything (the old record, no temp file, the command never
	# started): the registry is as prepared, from which the plain run is known to work.
	temps
	[[ $s == "$OLD" && -z $TEMPS && ! -e $SNAP ]] && return 0
	if [[ $PROG == jobreg-dispatch ]]; then
		history_right "$what" 0
		jobreg-dispatch -q "$J" true > /dev/null 2> "$ERR" || note_fail "$what the next dispatch failed: $(<"$ERR")"
		status_of
		field_into ex "$J" exit
		[[ $GOT == DONE && $ex == 0 ]] || note_fail "$what after the next dispatch the job reads $GOT"
		history_right "$what after the next dispatch:" 1
	else
		jobreg-set "$J" PENDING 2> "$ERR" || note_fail "$what the next set failed: $(<"$ERR")"
	fi
	temps
	[[ -z $TEMPS ]] || note_fail "$what the next writer left temp files:$TEMPS"
}

# history_right WHAT WHOLE: the crash rule of SPEC §3a, in the dispatch scenario (the
# old record is run 0, every run's command succeeds): every run is in the history at
# most once, with the outcome its record gives it (the record's own run, when DONE, is
# OK; when RUNNING, not there at all).  With WHOLE (after a run that ended normally),
# no run is missing: runs 0 to the record's, each once, the last OK, the others OK or
# LOST (the crash left it STALE, and the next dispatch took it over).
history_right() {
	local what=$1 whole=$2 runs status l k out cancelled ncancelled=0 was_cancelled
	local -A seen=()
	field_into runs "$J" runs
	field_into status "$J" status
	field_into was_cancelled "$J" cancelled
	field_into cancelled "$J" cancelled_runs
	runs=${runs:-0}
	# run K's outcome in seen[K]; a second line for K is a run recorded twice
	if [[ -e $REG/.$J.history ]]; then
		while IFS= read -r l || [[ -n $l ]]; do
			[[ $l =~ ^run=([0-9]+)\ outcome=([A-Z]+) ]] || continue
			k=${BASH_REMATCH[1]}
			[[ -z ${seen[$k]:-} ]] || note_fail "$what run $k is in the history twice"
			seen[$k]=${BASH_REMATCH[2]}
			[[ ${BASH_REMATCH[2]} == CANCELLED ]] && ncancelled=$((ncancelled + 1))
		done < "$REG/.$J.history"
	fi
	out=${seen[$runs]:-}
	case $status in
	RUNNING) [[ -z $out ]] || note_fail "$what the running run $runs is in the history: $runs:$out" ;;
	DONE)
		if [[ $was_cancelled == 1 ]]; then
			[[ -z $out || $out == CANCELLED ]] || note_fail "$what run $runs is DONE cancelled but the history says $runs:$out"
		else
			[[ -z $out || $out == OK ]] || note_fail "$what run $runs is DONE with exit 0 but the history says $runs:$out"
		fi ;;
	esac
	((whole)) || return 0
	# (a run is cancelled only where a scenario cancels one: then once in each)
	((${cancelled:-0} == ncancelled)) ||
		note_fail "$what cancelled_runs=${cancelled:-0}, but $ncancelled CANCELLED in the history"
	for ((k = 0; k <= runs; k++)); do
		out=${seen[$k]:-}
		if ((k == runs)); then
			[[ $out == OK ]] || note_fail "$what the last run $k is not OK in the history: ${out:-missing}"
		else
			[[ $out == @(OK|LOST|CANCELLED) ]] || note_fail "$what run $k of $runs is ${out:-missing} in the history"
		fi
	done
}

# crash_one "SYSCALL WHEN": kill the run at that call, then check (after_crash).
crash_one() {
	local sc=${1% *} when=${1#* } st
	CASES=$((CASES + 1))
	$PREPARE
	st=0
	strace -o /dev/null -e trace="$sc" -e inject="$sc:signal=SIGKILL:when=$when" \
		"${CMD[@]}" > /dev/null 2>&1 || st=$?
	((st == 137)) && KILLED=$((KILLED + 1))
	after_crash "$SCEN: killed at $sc #$when:"
}

# crash SCENARIO: kill the scenario's run with SIGKILL at each of its system calls in
# turn (a dispatcher's command is not traced, so it is never hit).
crash() {
	local calls
	SCEN=$1
	scenario "$1"
	plain_run "$T/trace.$1" || { note_fail "$SCEN: plain run failed"; return; }
	every_call "$T/trace.$1" > "$T/calls.$1"
	mapfile -t calls < "$T/calls.$1"
	KILLED=0
	spread crash_one "${calls[@]}"
	# Every run must have been killed (the last call is exit_group), but for a few
	# calls whose number varies from run to run: a dispatcher's wait loop makes one
	# wait4 and one rt_sigtimedwait fewer when its command is done before it looks.
	((KILLED >= ${#calls[@]} - 3)) || note_fail "$SCEN: only $KILLED of ${#calls[@]} runs were killed"
	if ((${#calls[@]} == CALLS_TOTAL)); then
		echo "# crash points: ${CMD[0]}: $KILLED killed of ${#calls[@]} (every system call of the run)" >&3
	else
		echo "# crash points: ${CMD[0]}: $KILLED killed of ${#calls[@]} (of its $CALLS_TOTAL system calls: start-up sampled)" >&3
	fi
}

@test "crash points: jobreg-set killed at every system call leaves the old record or the new one" {
	untraced crash set
}

@test "crash points: jobreg-set --exit 0 DONE, ending a run, killed at every system call: the run in the history at most once, with its record's outcome" {
	untraced crash set-done
}

@test "crash points: jobreg-set --pause killed at every system call: a pause that landed is on the audit log" {
	untraced crash pause
}

@test "crash points: jobreg-clear killed at every system call leaves the old record or none" {
	untraced crash clear
}

@test "crash points: jobreg-dispatch killed at every system call: never torn, never RUNNING forever, the next dispatch runs" {
	untraced crash dispatch
}

# retry_history WHAT: after a --retries run of a failing command was killed and the
# next dispatch ran (true): the crash rule of SPEC §3a with attempts.  Runs 0 (the old
# record's) to the record's last each have exactly one line, none missing; the last
# is OK, the ones between FAILED or LOST; the record's failures and lost count them.
retry_history() {
	local what=$1 runs failures lost l k out bad=0 nlost=0
	local -A seen=()
	field_into runs "$J" runs
	field_into failures "$J" failures
	field_into lost "$J" lost
	while IFS= read -r l || [[ -n $l ]]; do
		[[ $l =~ ^run=([0-9]+)\ outcome=([A-Z]+) ]] || continue
		k=${BASH_REMATCH[1]}
		[[ -z ${seen[$k]:-} ]] || note_fail "$what run $k is in the history twice"
		seen[$k]=${BASH_REMATCH[2]}
	done < "$REG/.$J.history"
	for ((k = 0; k <= runs; k++)); do
		out=${seen[$k]:-missing}
		if ((k == 0 || k == runs)); then
			[[ $out == OK ]] || note_fail "$what run $k is $out in the history, want OK"
		elif [[ $out == FAILED || $out == LOST ]]; then
			bad=$((bad + 1))
			[[ $out == LOST ]] && nlost=$((nlost + 1))
		else
			note_fail "$what run $k of $runs is $out in the history, want FAILED or LOST"
		fi
	done
	((${failures:-0} == bad && ${lost:-0} == nlost)) ||
		note_fail "$what the record counts failures=${failures:-0} lost=${lost:-0}; the history $bad and $nlost"
}

# retry_crash_one "SYSCALL WHEN": kill `dispatch --retries 1 ... false` at that call,
# then dispatch again (true) once the command is gone, and check the history.
retry_crash_one() {
	local i
	CASES=$((CASES + 1))
	$PREPARE
	strace -o /dev/null -e trace="${1% *}" -e inject="${1% *}:signal=SIGKILL:when=${1#* }" \
		"${CMD[@]}" > /dev/null 2>&1 || true
	for ((i = 0; i < 200; i++)); do
		status_of
		[[ $GOT == RUNNING ]] || break
		sleep 0.05
	done
	jobreg-dispatch -q "$J" true 2> "$ERR" || note_fail "killed at $1: the next dispatch failed: $(<"$ERR")"
	retry_history "killed at $1:"
}

# retry_crash: a --retries run of a failing command killed at each of its system
# calls in turn (its records, the one between the attempts, the attempts' history
# lines, and everything between).
retry_crash() {
	local calls
	SCEN=dispatch-retry
	scenario "$SCEN"
	$PREPARE
	strace -o "$T/trace.retry" "${CMD[@]}" > /dev/null 2>&1
	jobreg-dispatch -q "$J" true
	retry_history "a plain run, and the next:"
	every_call "$T/trace.retry" > "$T/calls.retry"
	mapfile -t calls < "$T/calls.retry"
	spread retry_crash_one "${calls[@]}"
	echo "# crash points: ${CMD[0]} --retries: $CASES cases (of its $CALLS_TOTAL system calls)" >&3
}

@test "crash points: jobreg-dispatch --retries killed at every system call: every attempt is in the history once, none lost" {
	untraced retry_crash
}

# ---- crash points of a notifier (SPEC §5c): claim, CMD, confirm ----

# notify_crash_one "SYSCALL WHEN": kill the sweep at that call, then sweep again
# untraced.  The change is never lost (announced, and notified=FAILED, after the
# second sweep), and announced twice only when the killed sweep's CMD ran and its
# confirm was not written.
notify_crash_one() {
	local before after notified=0 rec
	CASES=$((CASES + 1))
	$PREPARE
	strace -o /dev/null -e trace="${1% *}" -e inject="${1% *}:signal=SIGKILL:when=${1#* }" \
		"${CMD[@]}" > /dev/null 2>&1 || true
	# (a CMD the kill left going is an echo: done in a moment)
	sleep 0.05
	status_of
	[[ $GOT == DONE ]] || note_fail "killed at $1: the record reads $GOT"
	before=0 after=0
	[[ -e $T/calls ]] && before=$(wc -l < "$T/calls")
	slurp rec "$REG/$J"
	[[ $rec == *$'\nnotified=FAILED\n'* ]] && notified=1
	jobreg-get --notify "echo \"\$JOBREG_EVENT\" >> '$T/calls'" "$J" 2> "$ERR" ||
		note_fail "killed at $1: the next sweep failed: $(<"$ERR")"
	[[ -e $T/calls ]] && after=$(wc -l < "$T/calls")
	slurp rec "$REG/$J"
	[[ $rec == *$'\nnotified=FAILED\n'* ]] || note_fail "killed at $1: not notified=FAILED after the next sweep"
	[[ $rec == *$'\nx-future=kept by writers\n'* ]] || note_fail "killed at $1: an unknown key was lost"
	((after == 2)) && KILLED=$((KILLED + 1))   # (counted as twice delivered)
	if ((after == 0)); then
		note_fail "killed at $1: the change was never announced"
	elif ((after > 1 && (before != 1 || notified))); then
		note_fail "killed at $1: announced $after times (the killed sweep's CMD ran $before, notified=$notified)"
	fi
}

notify_crash() {
	local calls
	SCEN=notify
	scenario "$SCEN"
	plain_run "$T/trace.notify" || { note_fail "notify: plain run failed"; return; }
	every_call "$T/trace.notify" > "$T/calls.notify"
	mapfile -t calls < "$T/calls.notify"
	spread notify_crash_one "${calls[@]}"
	# the window between CMD's end and the confirm's rename is there, and hit
	((KILLED > 0)) || note_fail "notify: no case delivered twice: the kills missed the window after CMD"
	echo "# crash points: jobreg-get --notify: $CASES cases (of its $CALLS_TOTAL system calls), $KILLED delivered twice" >&3
}

@test "crash points: a notifier killed at every system call of claim, CMD and confirm never loses a change, and delivers twice only when killed between CMD and its confirm" {
	untraced notify_crash
}

# ---- crash points of the line (SPEC §5a): a call killed beside a live run ----
#
# Each case: the old record, a run of $J going on (an untraced dispatcher whose command
# waits for $T/release), then the traced call, then an untraced one behind it; then the
# live run is let go.  The traced call is killed at one of its system calls; the calls
# that only read /proc (looking for holders of the run lock) and those of its waits
# (woken by inotify, as often as the others write) are sampled, 12 a stretch: their
# numbers shift from run to run anyway.

# A command that notes its run's number in $T/runs.
RUNS_CMD=(sh -c 'echo "$JOBREG_RUN" >>"$0"')

# line_calls TRACE: "NAME WHEN" for the calls of TRACE to kill at (see above); sets
# CALLS_TOTAL.
line_calls() {
	local out
	out=$(awk '
		function flush(   i, step, last) {
			step = (nb > 12) ? nb / 12 : 1
			for (i = 1; i <= nb; i += step) { print blk[int(i)]; last = int(i) }
			if (nb && last < nb) print blk[nb]
			nb = 0
		}
		match($0, /^[a-z0-9_]+\(/) {
			sc = substr($0, 1, RLENGTH - 1); count[sc]++; n++
			if (NR == 1) next
			c = sc " " count[sc]
			if (!in_blk && (/^openat\(AT_FDCWD, "\/proc", / || /^inotify_init1\(/) && match($0, /= [0-9]+$/)) {
				in_blk = 1; fd = substr($0, RSTART + 2)
			}
			if (in_blk) {
				blk[++nb] = c
				if ($0 ~ ("^close\\(" fd "\\)")) { in_blk = 0; flush() }
			} else print c
		}
		END { flush(); print "total " n }' "$1")
	CALLS_TOTAL=${out##*total }
	printf '%s\n' "${out%$'\n'total *}"
}

# live_start: a dispatcher of $J in the background (its pid in LIVE) whose command notes
# its run and waits for $T/release (at most 10 s); returns once the command runs.
live_start() {
	local i
	rm -f "$T/started" "$T/release"
	# shellcheck disable=SC2016  # expanded by the command
	jobreg-dispatch -q "$J" sh -c 'echo "$JOBREG_RUN" >>"$0"; : >"$1"; i=0
		while [ ! -e "$2" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done' \
		"$T/runs" "$T/started" "$T/release" > /dev/null 2> "$T/live.err" 3>&- &
	LIVE=$!
	for ((i = 0; i < 500; i++)); do
		[[ -e $T/started ]] && return 0
		nap 0.02
	done
	note_fail "$SCEN: the live run did not start: $(<"$T/live.err")"
	return 1
}

# live_state: what a stuck case looks like: the job's state, the registry's files, the
# live dispatcher's messages.
live_state() {
	local s
	slurp s "$REG/$J"
	printf '%s; files:' "$(jobreg-get "$J" 2>&1)"
	printf ' %s' $(cd "$REG" && ls -A)
	printf '; record: %s; live: %s' "${s@Q}" "$(<"$T/live.err")"
}

# gone_within SECONDS PID: wait for PID (a child of this shell) to end; its status in
# ST.  Not ended in time: kill it, ST=stuck.
gone_within() {
	local i
	for ((i = 0; i < $1 * 50; i++)); do
		kill -0 "$2" 2> /dev/null || break
		nap 0.02
	done
	if kill -0 "$2" 2> /dev/null; then
		kill -KILL "$2" 2> /dev/null
		wait "$2" 2> /dev/null
		ST=stuck
	else
		ST=0
		wait "$2" || ST=$?
	fi
}

# next_moves: wait (at most 5 s) until the record's wait_next passes $1 or PID $2 ended.
next_moves() {
	local i next
	for ((i = 0; i < 250; i++)); do
		field_into next "$J" wait_next
		((${next:-1} > $1)) && return 0
		kill -0 "$2" 2> /dev/null || return 0
		nap 0.02
	done
}

# record_whole WHAT: the record is whole now (version first, a final newline) and
# jobreg-get reads a status from it.
record_whole() {
	local s
	slurp s "$REG/$J"
	[[ $s == "$ABSENT" || ($s == version=1$'\n'* && $s == *$'\n') ]] ||
		note_fail "$1 the record is torn: ${s@Q}"
	status_of
	[[ $GOT == @(PENDING|RUNNING|DONE|STALE) ]] || note_fail "$1 the job reads $GOT"
}

# places_free WHAT: no place in line nor the coalescing lock is held by anybody (a
# dead place may stay below wait_next: it is not live, and the next turn sweeps it).
places_free() {
	local f
	for f in "$REG/.$J.wait."* "$REG/.$J.coalesce"; do
		[[ -e $f ]] || continue
		flock -n "$f" true || note_fail "$1 ${f##*/} is still locked"
	done
}

# runs_once WHAT: every run number in $T/runs (one line a command run) is there once.
runs_once() {
	local dup
	dup=$(sort "$T/runs" | uniq -d)
	[[ -z $dup ]] || note_fail "$1 run numbers given to two commands: $dup"
}

# line_case [STRACE_OPTION...]: one case of $SCEN with the traced call run under strace
# with these options; then the checks.  The traced call is:
#   waiter     dispatch --wait inf, with a second waiter started behind it;
#   replacer   dispatch --replace --kill-after 0.2, with a waiter behind it;
#   follower   dispatch --coalesce, with a second --coalesce started after it;
#   folded     dispatch --coalesce while an untraced follower waits already.
line_case() {
	local what="$SCEN: killed at ${KILL_AT:-nothing}:" next0 other tst ost folded s coal i ex
	CASES=$((CASES + 1))
	$PREPARE
	rm -f "$T/runs" "$T/traced.err" "$T/other.err"
	: > "$T/runs"
	live_start || return 0
	if [[ $SCEN == folded ]]; then
		jobreg-dispatch -q --coalesce "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$T/other.err" 3>&- &
		other=$!
		next_moves 1 "$other"
	fi
	field_into next0 "$J" wait_next
	strace "$@" "${CMD[@]}" > /dev/null 2> "$T/traced.err" 3>&- &
	local traced=$!
	if [[ $SCEN == folded ]]; then
		gone_within 10 "$traced"
		tst=$ST
	else
		next_moves "${next0:-1}" "$traced"
		field_into next0 "$J" wait_next
		case $SCEN in
		waiter | replacer) jobreg-dispatch --wait inf "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$T/other.err" 3>&- & ;;
		follower) jobreg-dispatch --coalesce "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$T/other.err" 3>&- & ;;
		esac
		other=$!
		next_moves "${next0:-1}" "$other"
	fi
	record_whole "$what"
	: > "$T/release"
	gone_within 10 "$LIVE"
	[[ $ST == stuck ]] && note_fail "$what the live run did not end: $(live_state)"
	# the live run was cancelled (by the replacer's request) or ended by itself
	if [[ $SCEN == replacer ]]; then
		[[ $(sed -n 's/^run=1 outcome=//p' "$REG/.$J.history") == @(OK|CANCELLED)\ * ]] ||
			note_fail "$what the live run is not OK nor CANCELLED in the history: $(<"$REG/.$J.history")"
	fi
	if [[ $SCEN != folded ]]; then
		gone_within 10 "$traced"
		tst=$ST
	fi
	[[ $tst == 137 ]] && KILLED=$((KILLED + 1))
	[[ $tst == @(0|137) ]] || note_fail "$what the traced call ended $tst: $(<"$T/traced.err")"
	# the one behind it goes on within a few seconds, and runs (or is folded)
	gone_within 5 "$other"
	ost=$ST
	[[ $ost == 0 ]] || note_fail "$what the call behind it ended $ost: $(<"$T/other.err")"
	# the commands of killed dispatchers end too
	for ((i = 0; i < 200; i++)); do
		status_of
		[[ $GOT == RUNNING ]] || break
		nap 0.05
	done
	record_whole "$what"
	# coalesced counts each folded call once: the ones that said so, but a killed
	# folded call may have counted itself or not
	folded=0
	grep -q 'coalesced into the waiting run' "$T/other.err" && folded=1
	[[ $SCEN == folded && $tst == 0 ]] && folded=1
	field_into coal "$J" coalesced
	coal=${coal:-0}
	if [[ $SCEN == folded && $tst == 137 ]]; then
		((coal <= 1)) || note_fail "$what coalesced=$coal after one folded call"
	elif ((coal != folded)); then
		note_fail "$what coalesced=$coal, but $folded calls were folded"
	fi
	runs_once "$what"
	places_free "$what"
	# the next call runs: plain, or --coalesce behind a live run, which must wait as
	# the follower (nothing left of a dead one), not fold
	if [[ $SCEN == @(waiter|replacer) ]]; then
		jobreg-dispatch -q "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$ERR" ||
			note_fail "$what the next dispatch failed: $(<"$ERR")"
	elif live_start; then
		field_into next0 "$J" wait_next
		jobreg-dispatch --coalesce "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$ERR" 3>&- &
		other=$!
		next_moves "${next0:-1}" "$other"
		: > "$T/release"
		gone_within 10 "$LIVE"
		gone_within 5 "$other"
		[[ $ST == 0 && ! -s $ERR ]] || note_fail "$what the next --coalesce ended $ST: $(<"$ERR")"
		field_into s "$J" coalesced
		[[ ${s:-0} == "$coal" ]] || note_fail "$what the next --coalesce was folded (coalesced=$s)"
	fi
	status_of
	field_into ex "$J" exit
	[[ $GOT == DONE && $ex == 0 ]] || note_fail "$what after the next dispatch the job reads $GOT"
	history_right "$what after the next dispatch:" 1
	runs_once "$what after the next dispatch:"
	places_free "$what after the next dispatch:"
	temps
	[[ -z $TEMPS ]] || note_fail "$what temp files left:$TEMPS"
}

# cancel_case [STRACE_OPTION...]: `jobreg-set --cancel` of a live dispatched run, under
# strace with these options; then: the run went on (no request written) or was
# cancelled (DONE cancelled=1, one CANCELLED line, cancelled_runs=1), the record is
# never torn, and the next dispatch runs.
cancel_case() {
	local what="$SCEN: killed at ${KILL_AT:-nothing}:" tst i c cr l
	CASES=$((CASES + 1))
	$PREPARE
	: > "$T/runs"
	live_start || return 0
	strace "$@" "${CMD[@]}" > /dev/null 2> "$T/traced.err" 3>&- &
	gone_within 10 "$!"
	tst=$ST
	[[ $tst == 137 ]] && KILLED=$((KILLED + 1))
	[[ $tst == @(0|137) ]] || note_fail "$what the canceller ended $tst: $(<"$T/traced.err")"
	record_whole "$what"
	# a request written is taken up within a second: give the run 2 s to end by
	# it; with none written (the canceller died before its rename) the run goes on
	field_into cr "$J" cancel_run
	for ((i = 0; i < 100 && ${#cr} > 0; i++)); do
		kill -0 "$LIVE" 2> /dev/null || break
		nap 0.02
	done
	: > "$T/release"
	gone_within 10 "$LIVE"
	[[ $ST == stuck ]] && note_fail "$what the live run did not end: $(live_state)"
	record_whole "$what"
	field_into c "$J" cancelled
	field_into cr "$J" cancelled_runs
	l=$(grep -c '^run=1 ' "$REG/.$J.history")
	echo "${c:-0}" >> "$T/outcomes"
	if [[ $c == 1 ]]; then
		[[ $cr == 1 && $l == 1 ]] && grep -q '^run=1 outcome=CANCELLED ' "$REG/.$J.history" ||
			note_fail "$what cancelled, but cancelled_runs=$cr and the history: $(<"$REG/.$J.history")"
	else
		[[ $tst == 137 ]] || note_fail "$what the canceller ended $tst, but the run was not cancelled"
		[[ -z $cr && $l == 1 ]] && grep -q '^run=1 outcome=OK ' "$REG/.$J.history" ||
			note_fail "$what not cancelled, but cancelled_runs=$cr and the history: $(<"$REG/.$J.history")"
	fi
	status_of
	[[ $GOT == DONE ]] || note_fail "$what the job reads $GOT once the run ended"
	jobreg-dispatch -q "$J" "${RUNS_CMD[@]}" "$T/runs" > /dev/null 2> "$ERR" ||
		note_fail "$what the next dispatch failed: $(<"$ERR")"
	field_into c "$J" exit
	status_of
	[[ $GOT == DONE && $c == 0 ]] || note_fail "$what after the next dispatch the job reads $GOT"
	history_right "$what after the next dispatch:" 1
	runs_once "$what"
	temps
	[[ -z $TEMPS ]] || note_fail "$what temp files left:$TEMPS"
}

# line_crash_one "SYSCALL WHEN": a case killed at that call.
line_crash_one() {
	local sc=${1% *} when=${1#* } run=line_case
	[[ $SCEN == canceller ]] && run=cancel_case
	KILL_AT="$sc #$when" $run -o /dev/null -e trace="$sc" -e inject="$sc:signal=SIGKILL:when=$when"
}

# line_crash SCENARIO: one plain case traced (which must pass the checks), then one
# case killed at each of its system calls (sampled as line_calls says).
line_crash() {
	local calls
	SCEN=$1
	scenario "$1"
	KILLED=0
	if [[ $SCEN == canceller ]]; then
		cancel_case -o "$T/trace.$1"
	else
		line_case -o "$T/trace.$1"
	fi
	((${#FAILS[@]} == 0)) || return 0
	line_calls "$T/trace.$1" > "$T/calls.$1"
	mapfile -t calls < "$T/calls.$1"
	# CRASH_AT="NAME WHEN,...": only these calls (to look into one case again)
	[[ -z ${CRASH_AT:-} ]] || mapfile -t calls <<< "${CRASH_AT//,/$'\n'}"
	CASES=0
	spread line_crash_one "${calls[@]}"
	# most must have been killed: the last call is exit_group
	((KILLED >= ${#calls[@]} * 3 / 4)) || note_fail "$SCEN: only $KILLED of ${#calls[@]} runs were killed"
	local how=
	[[ $SCEN == canceller ]] && how=", the run cancelled in $(cat "$T"/w*/outcomes | grep -c 1)"
	echo "# crash points: $SCEN: $KILLED killed of $CASES cases$how (of its $CALLS_TOTAL system calls, /proc scans and waits sampled)" >&3
}

@test "crash points: a waiter (dispatch --wait) killed at every system call: the one behind it runs, the next dispatch runs, the history agrees" {
	untraced line_crash waiter
}

@test "crash points: the follower of --coalesce killed at every system call: the call behind it runs, coalesced counts once, the next --coalesce starts afresh" {
	untraced line_crash follower
}

@test "crash points: a replacer (dispatch --replace) killed at every system call: the live run goes on or is cancelled, the one behind it runs, the history agrees" {
	untraced line_crash replacer
}

@test "crash points: jobreg-set --cancel killed at every system call: the run goes on or is cancelled, counted once, the next dispatch runs" {
	untraced line_crash canceller
}

@test "crash points: a folded --coalesce call killed at every system call: coalesced counts it at most once, the follower runs" {
	untraced line_crash folded
}
