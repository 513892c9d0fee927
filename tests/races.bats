#!/usr/bin/env bats
# Races and crashes: simultaneous dispatchers, kill -9, concurrent writers and
# readers, clear racing dispatch, a full disk, a daemonizing grandchild.
#
# Round counts are variables so a stress run can raise them, e.g.
#   JOBREG_RACE_ROUNDS=500 JOBREG_RACE_CROWD_ROUNDS=50 bats tests/races.bats
bats_require_minimum_version 1.5.0
load lib/helper
load lib/procs

ROUNDS=${JOBREG_RACE_ROUNDS:-20}              # rounds of the two-dispatcher race, loop lengths elsewhere
CROWD=${JOBREG_RACE_CROWD:-20}                # dispatchers started at once in the crowd test
CROWD_ROUNDS=${JOBREG_RACE_CROWD_ROUNDS:-5}   # rounds of the crowd test

local_setup() {
	MOUNTED=
	declare -gA GATES=()
	mkdir -p "$T/bin"

	# hold RUNS GATE: note this run's pid in RUNS, then wait (at most 10 s) until GATE opens.
	cat > "$T/bin/hold" <<-'EOF'
	#!/bin/sh
	echo $$ >> "$1"
	exec flock -s -w 10 "$2" true
	EOF

	# enter DIR FAILS: enter the critical section DIR (mkdir fails when another run is
	# inside: that is noted in FAILS), leave it again. Short on purpose: more runs end, so
	# clear removes the lock files more often while dispatchers wait on them.
	cat > "$T/bin/enter" <<-'EOF'
	#!/bin/sh
	if ! mkdir "$1" 2>/dev/null; then
		echo "run $$ found another run inside" >> "$2"
		exit 1
	fi
	rmdir "$1"
	EOF

	# daemonize GPIDFILE GATE [EXIT]: leave a background grandchild that keeps every
	# inherited descriptor (the run lock too) until GATE opens (at most 10 s); note its
	# pid in GPIDFILE; exit with EXIT at once.
	cat > "$T/bin/daemonize" <<-'EOF'
	#!/bin/sh
	flock -s -w 10 "$2" true </dev/null >/dev/null 2>&1 &
	echo $! > "$1.new" && mv "$1.new" "$1"
	exit "${3:-0}"
	EOF

	# migrate RUNS GATE EXIT: note this run's pid in RUNS, wait (at most 10 s) until
	# GATE opens, exit with EXIT.
	cat > "$T/bin/migrate" <<-'EOF'
	#!/bin/sh
	echo $$ >> "$1"
	flock -s -w 10 "$2" true
	exit "$3"
	EOF

	chmod +x "$T/bin/hold" "$T/bin/enter" "$T/bin/daemonize" "$T/bin/migrate"
}

local_teardown() {
	local p g
	# Let every wait end, then stop what is still around.
	for g in "${!GATES[@]}"; do flock -u "${GATES[$g]}" || true; done
	touch "$T/stop" 2>/dev/null || true
	if [ -f "$T/pids" ]; then
		while read -r p; do kill "$p" 2>/dev/null || true; done < "$T/pids"
		while read -r p; do wait "$p" 2>/dev/null || true; done < "$T/pids"
	fi
	if [ -n "${MOUNTED:-}" ]; then
		umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" 2>/dev/null || true
	fi
}

# Gates: a command waits for "$T/gate.NAME" to open with `flock -s -w 10 GATE true`
# (bin/hold, bin/daemonize); the test holds it shut with an exclusive flock and opens it
# with LOCK_UN, which releases the lock whatever processes inherited the descriptor.
# gate_shut NAME / gate_open NAME
gate_shut() {
	local fd
	if [ -z "${GATES[$1]:-}" ]; then
		exec {fd}> "$T/gate.$1"
		GATES[$1]=$fd
	fi
	flock -x -w 5 "${GATES[$1]}"
}
gate_open() {
	flock -u "${GATES[$1]}"
}

# track PID...: kill these in teardown.
track() {
	printf '%s\n' "$@" >> "$T/pids"
}

# lines_of FILE: number of lines in FILE (0 when it does not exist).
lines_of() {
	local lines=()
	[ ! -e "$1" ] || mapfile -t lines < "$1"
	echo "${#lines[@]}"
}

# has_line FILE LINE: FILE has the line LINE (bash only, no fork).
has_line() {
	local lines=() l
	mapfile -t lines < "$1"
	for l in "${lines[@]}"; do [ "$l" != "$2" ] || return 0; done
	echo "$1 has no line '$2'"
	return 1
}

# get_prints JOB WORD: jobreg-get JOB prints exactly WORD.
get_prints() {
	[ "$(jobreg-get "$1" 2>/dev/null)" = "$2" ]
}

# no_temp_files JOB: no .JOB.tmp file is left in the registry.
no_temp_files() {
	local left
	left=$(cd "$REG" && ls -A | grep -x -F ".$1.tmp" || true)
	[ -z "$left" ] || { echo "temp files left: $left"; return 1; }
}

# dispatch_crowd N JOB: start N dispatchers of JOB at one instant (they wait on a shared
# flock barrier, the START gate, that is then opened), let the winning command end only
# once all the others have returned, and leave each dispatcher's exit status in
# CROWD_EXITS[I], its stderr in $T/err.I, and the pid of every run of the command in
# $T/runs. Completions come back through a FIFO, so nothing polls.
dispatch_crowd() {
	local n=$1 job=$2 line got=0 i
	crowd_start "$n" "$job" "$T/bin/hold" "$T/runs" "$T/gate.RELEASE"
	# Every loser returns while the winner's command still runs.
	while [ "$got" -lt $((n - 1)) ] && read -r -t 10 -u "$CROWD_FD" line; do
		CROWD_EXITS[${line%% *}]=${line#* }
		got=$((got + 1))
	done
	gate_open RELEASE
	for i in "${CROWD_PIDS[@]}"; do wait "$i" || true; done
	while [ "$got" -lt "$n" ] && read -r -t 1 -u "$CROWD_FD" line; do
		CROWD_EXITS[${line%% *}]=${line#* }
		got=$((got + 1))
	done
	exec {CROWD_FD}>&-
}

# crowd_start N ARG...: start N "jobreg-dispatch ARG..." held at the START gate,
# each reporting "I STATUS" on a FIFO (its descriptor in CROWD_FD, their pids in
# CROWD_PIDS, stderr in $T/err.I), and open the gate once all N are ready.
crowd_start() {
	local n=$1 i line
	shift
	rm -f "$T"/err.* "$T/runs"
	[ -p "$T/crowd.fifo" ] || mkfifo "$T/crowd.fifo"
	exec {CROWD_FD}<> "$T/crowd.fifo"
	CROWD_EXITS=() CROWD_PIDS=()
	gate_shut START
	gate_shut RELEASE
	for ((i = 1; i <= n; i++)); do
		(
			set +e
			echo ready >&"$CROWD_FD"
			flock -s "$T/gate.START" jobreg-dispatch "$@" 2> "$T/err.$i"
			echo "$i $?" >&"$CROWD_FD"
		) 3>&- </dev/null >/dev/null 2>&1 &
		CROWD_PIDS+=($!)
	done
	track "${CROWD_PIDS[@]}"
	for ((i = 1; i <= n; i++)); do read -r -t 10 -u "$CROWD_FD" line || break; done
	poll_until at_gate "${CROWD_PIDS[@]}"
	gate_open START # all N go at once
}

# at_gate PID...: each subshell PID's flock(1) waits at the gate.
at_gate() {
	local p c
	for p; do
		c=
		# (the list ends with no newline: read fails, having read it)
		{ read -r c _ < "/proc/$p/task/$p/children"; } 2>/dev/null
		[ -n "$c" ] && blocked "$c" || return 1
	done
}

# exit_counts: the dispatchers' exit statuses of the last crowd, as "STATUS:COUNT ...".
exit_counts() {
	local -A count=()
	local st out=
	for st in "${CROWD_EXITS[@]}"; do count[$st]=$((${count[$st]:-0} + 1)); done
	for st in 0 75; do out+="$st:${count[$st]:-0} "; unset "count[$st]"; done
	for st in "${!count[@]}"; do out+="$st:${count[$st]} "; done
	echo "$out"
}

# check_losers JOB: every dispatcher that exited 75 said in one line that JOB is already running.
check_losers() {
	local i lines
	for i in "${!CROWD_EXITS[@]}"; do
		[ "${CROWD_EXITS[$i]}" = 75 ] || continue
		mapfile -t lines < "$T/err.$i"
		[ "${#lines[@]}" -eq 1 ] || { echo "dispatcher $i: not one line: ${lines[*]}"; return 1; }
		[[ "${lines[0]}" == "jobreg-dispatch: $1: already running ("* ]] || { echo "dispatcher $i: ${lines[0]}"; return 1; }
	done
}

@test "two dispatchers of one job started at the same instant run the command exactly once, every time" {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do
		echo "round $r"
		dispatch_crowd 2 job
		[ "$(lines_of "$T/runs")" -eq 1 ]
		[ "$(exit_counts)" = "0:1 75:1 " ]
		check_losers job
		has_line "$REG/job" status=DONE
		has_line "$REG/job" exit=0
		jobreg-clear job
		[ ! -e "$REG/job" ]
	done
}

@test "twenty dispatchers of one job started at the same instant run the command exactly once" {
	local r
	for ((r = 1; r <= CROWD_ROUNDS; r++)); do
		echo "round $r"
		dispatch_crowd "$CROWD" job
		[ "$(lines_of "$T/runs")" -eq 1 ]
		[ "$(exit_counts)" = "0:1 75:$((CROWD - 1)) " ]
		check_losers job
		has_line "$REG/job" status=DONE
		jobreg-clear job
	done
}

# once_crowd N CODE: start N "jobreg-dispatch --once migrate" at one instant, whose one
# run exits CODE once the RELEASE gate opens; the gate opens only after the run has
# begun and the others have had time to be refused.  Leaves their exit statuses in
# CROWD_EXITS, their stderr in $T/err.I, the number returned before the gate opened
# in EARLY, and the pid of every run in $T/runs.
once_crowd() {
	local n=$1 code=$2 line got=0 i
	crowd_start "$n" --once migrate "$T/bin/migrate" "$T/runs" "$T/gate.RELEASE" "$code"
	poll_until 5 test -s "$T/runs"
	EARLY=0
	while read -r -t 1 -u "$CROWD_FD" line; do
		CROWD_EXITS[${line%% *}]=${line#* }
		got=$((got + 1)) EARLY=$((EARLY + 1))
	done
	gate_open RELEASE
	while [ "$got" -lt "$n" ] && read -r -t 10 -u "$CROWD_FD" line; do
		CROWD_EXITS[${line%% *}]=${line#* }
		got=$((got + 1))
	done
	for i in "${CROWD_PIDS[@]}"; do wait "$i" || true; done
	exec {CROWD_FD}>&-
}

# check_replays CODE: every dispatcher but the one that ran said in one line that the
# job is already done (and how it failed, for CODE != 0).
check_replays() {
	local i lines ran=0
	for i in "${!CROWD_EXITS[@]}"; do
		mapfile -t lines < "$T/err.$i"
		if [ "${#lines[@]}" -eq 0 ]; then ran=$((ran + 1)); continue; fi
		[ "${#lines[@]}" -eq 1 ] || { echo "dispatcher $i: not one line: ${lines[*]}"; return 1; }
		if [ "$1" -eq 0 ]; then
			[ "${lines[0]}" = "jobreg-dispatch: migrate: already done" ] || { echo "dispatcher $i: ${lines[0]}"; return 1; }
		else
			[[ "${lines[0]}" == "jobreg-dispatch: migrate: already done: failed (exit $1, ended "*"); --retry-failed runs it again" ]] ||
				{ echo "dispatcher $i: ${lines[0]}"; return 1; }
		fi
	done
	[ "$ran" -eq 1 ] || { echo "$ran dispatchers printed nothing, want 1 (the one that ran)"; return 1; }
}

@test "eight dispatch --once callers started together: one run, and all eight exit with its status" {
	local r code
	for code in 3 0; do
		for ((r = 1; r <= CROWD_ROUNDS; r++)); do
			echo "exit $code, round $r"
			once_crowd 8 "$code"
			echo "exits: $(exit_counts), early: $EARLY"
			[ "$(lines_of "$T/runs")" -eq 1 ]
			[ "$EARLY" -eq 0 ]
			[ "$(exit_counts)" = "$([ "$code" -eq 0 ] && echo "0:8 75:0 " || echo "0:0 75:0 $code:8 ")" ]
			check_replays "$code"
			has_line "$REG/migrate" status=DONE
			has_line "$REG/migrate" "exit=$code"
			jobreg-clear migrate
		done
	done
}

@test "a dispatcher killed with kill -9 reads RUNNING while its command lives, then STALE, and a new dispatch takes it over" {
	gate_shut RELEASE
	jobreg-dispatch job "$T/bin/hold" "$T/runs" "$T/gate.RELEASE" 3>&- </dev/null >/dev/null 2>&1 &
	local dpid=$! cpid
	track "$dpid"
	poll_until 5 test -s "$T/runs"
	cpid=$(cat "$T/runs")
	track "$cpid"
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = RUNNING ]

	kill -9 "$dpid"
	wait "$dpid" || true
	# The command still holds the inherited run lock: the run is alive.
	kill -0 "$cpid"
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = RUNNING ]
	run jobreg-get -j job
	[ "$status" -eq 0 ]
	[[ "$output" == *'"status": "RUNNING"'* ]]
	[[ "$output" != *'"stale"'* ]]

	# The command ends: the owner is dead, the record reads STALE.
	gate_open RELEASE
	poll_until 5 get_prints job STALE
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = STALE ]
	run jobreg-get -j job
	[ "$status" -eq 0 ]
	[[ "$output" == '{"job": "job", '*'"status": "STALE"'*', "stale": true, "health": "STALE"}' ]]
	[ "$(field job status)" = RUNNING ] # STALE is derived, never written

	run --separate-stderr jobreg-dispatch job sh -c 'echo took over'
	[ "$status" -eq 0 ]
	[ "$output" = "took over" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-dispatch: job: taking over stale run"* ]]
	run jobreg-get job
	[ "$output" = DONE ]
	[ "$(field job exit)" = 0 ]
}

@test "a dispatcher killed with kill -9 together with its command leaves a STALE record that dispatch --once takes over" {
	gate_shut RELEASE
	jobreg-dispatch job "$T/bin/hold" "$T/runs" "$T/gate.RELEASE" 3>&- </dev/null >/dev/null 2>&1 &
	local dpid=$! cpid
	track "$dpid"
	poll_until 5 test -s "$T/runs"
	cpid=$(cat "$T/runs")
	track "$cpid"
	[ "$(field job status)" = RUNNING ]

	kill -9 "$dpid" "$cpid" # the dispatcher first, so it can never write DONE
	wait "$dpid" || true
	poll_until 5 get_prints job STALE
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = STALE ]
	run jobreg-get --is STALE job
	[ "$status" -eq 0 ]
	run jobreg-get --is RUNNING job
	[ "$status" -eq 1 ]
	run jobreg-get -l job
	[ "$status" -eq 0 ]
	[ "$(cut -f1,2 <<< "$output")" = "job	STALE" ]
	run jobreg-get -j job
	[[ "$output" == *', "stale": true, "health": "STALE"}' ]]
	[ "$(field job status)" = RUNNING ]

	run --separate-stderr jobreg-dispatch --once job sh -c 'echo second run'
	[ "$status" -eq 0 ]
	[ "$output" = "second run" ]
	[[ "$stderr" == "jobreg-dispatch: job: taking over stale run"* ]]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 0 ]
}

# read_loop JOB N: until $T/stop exists (at most 60 s), read JOB's record with
# jobreg-get -l and with cat; note every read that is not one whole record in $T/bad,
# and count the reads in $T/reads.N.
read_loop() {
	set +e
	local job=$1 n=$2 out rc fields lines l versions statuses status note reads=0 end=$((SECONDS + 60))
	while [ ! -e "$T/stop" ] && [ "$SECONDS" -lt "$end" ]; do
		out=$(jobreg-get -l "$job" 2>&1)
		rc=$?
		IFS=$'\t' read -r -a fields <<< "$out"
		if [ "$rc" -ne 0 ] || [ "${#fields[@]}" -ne 8 ] || [ "${fields[0]}" != "$job" ] ||
			! consistent "${fields[1]}" "${fields[7]}"; then
			echo "get -l: exit $rc: $out" >> "$T/bad"
		fi
		out=$(cat "$REG/$job" 2>&1)
		rc=$?
		mapfile -t lines <<< "$out"
		versions=0 statuses=0 status= note=
		for l in "${lines[@]}"; do
			case $l in
			version=*) versions=$((versions + 1)) ;;
			status=*) statuses=$((statuses + 1)) status=${l#status=} ;;
			note=*) note=${l#note=} ;;
			esac
		done
		if [ "$rc" -ne 0 ] || [ -z "$out" ] || [ "${lines[0]}" != version=1 ] || [ "$versions" -ne 1 ] ||
			[ "$statuses" -ne 1 ] || ! consistent "$status" "$note"; then
			echo "cat: exit $rc: ${lines[*]}" >> "$T/bad"
		fi
		reads=$((reads + 1))
	done
	echo "$reads" > "$T/reads.$n"
}

# consistent STATUS NOTE: a status and note that one jobreg-set of the writers wrote together.
consistent() {
	case "$1:$2" in
	"DONE:initial" | DONE:writer\ *\ round\ *\ done) return 0 ;;
	RUNNING:*\ done) return 1 ;;
	RUNNING:writer\ *\ round\ *) return 0 ;;
	esac
	return 1
}

@test "readers polling during concurrent jobreg-set writers always see one whole record, and no temp file is left" {
	local w r pids=() readers=()
	jobreg-set -m initial job DONE
	for w in 1 2 3; do
		(
			set +e
			for ((i = 1; i <= ROUNDS; i++)); do
				jobreg-set -m "writer $w round $i" job RUNNING || echo "writer $w: set RUNNING exit $?" >> "$T/bad"
				jobreg-set -m "writer $w round $i done" job DONE || echo "writer $w: set DONE exit $?" >> "$T/bad"
			done
		) 3>&- </dev/null >/dev/null 2>> "$T/writers.err" &
		pids+=($!)
	done
	for r in 1 2; do
		read_loop job "$r" 3>&- </dev/null >/dev/null 2>&1 &
		readers+=($!)
	done
	track "${pids[@]}" "${readers[@]}"
	for w in "${pids[@]}"; do wait "$w"; done
	touch "$T/stop"
	for r in "${readers[@]}"; do wait "$r"; done

	if [ -s "$T/bad" ]; then head -n 20 "$T/bad"; false; fi
	[ "$(cat "$T/reads.1")" -gt 0 ]
	[ "$(cat "$T/reads.2")" -gt 0 ]
	no_temp_files job
	[ "$(ls "$REG")" = job ]
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
	[[ "$(field job note)" == "writer "*" round $ROUNDS done" ]]
}

@test "clear refuses to remove a live dispatched run, and the run goes on to record DONE" {
	gate_shut RELEASE
	jobreg-dispatch job "$T/bin/hold" "$T/runs" "$T/gate.RELEASE" 3>&- </dev/null >/dev/null 2>&1 &
	local dpid=$! cpid rc=0
	track "$dpid"
	poll_until 5 test -s "$T/runs"
	cpid=$(cat "$T/runs")

	run --separate-stderr jobreg-clear job
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-clear: job: "* ]]
	[ -e "$REG/job" ]
	[ "$(field job status)" = RUNNING ]
	run jobreg-get job
	[ "$output" = RUNNING ]
	kill -0 "$cpid"

	gate_open RELEASE
	wait "$dpid" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(lines_of "$T/runs")" -eq 1 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 0 ]
}

@test "clear looping against dispatchers of the same job never lets two runs be inside at once" {
	local d pids=() cl
	for d in 1 2 3; do
		(
			set +e
			for ((i = 1; i <= ROUNDS; i++)); do
				jobreg-dispatch -q job "$T/bin/enter" "$T/inside" "$T/fails" 2>> "$T/dispatch.err"
				rc=$?
				echo "$rc" >> "$T/rcs"
				case $rc in 0 | 75) ;; *) echo "dispatch exit $rc" >> "$T/bad" ;; esac
			done
		) 3>&- </dev/null >/dev/null 2>&1 &
		pids+=($!)
	done
	(
		set +e
		end=$((SECONDS + 60))
		while [ ! -e "$T/stop" ] && [ "$SECONDS" -lt "$end" ]; do
			jobreg-clear -q job
			rc=$?
			echo "$rc" >> "$T/clears"
			case $rc in 0 | 1) ;; *) echo "clear exit $rc" >> "$T/bad" ;; esac
		done
	) 3>&- </dev/null >/dev/null 2>&1 &
	cl=$!
	track "${pids[@]}" "$cl"
	for d in "${pids[@]}"; do wait "$d"; done
	touch "$T/stop"
	wait "$cl"

	if [ -e "$T/fails" ]; then cat "$T/fails"; false; fi
	if [ -s "$T/bad" ]; then head -n 20 "$T/bad"; false; fi
	[ "$(lines_of "$T/rcs")" -eq $((3 * ROUNDS)) ]
	[ "$(grep -cx 0 "$T/rcs")" -gt 0 ]   # some runs happened
	[ "$(grep -cx 0 "$T/clears")" -gt 0 ] # some clears happened
	# With -q a dispatcher that ran or found the job running prints nothing: a line here is a
	# lock wait that timed out (two processes holding "the" job lock on two inodes can
	# deadlock each other) or a run whose record changed under it.
	if [ -s "$T/dispatch.err" ]; then sort "$T/dispatch.err" | uniq -c | head -n 20; false; fi
	[ ! -e "$T/inside" ]
}

@test "a reader never reports STALE for a dispatched run that has just ended normally" {
	local i r dl readers=() many=()
	for ((i = 0; i < 100; i++)); do many+=(job); done
	(
		set +e
		for ((i = 1; i <= ROUNDS * 3; i++)); do
			jobreg-dispatch job true || echo "dispatch exit $?" >> "$T/bad"
		done
	) 3>&- </dev/null >/dev/null 2>&1 &
	dl=$!
	for r in 1 2; do
		(
			set +e
			reads=0
			end=$((SECONDS + 60))
			while [ ! -e "$T/stop" ] && [ "$SECONDS" -lt "$end" ]; do
				# One get asks for the job many times: many reads, close together.
				out=$(jobreg-get "${many[@]}" 2>&1)
				rc=$?
				[ "$rc" -eq 0 ] || echo "get: exit $rc" >> "$T/bad"
				mapfile -t words <<< "$out"
				[ "${#words[@]}" -eq "${#many[@]}" ] || echo "get: ${#words[@]} lines for ${#many[@]} jobs" >> "$T/bad"
				for w in "${words[@]}"; do
					case $w in
					PENDING | RUNNING | DONE) ;;
					*) echo "get: $w" >> "$T/bad" ;;
					esac
				done
				reads=$((reads + 1))
			done
			echo "$reads" > "$T/reads.$r"
		) 3>&- </dev/null >/dev/null 2>&1 &
		readers+=($!)
	done
	track "$dl" "${readers[@]}"
	wait "$dl"
	touch "$T/stop"
	for r in "${readers[@]}"; do wait "$r"; done

	if [ -s "$T/bad" ]; then sort "$T/bad" | uniq -c | head -n 20; false; fi
	[ "$(cat "$T/reads.1")" -gt 0 ]
	[ "$(cat "$T/reads.2")" -gt 0 ]
	[ "$(field job status)" = DONE ]
}

@test "set on a full disk exits 74 naming the job and leaves the previous record byte for byte" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	mkdir "$T/full"
	mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null || skip "cannot mount a tmpfs on $T/full"
	MOUNTED=$T/full
	export REG="$T/full/reg" JOBREG_DIR="$T/full/reg"
	jobreg-set -m "before the disk filled up" job RUNNING
	cp "$REG/job" "$T/before"
	head -c 1M /dev/zero > "$T/full/filler" 2>/dev/null || true
	# The file system is full: not one more byte fits.
	if printf x 2>/dev/null > "$T/full/probe"; then
		rm -f "$T/full/probe"
		skip "could not fill the tmpfs"
	fi
	rm -f "$T/full/probe"

	local long
	long=$(head -c 3000 /dev/zero | tr '\0' x)
	run --separate-stderr jobreg-set -m "$long" job DONE
	[ "$status" -eq 74 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-set: job: "* ]]
	cmp "$T/before" "$REG/job"
	no_temp_files job
	run jobreg-get job
	[ "$output" = RUNNING ]

	# Once there is room again the same set succeeds.
	rm "$T/full/filler"
	run jobreg-set -m "$long" job DONE
	[ "$status" -eq 0 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job note)" = "$long" ]
	no_temp_files job
}

@test "a daemonized grandchild that keeps the inherited run lock keeps a new dispatch of the job from running" {
	gate_shut RELEASE
	(
		set +e
		jobreg-dispatch job "$T/bin/daemonize" "$T/gpid" "$T/gate.RELEASE"
		echo $? > "$T/rc.first"
	) 3>&- </dev/null >/dev/null 2>&1 &
	track $!
	poll_until 5 test -s "$T/gpid"
	local gpid
	gpid=$(cat "$T/gpid")
	track "$gpid"
	# The grandchild holds the run lock ...
	run flock -n "$REG/.job.run" true
	[ "$status" -ne 0 ]
	# ... so a new dispatch must not run its command.
	run --separate-stderr jobreg-dispatch -w 0.3 job sh -c 'echo second run >> "$1"' sh "$T/runs"
	[ "$status" -eq 75 ]
	[ ! -e "$T/runs" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "$stderr" == "jobreg-dispatch: job: "* ]]
	kill -0 "$gpid"

	# The grandchild ends: the run is over and the job can run again.
	gate_open RELEASE
	poll_until 5 flock -n "$REG/.job.run" true
	poll_until 5 test -s "$T/rc.first"
	[ "$(cat "$T/rc.first")" -eq 0 ]
	run jobreg-dispatch job sh -c 'echo second run >> "$1"' sh "$T/runs"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/runs")" = "second run" ]
	[ "$(field job status)" = DONE ]
}

# SPEC §5 step 6 ("When it ends" = when COMMAND ends; "exit with the command's status"):
# the dispatcher does not wait for grandchildren; see the report on the ambiguity with
# step 5's "a daemonizing grandchild that keeps it keeps the job RUNNING".
@test "dispatch records DONE and exits with its command's status when the command ends, while a grandchild still holds the run lock" {
	gate_shut RELEASE
	(
		set +e
		jobreg-dispatch job "$T/bin/daemonize" "$T/gpid" "$T/gate.RELEASE" 3
		echo $? > "$T/rc.first"
	) 3>&- </dev/null >/dev/null 2>&1 &
	track $!
	poll_until 5 test -s "$T/gpid"
	local gpid
	gpid=$(cat "$T/gpid")
	track "$gpid"
	poll_until 5 test -s "$T/rc.first"
	kill -0 "$gpid" # the grandchild still lives
	[ "$(cat "$T/rc.first")" -eq 3 ]
	[ "$(field job status)" = DONE ]
	[ "$(field job exit)" = 3 ]
	run jobreg-get job
	[ "$status" -eq 0 ]
	[ "$output" = DONE ]
	run flock -n "$REG/.job.run" true
	[ "$status" -ne 0 ]
}

# bats test_tags=serial
@test "a lock wait of a few microseconds on a held lock never outlasts its bound, however the timer and the wait interleave" {
	jobreg-set j PENDING
	# (held longer than the loop can take on a loaded machine: a holder that
	# ended would let a wait succeed; the holder is the process killed at the end)
	( flock 9 && exec sleep 900 ) 9>"$REG/.j.lock" 3>&- >/dev/null 2>&1 &
	holder=$!
	track "$holder"
	while flock -n "$REG/.j.lock" true; do sleep 0.01; done
	# Each call is timed in the loop (EPOCHREALTIME, not a timeout(1) per
	# call, which doubled the processes): over 2 s is a wait that outlasted
	# its bound.  A wait that misses its bound may block for good: one
	# watchdog over the whole loop ends that.
	st=0
	timeout 300 bash -c '
		for ((i = 0; i < $1; i++)); do
			for w in 0.00003 0.00005 0.0001; do
				st=0 t0=${EPOCHREALTIME//[!0-9]/}
				jobreg-set -w "$w" j RUNNING 2>"$2" || st=$?
				t1=${EPOCHREALTIME//[!0-9]/}
				[ "$st" -eq 75 ] || { echo "-w $w: exit $st: $(cat "$2")"; exit 1; }
				((t1 - t0 <= 2000000)) || { echo "-w $w: the call took $(((t1 - t0) / 1000)) ms"; exit 1; }
			done
		done' sh "$((ROUNDS * 15))" "$T/err" || st=$?
	kill "$holder"
	[ "$st" -ne 124 ] || flunk "a wait of -w 0.00003 to 0.0001 blocked: the loop was still running after 300 s"
	[ "$st" -eq 0 ]
	[ "$(field j status)" = PENDING ]
}

# ---- listings while records change (issue 19, A3-A5) ------------------------

@test "get -a never reads a FIFO swapped in for a record after the listing: no RUNNING, nothing drained" {
	for j in a b c; do jobreg-set --exit 0 "$j" DONE; done
	# zzz is a regular DONE record and a FIFO a writer holds open with
	# "status=RUNNING" in it, in turn, each put in place by rename.
	python3 -c '
import os, sys, time
reg, stop = sys.argv[1], sys.argv[2]
done = b"version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\nexit=0\n"
held = None
while not os.path.exists(stop):
    with open(os.path.join(reg, ".zzz.new"), "wb") as f:
        f.write(done)
    os.rename(os.path.join(reg, ".zzz.new"), os.path.join(reg, "zzz"))
    fifo = os.path.join(reg, ".zzz.fifo")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    os.write(fd, b"version=1\nstatus=RUNNING\n")
    os.rename(fifo, os.path.join(reg, "zzz"))
    if held is not None:
        os.close(held)
    held = fd
    time.sleep(0.0005)
' "$REG" "$T/stop" 3>&- &
	echo "$!" >> "$T/pids"
	# 300 listings, one awk counting (see listings).  Every listing must
	# hold a, b and c DONE, whole lines of eight fields.
	local counts bad unreadable
	counts=$(listings 300 -l -a 2>/dev/null |
	awk -F '\t' '
		function fail(why) { printf "%s%s", why, listing; failed = 1; exit 1 }
		/^\/\/ [0-9]+$/ { if (abc != 3) fail("a listing without a, b and c DONE:\n"); n++; abc = 0; listing = ""; next }
		/\/\/ [0-9]+$/ { listing = listing $0 "\n"; fail("a listing cut short:\n") }
		{ listing = listing $0 "\n" }
		$1 == "zzz" && $2 == "RUNNING" { bad++ }
		$1 == "zzz" && $2 == "UNREADABLE" { unreadable++ }
		$1 ~ /^[abc]$/ && $2 == "DONE" && NF == 8 { abc++ }
		END {
			if (failed) exit 1
			if (n != 300 || listing != "") { printf "%d listings, %s after the last\n", n, listing; exit 1 }
			print bad + 0, unreadable + 0
		}') || { touch "$T/stop"; flunk "$counts"; }
	touch "$T/stop"
	read -r bad unreadable <<<"$counts"
	echo "listings that met the FIFO: $unreadable of 300" >&3
	[ "$bad" -eq 0 ]
}

# replaced_while_listed MOUNTPOINT: 1000 records on a tmpfs, each with its
# lock file, all replaced by rename again and again by one jobreg-set loop.
replaced_while_listed() {
	local i
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	mkdir "$T/mnt"
	mount -t tmpfs -o size=64m tmpfs "$T/mnt" 2>/dev/null || skip "cannot mount a tmpfs on $T/mnt"
	MOUNTED=$T/mnt
	export REG=$T/mnt/reg JOBREG_DIR=$T/mnt/reg
	mkdir "$REG"
	# Records as jobreg-set writes them, so that every job gives each format
	# the same number of lines before and after it is replaced.
	for i in $(seq -w 1000); do
		printf 'version=1\nstatus=DONE\nsince=%s\nended=%s\nexit=0\nlast_success=%s\n' \
			2026-01-01T00:00:00Z 2026-01-01T00:00:00Z 2026-01-01T00:00:00Z > "$REG/j$i"
		: > "$REG/.j$i.lock"
	done
	# The lines of each format while nothing moves, for short_listings.
	local format
	declare -gA WHOLE=()
	for format in "" -l -j -P; do
		listed_lines "$format"
		WHOLE[x$format]=$LISTED
	done
	# (the last, -P, still in the file: one runs_total series a job)
	[ "${WHOLE[x]}" -eq 1000 ]
	[ "${WHOLE[x-l]}" -eq 1000 ]
	[ "${WHOLE[x-j]}" -eq 1000 ]
	[ "$(grep -c '^jobreg_job_runs_total{' "$T/mnt/list")" -eq 1000 ]
	# A pause of 20 ms after each write leaves the listings most of the CPU:
	# at 2 ms the loop took most of a core and the test 70 s of CPU.  It
	# still renames over a record every 30 ms or so, and 0.2.0 misses a job
	# in some of the 1200 listings (8 and 13 in two runs here, all of the
	# plain format).  (The loop is sh's: each fork of the test's bash costs
	# twice one of sh on a virtual machine.)
	sh -c 'while [ ! -e "$1" ]; do
		for i in $(seq -w 1 7 1000); do
			jobreg-set --exit 0 "j$i" DONE || exit 1
			sleep 0.02
		done
	done' sh "$T/stop" 3>&- >/dev/null 2>&1 &
	echo "$!" >> "$T/pids"
}

# listed_lines FORMAT: get FORMAT -a into $T/mnt/list; its lines in LISTED.
listed_lines() {
	local lines
	# shellcheck disable=SC2086  # no word for the plain format
	jobreg-get $1 -a > "$T/mnt/list"
	mapfile -t lines < "$T/mnt/list"
	LISTED=${#lines[@]}
}

# short_listings FORMAT: 300 listings get FORMAT -a of replaced_while_listed's
# registry; a line for each that did not list its 1000 jobs (each job has as
# many lines in every listing: a missing one makes it shorter) or failed,
# counted by one awk (see listings).
short_listings() {
	# shellcheck disable=SC2086  # no word for the plain format
	listings 300 $1 -a |
	awk -v format="$1" -v want="${WHOLE[x$1]}" '
		/^\/\/ [0-9]+$/ {
			if ($2 != 0) printf "get %s -a: exit %d\n", format, $2
			if (n != want) printf "get %s -a: %d lines, not %d\n", format, n, want
			listings++; n = 0; next
		}
		/\/\/ [0-9]+$/ { printf "get %s -a: a listing cut short\n", format; listings++; n = 0; next }
		{ n++ }
		END { if (listings != 300 || n != 0) printf "get %s -a: %d listings, %d lines after the last\n", format, listings, n }'
}

@test "get -a lists every job whose record exists throughout, while records are replaced by rename (tmpfs)" {
	replaced_while_listed
	local format out short=
	for format in "" -l -j -P; do
		out=$(short_listings "$format")
		[ -z "$out" ] || short+=$out$'\n'
	done
	touch "$T/stop"
	[ -z "$short" ] || flunk "$short"
}

@test "get --is DONE -a is true when a listed record is cleared before it is read (the listing held up by strace)" {
	command -v strace > /dev/null || skip "strace is not installed"
	for j in a b flicker; do jobreg-set --exit 0 "$j" DONE; done
	# the directory is listed, then the listing stalls 3 s while flicker
	# goes (a window a loaded machine's look for it does not miss)
	local st=0
	# (LeakSanitizer cannot run under ptrace: off, as traced does)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 20 strace -f -o /dev/null \
		-e trace=getdents64 -e inject=getdents64:delay_exit=3000000:when=1 \
		jobreg-get --is DONE -a > "$T/out" 2> "$T/err" & pid=$!
	poll_until holds_open "$pid" "$(cd "$REG" && pwd -P)"   # (listing it)
	jobreg-clear flicker
	wait "$pid" || st=$?
	[ "$st" -eq 0 ] || flunk "exit $st: $(cat "$T/err")"
	[ ! -s "$T/err" ]
}

@test "get --is DONE -a is true while another job is set DONE and cleared again and again" {
	for j in a b c d e; do jobreg-set --exit 0 "$j" DONE; done
	# (both loops in sh: a fork of the test's bash costs twice one of sh)
	sh -c 'while [ ! -e "$1" ]; do
		jobreg-set --exit 0 flicker DONE
		jobreg-clear flicker
	done' sh "$T/stop" 3>&- >/dev/null 2>&1 &
	echo "$!" >> "$T/pids"
	local failed
	# shellcheck disable=SC2016  # expanded by sh
	failed=$(sh -c 'i=0 failed=0
		while [ "$i" -lt 200 ]; do
			jobreg-get --is DONE -a 2>>"$1" || failed=$((failed + 1))
			i=$((i + 1))
		done
		echo "$failed"' sh "$T/err")
	touch "$T/stop"
	[ "$failed" -eq 0 ] || { echo "$failed of 200 exited non-zero"; head -n 5 "$T/err"; false; }
}
