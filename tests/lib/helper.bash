# Shared setup for every bats file (`load lib/helper`): a private registry
# per test, the built commands first on PATH, and the helpers every file
# uses.  Background processes are in procs.bash, other users in users.bash.
# (Every test sources this file, and on a virtual machine each process costs
# milliseconds of CPU: what runs for every test uses no process where bash
# can do it alone.)
# The checkout: two levels above this file (tests/lib/), whichever test
# directory loaded it.
case ${BASH_SOURCE[0]} in
*/./* | */../*) JOBREG_ROOT="$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)" ;;
/*/tests/lib/helper.bash) JOBREG_ROOT=${BASH_SOURCE[0]%/tests/lib/helper.bash} ;;
*) JOBREG_ROOT="$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)" ;;
esac
# python3, which some tests use as a tool (JSON, a pty, a socket, the
# Prometheus parser), is the system's where there is one: the first python3
# on PATH may be a version manager's shim (pyenv's is a shell script that
# starts a dozen processes, 0.4 s of CPU here, before python).  The link is
# made once a bats run (tests/run starts one a file), in its suite directory.
if [ -x /usr/bin/python3 ]; then
	if [ ! -e "$BATS_SUITE_TMPDIR/python/python3" ]; then
		mkdir -p "$BATS_SUITE_TMPDIR/python"
		# (a test of another file of the same run may make it first)
		ln -s /usr/bin/python3 "$BATS_SUITE_TMPDIR/python/python3" 2>/dev/null || true
	fi
	PATH="$BATS_SUITE_TMPDIR/python:$PATH"
fi
export PATH="$JOBREG_ROOT/bin:$PATH"

setup() {
	export REG="$BATS_TEST_TMPDIR/reg"
	export JOBREG_DIR="$REG"
	unset XDG_STATE_HOME JOBREG_JOB
	T=$BATS_TEST_TMPDIR
	read -r HOST < /proc/sys/kernel/hostname   # uname -n
	read -r BOOT_ID < /proc/sys/kernel/random/boot_id
	PUBLIC_BIN=
	SCRATCH=()
	if declare -F local_setup >/dev/null; then local_setup; fi
}

# The teardowns of the helpers a file loads (procs.bash, users.bash), then
# the file's own local_teardown, then the scratch directories; each runs
# even when the test failed.
teardown() {
	local f
	for f in procs_teardown owners_teardown users_teardown local_teardown; do
		if declare -F "$f" >/dev/null; then "$f"; fi
	done
	if [ ${#SCRATCH[@]} -gt 0 ]; then rm -rf "${SCRATCH[@]}"; fi
}

# public_dir PREFIX: make a fresh directory under /tmp that every user can enter,
# removed in teardown; its path in PUBLIC.  ($BATS_TEST_TMPDIR is private to us,
# and so may be the checkout.)
public_dir() {
	PUBLIC=$(mktemp -d "/tmp/${1:-jobreg-public}.XXXXXX")
	chmod 755 "$PUBLIC"
	SCRATCH+=("$PUBLIC")
}

# public_bin: copy the commands into a public directory, so that tests can run them
# as another user wherever the checkout is (git clone into `mktemp -d` makes a
# directory only its owner can enter); its path in PUBLIC_BIN.  Made once a test,
# in the test's own shell (a copy made inside `run` would not be removed).
public_bin() {
	[ -z "$PUBLIC_BIN" ] || return 0
	local keep=${PUBLIC:-}
	public_dir jobreg-bin
	PUBLIC_BIN=$PUBLIC PUBLIC=$keep
	cp "$JOBREG_ROOT"/bin/jobreg-get "$JOBREG_ROOT"/bin/jobreg-set "$JOBREG_ROOT"/bin/jobreg-clear \
		"$JOBREG_ROOT"/bin/jobreg-dispatch "$PUBLIC_BIN"/
	chmod 755 "$PUBLIC_BIN"/*
}

# as_nobody CMD [ARG...]: run jobreg's command CMD (jobreg-get, ...) as nobody,
# from the copy need_setpriv made.
as_nobody() {
	[ -n "$PUBLIC_BIN" ] || { echo "as_nobody: no public_bin (call need_setpriv first)" >&2; return 1; }
	local cmd=$1
	shift
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$PUBLIC_BIN/$cmd" "$@"
}

# need_setpriv: skip unless we are root with setpriv; then make the commands'
# public copy (public_bin) here, in the test's own shell, not in a subshell of run.
need_setpriv() {
	command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to drop privileges"
	public_bin
}

# write_record JOB LINES...: plant a record by hand, one line per argument.
write_record() {
	local job=$1; shift
	[ -d "$REG" ] || mkdir -p "$REG"
	printf '%s\n' "$@" > "$REG/$job"
}

# nap SECONDS: wait without starting a process (sleep(1) costs one): read -t on
# a FIFO that nobody writes, opened on the first nap of the (sub)shell.
nap() {
	if [ -z "${NAP_FD:-}" ]; then
		[ -p "$BATS_TEST_TMPDIR/nap" ] || mkfifo "$BATS_TEST_TMPDIR/nap"
		exec {NAP_FD}<>"$BATS_TEST_TMPDIR/nap"
	fi
	read -r -t "$1" -u "$NAP_FD" || true
}

# poll_until [SECONDS] CMD...: run CMD every 25 ms until it succeeds; after
# SECONDS (default 10) of tries, say so on stderr and fail.
poll_until() {
	local tries=400
	case $1 in [0-9]*) tries=$(($1 * 40)); shift ;; esac
	until "$@"; do
		tries=$((tries - 1))
		if [ "$tries" -le 0 ]; then
			echo "poll_until: still false after the time limit: $*" >&2
			return 1
		fi
		nap 0.025
	done
}

# listings N ARG...: jobreg-get ARG... N times, each listing followed by a
# line "// STATUS" (its exit status; no listing starts a line so), in a
# loop of sh: a fork and exec from the test's bash costs about twice one
# from sh.
listings() {
	# shellcheck disable=SC2016  # expanded by sh
	sh -c 'n=$1; shift; i=0
		while [ "$i" -lt "$n" ]; do
			jobreg-get "$@"
			echo "// $?"
			i=$((i + 1))
		done' sh "$@"
}

# flunk MESSAGE: fail the test, saying why.
flunk() {
	echo "$*" >&2
	return 1
}

# one_line: $stderr (of run --separate-stderr) is exactly one line.
one_line() {
	[ "${#stderr_lines[@]}" -eq 1 ]
}

# now_rfc3339 [OFFSET_SECONDS]
now_rfc3339() {
	TZ=UTC0 printf '%(%Y-%m-%dT%H:%M:%SZ)T\n' "$((EPOCHSECONDS + ${1:-0}))"
}

# field_into VAR JOB KEY: the value of KEY in JOB's record file into VAR (empty
# if absent, or if there is no record; the lines of every KEY= line, were
# there several), with no process started.
field_into() {
	local _line _value= _n=0
	if [ -e "$REG/$2" ]; then
		while IFS= read -r _line || [ -n "$_line" ]; do
			case $_line in
			"$3="*) [ "$_n" -eq 0 ] || _value+=$'\n'
				_value+=${_line#"$3="} _n=$((_n + 1)) ;;
			esac
		done < "$REG/$2"
	fi
	printf -v "$1" '%s' "$_value"
}

# field JOB KEY: the value of KEY in JOB's record file (empty if absent).
field() {
	local value
	field_into value "$1" "$2"
	[ -z "$value" ] || printf '%s\n' "$value"
}

# field_is JOB KEY VALUE: JOB's record has KEY=VALUE (VALUE empty: no KEY) now.
field_is() {
	local v
	field_into v "$1" "$2"
	[ "$v" = "$3" ]
}

# save JOB / unchanged JOB: keep a copy of JOB's record; it is the same, byte for byte.
save() { cp -p "$REG/$1" "$BATS_TEST_TMPDIR/$1.orig"; }
unchanged() { cmp "$REG/$1" "$BATS_TEST_TMPDIR/$1.orig"; }

# me: who the commands say asked (cancelled_by, paused_by): USER@HOST.
me() { printf '%s@%s\n' "$(id -un)" "$HOST"; }

# elapsed FROM [TO]: milliseconds from FROM to TO (default: now), both
# values of $EPOCHREALTIME; no process started.
elapsed() {
	local to=${2:-$EPOCHREALTIME}
	echo $(( (10#${to/./} - 10#${1/./}) / 1000 ))
}

# elapsed_between FROM LO HI: LO <= the seconds since FROM ($EPOCHREALTIME)
# < HI (fractions allowed); else say how long it was, and fail.
elapsed_between() {
	local ms
	ms=$(elapsed "$1")
	awk -v ms="$ms" -v lo="$2" -v hi="$3" 'BEGIN { exit !(ms >= lo * 1000 && ms < hi * 1000) }' ||
		flunk "took $ms ms, not in [$2 s, $3 s)"
}

# ns_fields: the record lines naming this shell's pid and time namespaces
# (pid_ns=, time_ns=), as jobreg-set --owner writes them; one a line, none
# for a namespace the kernel lacks.
ns_fields() {
	local k
	for k in pid time; do
		if [ -e "/proc/self/ns/$k" ]; then echo "${k}_ns=$(stat -L -c %i "/proc/self/ns/$k")"; fi
	done
}

# ns_keys: the keys of ns_fields, each followed by a space ("pid_ns time_ns ").
ns_keys() {
	ns_fields | sed 's/=.*/ /' | tr -d '\n'
}

# make_socket PATH: a Unix socket at PATH (skips the test without python3).
make_socket() {
	command -v python3 >/dev/null 2>&1 || skip "python3 is needed to make a socket"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"
}

# std_only CMD...: CMD with no descriptor open but 0, 1 and 2 (bats keeps
# several open), so a test knows which numbers are free.
std_only() {
	(
		local fd
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-"
		done
		exec "$@"
	)
}

# traced ARGS...: strace ARGS..., with LeakSanitizer off in a SANITIZE=1 build (it
# cannot work under ptrace).
traced() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace "$@"
}

# refused_without_lock CMD...: with a FIFO, a directory and a symlink planted as the
# records of jobs fifo, dir and link, CMD (the word JOB in it standing for the job)
# exits 77 with one line naming the record, and leaves no lock file behind.
refused_without_lock() {
	local job prog=$1
	mkdir -p "$REG/dir"
	mkfifo "$REG/fifo"
	ln -s "$BATS_TEST_TMPDIR/target" "$REG/link"
	for job in fifo dir link; do
		run --separate-stderr timeout 5 "${@/#JOB/$job}"
		[ "$status" -eq 77 ]
		[ "$stderr" = "$prog: $job: not a regular file: $REG/$job" ]
		[ ! -e "$REG/.$job.lock" ]
	done
	[ "$(ls -A "$REG")" = $'dir\nfifo\nlink' ]
}

# unit_table NAME MIN_ROWS: build tests/unit/NAME.c with the library (every
# .c under src/ but the commands' mains; headers named from src/) and run
# it: it passes when the program exits 0 having printed at least MIN_ROWS
# rows of its truth table.
unit_table() {
	local cc=${CC:-cc} lib=()
	command -v "$cc" >/dev/null || skip "no C compiler ($cc) to build tests/unit/$1.c"
	mapfile -t lib < <(find "$JOBREG_ROOT/src" -name '*.c' ! -name 'jobreg-*.c' | sort)
	[ "${#lib[@]}" -gt 0 ]
	"$cc" -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
		-DJOBREG_VERSION='"test"' -I"$JOBREG_ROOT/src" -o "$BATS_TEST_TMPDIR/$1" \
		"$JOBREG_ROOT/tests/unit/$1.c" "${lib[@]}"
	run "$BATS_TEST_TMPDIR/$1"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge "$2" ]
}
