# Helpers for tests that need other users (`load lib/users`): a group and users
# with names unique to this test process, removed again in users_teardown
# (helper.bash's teardown calls it, even when the test fails); public_dir
# (helper.bash) makes a directory for a registry they can reach
# ($BATS_TEST_TMPDIR is private to root).

USERS_MADE=()
GROUPS_MADE=()

# need_users: skip unless we are root with useradd, groupadd and setpriv.
need_users() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to add users"
	local c
	for c in useradd userdel groupadd groupdel setpriv; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
	done
	public_bin
}

# retry CMD...: useradd and friends fail while another process holds /etc/passwd's lock.
retry_accounts() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$@" 2>/dev/null && return 0
		sleep 0.3
	done
	"$@"
}

# add_group NAME / add_user NAME [GROUP]: create them (no home, no login
# shell; without GROUP, useradd's default group).
add_group() {
	retry_accounts groupadd "$1"
	GROUPS_MADE+=("$1")
}
add_user() {
	retry_accounts useradd -M -N ${2:+-g "$2"} -s /usr/sbin/nologin "$1"
	USERS_MADE+=("$1")
}

users_teardown() {
	local u g
	for u in "${USERS_MADE[@]}"; do retry_accounts userdel "$u" || true; done
	for g in "${GROUPS_MADE[@]}"; do retry_accounts groupdel "$g" || true; done
	USERS_MADE=() GROUPS_MADE=()
}

# as USER CMD...: run CMD as USER (with USER's groups) under umask 022, jobreg's
# commands found in the copy every user can reach that need_users made, the rest on
# our PATH.
as() {
	local user=$1
	shift
	[ -n "$PUBLIC_BIN" ] || { echo "as: no public_bin (call need_users first)" >&2; return 1; }
	setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups \
		env PATH="$PUBLIC_BIN:$PATH" JOBREG_DIR="$JOBREG_DIR" sh -c 'umask 022; exec "$@"' sh "$@"
}
