# Helpers for the tests of jobreg-get --is S --wait (`load lib/wait`, after
# lib/procs): a waiter in the background and what became of it.

# start_wait OUT ARGS...: jobreg-get ARGS in the background; when it ends,
# OUT holds "STATUS END_TIME" (bash's $EPOCHREALTIME) and OUT.err its stderr.
# The subshell's pid is in WAIT_PID.
start_wait() {
	local out=$1
	shift
	(
		rc=0
		jobreg-get "$@" 2>"$out.err" || rc=$?
		echo "$rc $EPOCHREALTIME" >"$out.tmp"
		mv "$out.tmp" "$out"
	) 3>&- &
	WAIT_PID=$!
	BG_PIDS+=("$WAIT_PID")
}

# asleep PID: PID (or the jobreg-get child of subshell PID) sleeps in poll(2),
# so its watch is armed.
asleep() {
	local p=$1 c
	c=$(cat "/proc/$p/task/$p/children" 2>/dev/null) && [ -n "$c" ] && p=${c%% *}
	case $(readlink "/proc/$p/exe" 2>/dev/null) in */jobreg-get) ;; *) return 1 ;; esac
	case $(cat "/proc/$p/wchan" 2>/dev/null) in *poll*) return 0 ;; esac
	return 1
}

# ended OUT: the waiter writing OUT has ended; its status in RC, the time in END.
ended() {
	[ -s "$1" ] || return 1
	read -r RC END <"$1"
}

# still_waiting OUT SECONDS: after SECONDS the waiter has not ended.
still_waiting() {
	sleep "$2"
	[ ! -e "$1" ]
}
