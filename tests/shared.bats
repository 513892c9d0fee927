#!/usr/bin/env bats
# Shared registries (SPEC §1, §4, §6): a group of users, a sticky directory with
# fs.protected_regular, lock files opened for NFS.
bats_require_minimum_version 1.5.0
load lib/helper
load lib/users
# bats file_tags=multiuser

local_setup() {
	ID=$$
	SYSCTL_SAVED=
}

local_teardown() {
	[ -z "$SYSCTL_SAVED" ] || sysctl -q -w fs.protected_regular="$SYSCTL_SAVED" || true
}

# group_registry: users $U1 and $U2 in group $G, and the registry
# $PUBLIC/reg made as the README says: install -d -m 2775 -g GROUP DIR.
group_registry() {
	need_users
	G=jrg${ID}g U1=jrg${ID}a U2=jrg${ID}b
	add_group "$G"
	add_user "$U1" "$G"
	add_user "$U2" "$G"
	public_dir
	export JOBREG_DIR=$PUBLIC/reg
	install -d -m 2775 -g "$G" "$JOBREG_DIR"
}

# mode_of FILE: "MODE GROUP" of FILE.
mode_of() {
	stat -c '%a %G' "$1"
}

@test "in a group-writable registry every file jobreg creates is group-readable and -writable under umask 022" {
	group_registry
	as "$U1" jobreg-set a RUNNING
	as "$U1" jobreg-dispatch b true
	[ "$(mode_of "$JOBREG_DIR/a")" = "664 $G" ]
	[ "$(mode_of "$JOBREG_DIR/.a.lock")" = "664 $G" ]
	[ "$(mode_of "$JOBREG_DIR/b")" = "664 $G" ]
	[ "$(mode_of "$JOBREG_DIR/.b.lock")" = "664 $G" ]
	[ "$(mode_of "$JOBREG_DIR/.b.run")" = "664 $G" ]
	# a replaced record gets the mode again (its temp file is a new file)
	as "$U1" jobreg-set a DONE
	[ "$(mode_of "$JOBREG_DIR/a")" = "664 $G" ]
	[ -z "$(find "$JOBREG_DIR" -name '.*.tmp*')" ]
}

@test "a second user of the group can get, set, dispatch and clear the first user's jobs" {
	group_registry
	as "$U1" jobreg-set --exit 0 built DONE
	as "$U1" jobreg-dispatch nightly true
	as "$U1" jobreg-set queued PENDING
	run --separate-stderr as "$U2" jobreg-get built nightly queued
	[ "$status" -eq 0 ]
	[ "$output" = $'DONE\nDONE\nPENDING' ]
	run --separate-stderr as "$U2" jobreg-set --if DONE built RUNNING
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	run --separate-stderr as "$U2" jobreg-dispatch nightly true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(sed -n 's/^runs=//p' "$JOBREG_DIR/nightly")" = 2 ]
	run --separate-stderr as "$U2" jobreg-clear queued built
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ ! -e "$JOBREG_DIR/queued" ]
	[ ! -e "$JOBREG_DIR/built" ]
	# and back: the first user works on what the second one wrote
	run --separate-stderr as "$U1" jobreg-dispatch nightly true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(stat -c %U "$JOBREG_DIR/nightly")" = "$U1" ]
}

@test "a registry that is not group-writable keeps files at 0666 & ~umask" {
	need_users
	public_dir
	export JOBREG_DIR=$PUBLIC/reg
	install -d -m 2755 "$JOBREG_DIR"
	(umask 022 && jobreg-set a RUNNING && jobreg-dispatch b true)
	[ "$(stat -c %a "$JOBREG_DIR/a")" = 644 ]
	[ "$(stat -c %a "$JOBREG_DIR/.a.lock")" = 644 ]
	[ "$(stat -c %a "$JOBREG_DIR/.b.run")" = 644 ]
	(umask 077 && jobreg-set c DONE)
	[ "$(stat -c %a "$JOBREG_DIR/c")" = 600 ]
}

@test "in a group-writable registry the umask still takes away what it takes from others" {
	group_registry
	as "$U1" sh -c 'umask 027; exec jobreg-set a RUNNING'
	[ "$(stat -c %a "$JOBREG_DIR/a")" = 660 ]
	[ "$(stat -c %a "$JOBREG_DIR/.a.lock")" = 660 ]
}

# --- fs.protected_regular in a sticky registry ---------------------------------

# sticky_registry: a 1777 registry with fs.protected_regular=1 (restored in
# teardown) and another user $U2 who has planted .cronjob.lock there.
sticky_registry() {
	need_users
	[ -w /proc/sys/fs/protected_regular ] || skip "fs.protected_regular cannot be set here"
	SYSCTL_SAVED=$(sysctl -n fs.protected_regular)
	sysctl -q -w fs.protected_regular=1
	G=jrp${ID}g U2=jrp${ID}b
	add_group "$G"
	add_user "$U2" "$G"
	public_dir
	export JOBREG_DIR=$PUBLIC/reg
	install -d -m 1777 "$JOBREG_DIR"
	as "$U2" touch "$JOBREG_DIR/.cronjob.lock"
	[ "$(stat -c %U "$JOBREG_DIR/.cronjob.lock")" = "$U2" ]
	# what the kernel refuses: O_CREAT on another user's file in a sticky directory
	run sh -c ': >> "$1"' sh "$JOBREG_DIR/.cronjob.lock"
	[ "$status" -ne 0 ] || skip "this kernel does not enforce fs.protected_regular"
}

@test "another user's lock file in a sticky registry does not lock root's cron job out" {
	sticky_registry
	run --separate-stderr jobreg-set cronjob RUNNING
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	run --separate-stderr jobreg-set cronjob PENDING
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	run --separate-stderr jobreg-dispatch cronjob true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jobreg-get cronjob)" = DONE ]
	# the run lock planted too
	as "$U2" touch "$JOBREG_DIR/.other.run" "$JOBREG_DIR/.other.lock"
	run --separate-stderr jobreg-dispatch other true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
}

@test "clear repairs a sticky registry where another user planted the lock files" {
	sticky_registry
	printf 'version=1\nstatus=DONE\nsince=2026-01-01T00:00:00Z\n' > "$JOBREG_DIR/cronjob"
	run --separate-stderr jobreg-clear cronjob
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ ! -e "$JOBREG_DIR/cronjob" ]
	[ ! -e "$JOBREG_DIR/.cronjob.lock" ]
	jobreg-set cronjob RUNNING
	[ "$(stat -c %U "$JOBREG_DIR/.cronjob.lock")" = root ]
}

# --- locks for NFS -------------------------------------------------------------

@test "locks taken exclusively are opened read-write, shared probes read-only" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	traced -f -o "$BATS_TEST_TMPDIR/set" -e trace=openat jobreg-set job RUNNING
	grep -q '"\.job\.lock", O_RDWR|' "$BATS_TEST_TMPDIR/set"
	traced -f -o "$BATS_TEST_TMPDIR/dispatch" -e trace=openat jobreg-dispatch run sh -c 'jobreg-get run > "$0"' "$BATS_TEST_TMPDIR/seen"
	[ "$(cat "$BATS_TEST_TMPDIR/seen")" = RUNNING ]
	grep -q '"\.run\.lock", O_RDWR|' "$BATS_TEST_TMPDIR/dispatch"
	grep -q '"\.run\.run", O_RDWR|' "$BATS_TEST_TMPDIR/dispatch"
	# the reader inside the run probed the run lock read-only
	grep -q '"\.run\.run", O_RDONLY|' "$BATS_TEST_TMPDIR/dispatch"
}

@test "a read-only lock file still works for a user who may not open it read-write" {
	command -v strace >/dev/null 2>&1 || skip "strace not installed"
	group_registry
	jobreg-set job DONE
	jobreg-dispatch run true
	chmod 0444 "$JOBREG_DIR/.job.lock" "$JOBREG_DIR/.run.lock" "$JOBREG_DIR/.run.run"
	run --separate-stderr traced -f -o "$BATS_TEST_TMPDIR/trace" -e trace=openat \
		setpriv --reuid="$U1" --regid="$G" --init-groups env PATH="$PUBLIC_BIN:$PATH" JOBREG_DIR="$JOBREG_DIR" \
		jobreg-set job RUNNING
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jobreg-get job)" = RUNNING ]
	grep -q '"\.job\.lock", O_RDWR|.* = -1 EACCES' "$BATS_TEST_TMPDIR/trace"
	grep -q '"\.job\.lock", O_RDONLY|.* = [0-9]' "$BATS_TEST_TMPDIR/trace"
	run --separate-stderr as "$U1" jobreg-dispatch run true
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jobreg-get run)" = DONE ]
}
