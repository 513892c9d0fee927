#!/usr/bin/env bats
# make check leaves the host as it found it: what the tests it runs
# (tests/*.bats and the helpers they load) may change on the host goes
# through helpers that undo it in teardown, which runs even when a test
# fails.  The tests that step the clock are in tests/clock/ (make
# check-clock).
bats_require_minimum_version 1.5.0
load lib/helper

# uses PATTERN: the lines of make check's test files (but this one) and
# helpers matching the extended regular expression PATTERN, comment lines
# left out.
uses() {
	local f files=()
	for f in "$JOBREG_ROOT"/tests/*.bats "$JOBREG_ROOT"/tests/lib/*.bash; do
		[ "$f" = "$BATS_TEST_FILENAME" ] || files+=("$f")
	done
	grep -nE -- "$1" "${files[@]}" | grep -vE '^[^:]*:[0-9]+:[[:space:]]*#' || true
}

@test "no test of make check steps the realtime clock" {
	run uses '(^|[^[:alnum:]_-])(date[[:space:]]+(-[a-zA-Z]*s|--set)|hwclock|timedatectl|settimeofday|clock_settime)'
	[ -z "$output" ] || flunk "$output"
}

@test "users and groups are added only with add_user and add_group, which remove them in teardown" {
	run uses '(^|[^[:alnum:]_-])(useradd|groupadd|adduser|addgroup)[[:space:]]+[-"$]'
	printf '%s\n' "$output" | grep -v '/tests/lib/users\.bash:' | grep . && false
	# (the two that remain are add_user's and add_group's own)
	[ "$(printf '%s\n' "$output" | grep -c '/tests/lib/users\.bash:')" -eq 2 ]
}

@test "directories outside the test's own are made with public_dir, which removes them in teardown" {
	run uses 'mktemp'
	# (a mktemp in the test's own directory goes with it)
	printf '%s\n' "$output" | grep -v '/tests/lib/helper\.bash:' |
		grep -vE '\$\{?(T|BATS_TEST_TMPDIR|BATS_FILE_TMPDIR)([^[:alnum:]_]|$)' | grep . && false
	[ "$(printf '%s\n' "$output" | grep -c '/tests/lib/helper\.bash:')" -eq 1 ]
}

@test "a file that mounts a filesystem on the host unmounts MOUNTED in its local_teardown" {
	local f n=0
	# (the mounts in a mount namespace of their own, unshare --mount, go with it)
	for f in "$JOBREG_ROOT"/tests/*.bats; do
		grep -qE '^[[:space:]]*mount[[:space:]]+-t[[:space:]]+[a-z]+[[:space:]].*"\$T/' "$f" || continue
		n=$((n + 1))
		sed -n '/^local_teardown() {/,/^}/p' "$f" | grep -q 'umount "\$MOUNTED"' ||
			flunk "${f##*/} mounts, but its local_teardown does not unmount MOUNTED"
	done
	[ "$n" -gt 0 ]
}

@test "a file that sets a sysctl restores it in its local_teardown" {
	local f n=0
	for f in "$JOBREG_ROOT"/tests/*.bats; do
		[ "$f" != "$BATS_TEST_FILENAME" ] || continue
		grep -qE 'sysctl[[:space:]].*-w' "$f" || continue
		n=$((n + 1))
		sed -n '/^local_teardown() {/,/^}/p' "$f" | grep -q 'sysctl .*-w .*SYSCTL_SAVED' ||
			flunk "${f##*/} sets a sysctl, but its local_teardown does not restore it"
	done
	[ "$n" -gt 0 ]
}
