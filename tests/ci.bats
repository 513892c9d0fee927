#!/usr/bin/env bats
# The tools that run the tests: tests/run --serial, make check-beside
# (tests/stress/beside) and .ci/run's accounting, each run in a tree of its
# own with stand-ins for make and the suites, so that nothing here runs the
# real suite.
bats_require_minimum_version 1.5.0
load lib/helper

# fake_tree: $T/tree, a checkout of nothing but the tool under test, and
# $T/stub, stand-ins for make and apt-get (first on PATH): make's targets
# say what a real one would end with.
fake_tree() {
	mkdir -p "$T/tree/tests/stress" "$T/tree/tests/sharedfs" "$T/tree/.ci" "$T/tree/bin" "$T/stub"
	cat > "$T/stub/apt-get" <<-'EOF'
	#!/bin/sh
	exit 1
	EOF
	cat > "$T/stub/make" <<-'EOF'
	#!/bin/sh
	# (-C DIR: the stand-in runs there)
	[ "$1" != -C ] || { cd "$2" && shift 2; }
	case "$*" in
	*check-sharedfs*gluster*) echo "sharedfs: skipped: no glusterd here"; exit 2 ;;
	*check-sharedfs*) echo "4 passed, 0 failed, 1 skipped" ;;
	*stress*) echo "30 passed, 0 failed" ;;
	*lint*) echo "lint: src/a.c: warning"; exit 1 ;;
	*fuzz*) echo "fuzz: OK" ;;
	*check*) sleep 0.2   # (check-beside's neighbour loops on it)
		[ ! -e "$PWD/fail" ] || { echo "1 passed, 1 failed, 0 skipped"; exit 1; }
		echo "10 passed, 0 failed, 2 skipped" ;;
	esac
	EOF
	chmod +x "$T/stub/apt-get" "$T/stub/make"
}

@test "tests/run --serial runs only the serial tests of the files it is given, and counts them" {
	mkdir -p "$T/suite"
	# (the lines are printed: a line of this file that begins "@test" is
	# one of its own tests)
	printf '%s\n' '@test "plain" { false; }' '# bats test_tags=serial' '@test "timed one" { true; }' \
		'# bats test_tags=serial' '@test "timed two" { true; }' > "$T/suite/a.bats"
	printf '%s\n' '@test "no serial test here" { false; }' > "$T/suite/b.bats"
	# (a bats of its own, with none of this one's variables, nor its
	# libexec on PATH, whose bats is not the command)
	local path
	path=$(printf '%s\n' "${PATH//:/$'\n'}" | grep -v bats-core | paste -s -d :)
	run --separate-stderr env -i PATH="$path" HOME="$HOME" TMPDIR="$T" \
		"$JOBREG_ROOT/tests/run" --serial "$T/suite/a.bats" "$T/suite/b.bats"
	[ "$status" -eq 0 ] || flunk "$output $stderr"
	[ "${lines[-1]}" = "2 passed, 0 failed, 0 skipped" ]
	[[ $output == *"ok 1 timed one"* ]]
	[[ $output != *plain* ]]
	[[ $output != *"no serial test"* ]]
}

@test "make check-beside reports every round and fails when one round fails" {
	fake_tree
	cp "$JOBREG_ROOT/tests/stress/beside" "$T/tree/tests/stress/"
	run env PATH="$T/stub:$PATH" BESIDE_ROUNDS=3 "$T/tree/tests/stress/beside"
	[ "$status" -eq 0 ] || flunk "$output"
	[ "${#lines[@]}" -eq 4 ]
	[[ ${lines[0]} == "round 1: 10 passed, 0 failed, 2 skipped ("*" s, load "*")" ]]
	[[ ${lines[2]} == "round 3: "* ]]
	[ "${lines[3]}" = "3 passed, 0 failed" ]
	# a round that fails fails the whole; the copy under test is made
	# from the tree, so the marker is planted in the tree
	: > "$T/tree/fail"
	run env PATH="$T/stub:$PATH" BESIDE_ROUNDS=2 "$T/tree/tests/stress/beside"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "0 passed, 2 failed" ]
}

@test ".ci/run times every step and ends with the real counts: a skipped step is no pass, a failed step fails the run" {
	fake_tree
	cp "$JOBREG_ROOT/.ci/run" "$T/tree/.ci/"
	printf '#!/bin/sh\necho "3 passed, 0 failed"\n' > "$T/tree/.ci/private-clone"
	printf '#!/bin/sh\necho "5 passed, 0 failed, 0 skipped"\n' > "$T/tree/tests/run"
	printf '#!/bin/sh\nexit 0\n' > "$T/tree/tests/sharedfs/run"
	chmod +x "$T/tree/.ci/private-clone" "$T/tree/tests/run" "$T/tree/tests/sharedfs/run"
	run env PATH="$T/stub:$PATH" CI_INSTALL=0 bash "$T/tree/.ci/run"
	[ "$status" -eq 1 ]
	# sanitized 10 (2 skipped), serial 5, private clone 3, clock 10 (2
	# skipped), stress and fuzz one each, CephFS 4 (1 skipped); lint failed;
	# GlusterFS skipped
	[ "${lines[-1]}" = "34 passed, 1 failed" ]
	[ "${lines[-2]}" = "skipped: 6 (not counted as passed)" ]
	[[ ${lines[-3]} =~ ^"=== all: "[0-9]+" s"$ ]]
	local step
	for step in "sanitized build, the whole suite" "plain build, the serial (timing) tests" \
		    "multi-user tests from a private clone" "clock tests" "stress (bounded)" \
		    "static analysis" "shared filesystem: GlusterFS" "shared filesystem: CephFS"; do
		printf '%s\n' "${lines[@]}" | grep -qxE "=== ${step//[()]/.}: [0-9]+ s" || flunk "no time for $step"
	done
	[[ $output == *"=== shared filesystem: GlusterFS SKIPPED: no glusterd here"* ]]
	[[ $output == *"=== static analysis FAILED (exit 1)"* ]]
}

@test "make stress gives a part the share of its time cap that STRESS_SHARES names, and refuses a share that is no percent" {
	run env STRESS_PARTS=a STRESS_KILLS=3 STRESS_SECONDS=10 STRESS_SHARES="b:5 a:40" \
		"$JOBREG_ROOT/tests/stress/run"
	[ "$status" -eq 0 ] || flunk "$output"
	[[ ${lines[1]} == *"cap 10s, shares b:5 a:40" ]] || flunk "${lines[1]}"
	[[ ${lines[-1]} =~ ^[1-9][0-9]*" passed, 0 failed"$ ]]
	run env STRESS_PARTS=a STRESS_KILLS=3 STRESS_SHARES="a:forty" "$JOBREG_ROOT/tests/stress/run"
	[ "$status" -eq 2 ]
	[ "$output" = "stress: STRESS_SHARES: a:forty is not PART:PERCENT (a:20)" ]
}
