# Shared setup for every bats file: a private registry per test, the built
# commands first on PATH.
JOBREG_ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
export PATH="$JOBREG_ROOT/bin:$PATH"

setup() {
	export REG="$BATS_TEST_TMPDIR/reg"
	export JOBREG_DIR="$REG"
	unset XDG_STATE_HOME JOBREG_JOB
	if declare -F local_setup >/dev/null; then local_setup; fi
}

# write_record JOB LINES...: plant a record by hand, one line per argument.
write_record() {
	local job=$1; shift
	mkdir -p "$REG"
	printf '%s\n' "$@" > "$REG/$job"
}

# now_rfc3339 [OFFSET_SECONDS]
now_rfc3339() {
	date -u -d "@$(( $(date +%s) + ${1:-0} ))" +%Y-%m-%dT%H:%M:%SZ
}

# field JOB KEY: the value of KEY in JOB's record file (empty if absent).
field() {
	sed -n "s/^$2=//p" "$REG/$1"
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
