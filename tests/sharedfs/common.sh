# shellcheck shell=bash
# Sourced by tests/sharedfs/gluster and tests/sharedfs/ceph: what both
# setups share.  Each gives NAME (for messages), STATE (its directory),
# NS (the prefix of its network namespaces) and NET (the first three
# octets of its addresses) before sourcing this.
#
# The network: the servers in namespace $NS-srv, on a bridge at $NET.1;
# client N (1, 2, 3) in namespace $NS-cN at $NET.1N, joined to the bridge
# by a veth pair (cN inside, pN on the bridge).  These addresses exist only
# inside namespaces made here; the host's own network is never touched.
# A cut drops every packet on both ends of a client's veth (a blackhole
# qdisc: the carrier stays up, nothing is refused or reset), a heal removes
# both qdiscs.
#
# What is made is written down as it is made, so that "down" (and the
# trap of tests/sharedfs/run) can undo it after a failed or interrupted run:
#   $STATE/pids     "PID NAME" of every daemon, in the order started
#   $STATE/netns    every namespace made
# Mounts are the directories $STATE/m*, $STATE/d*.

say() { echo "$NAME: $*"; }
skip() { say "skipped: $*"; exit 77; }

# ms: milliseconds of the monotonic clock.
ms() {
	local up
	read -r up _ < /proc/uptime
	echo $(( ${up%.*} * 1000 + 10#${up#*.} * 10 ))
}

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds.
wait_for() {
	local end=$(( $(ms) + $1 * 1000 )); shift
	until "$@" >/dev/null 2>&1; do
		[ "$(ms)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# close_inherited: close every descriptor above 2, so that a daemon started
# from inside the suite (a remounted client) does not hold bats' pipes open
# and keep it waiting after the last test.
close_inherited() {
	local f n
	for f in "/proc/$BASHPID/fd"/*; do
		n=${f##*/}
		[ "$n" -gt 2 ] && eval "exec $n>&-" 2>/dev/null
	done
	return 0
}

# record_pid PID NAME: a daemon to end at teardown.
record_pid() { [ -n "$1" ] && echo "$1 $2" >> "$STATE/pids"; }

# in_srv CMD... / in_cli N CMD...: CMD in the server's or client N's
# network namespace (the host's mounts and files).
in_srv() { nsenter --net="/run/netns/$NS-srv" "$@"; }
in_cli() { local n=$1; shift; nsenter --net="/run/netns/$NS-c$n" "$@"; }

# net_up N: the server's namespace and N clients'.
net_up() {
	local n
	ip netns add "$NS-srv" && echo "$NS-srv" >> "$STATE/netns" &&
	ip -n "$NS-srv" link set lo up &&
	ip -n "$NS-srv" link add br0 type bridge &&
	ip -n "$NS-srv" addr add "$NET.1/24" dev br0 &&
	ip -n "$NS-srv" link set br0 up || return 1
	for ((n = 1; n <= $1; n++)); do
		ip netns add "$NS-c$n" && echo "$NS-c$n" >> "$STATE/netns" &&
		ip -n "$NS-c$n" link set lo up &&
		ip link add "c$n" netns "$NS-c$n" type veth peer name "p$n" netns "$NS-srv" &&
		ip -n "$NS-c$n" addr add "$NET.1$n/24" dev "c$n" &&
		ip -n "$NS-c$n" link set "c$n" up &&
		ip -n "$NS-srv" link set "p$n" master br0 &&
		ip -n "$NS-srv" link set "p$n" up || return 1
	done
	# (the bridge forwards at once: no listening or learning delay)
	ip -n "$NS-srv" link set br0 type bridge forward_delay 0 2>/dev/null
	return 0
}

# cut mN / heal mN: client N's link.  A mount dN is of client N too.
cut() {
	local n=${1#?}
	tc -n "$NS-c$n" qdisc add dev "c$n" root blackhole &&
	tc -n "$NS-srv" qdisc add dev "p$n" root blackhole
}
heal() {
	local n=${1#?} rc=0
	tc -n "$NS-c$n" qdisc del dev "c$n" root 2>/dev/null || rc=1
	tc -n "$NS-srv" qdisc del dev "p$n" root 2>/dev/null || rc=1
	return $rc
}

# unmount_all: every mount under $STATE (lazily when busy).
unmount_all() {
	local m
	for m in $(awk -v s="$STATE/" 'index($2, s) == 1 { print $2 }' /proc/mounts); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
}

# alive PID: PID exists and is not a zombie (a daemon whose starter has
# exited is reaped by init, whenever it gets to it).
alive() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# stop_pids SECONDS [GLOB...]: end the recorded daemons (those whose name
# matches a GLOB): TERM to each, then KILL to any still there after SECONDS
# (0: KILL at once, for a daemon whose state is thrown away anyway).
stop_pids() {
	local p n g left secs=$1
	[ -e "$STATE/pids" ] || return 0
	shift
	[ $# -gt 0 ] || set -- '*'
	while read -r p n; do
		for g in "$@"; do
			# shellcheck disable=SC2254  # a pattern
			case $n in $g) echo "$p $n"; break ;; esac
		done
	done < "$STATE/pids" > "$STATE/pids.stop"
	if [ "$secs" = 0 ]; then
		while read -r p n; do kill -9 "$p" 2>/dev/null; done < "$STATE/pids.stop"
		secs=1
	fi
	while read -r p n; do kill "$p" 2>/dev/null; done < "$STATE/pids.stop"
	for _ in $(seq $(( secs * 10 ))); do
		left=0
		while read -r p n; do alive "$p" && left=1; done < "$STATE/pids.stop"
		[ "$left" = 1 ] || return 0
		sleep 0.1
	done
	while read -r p n; do
		alive "$p" && kill -9 "$p" 2>/dev/null && say "$n ($p) did not end on TERM in $secs s: killed" >&2
	done < "$STATE/pids.stop"
	return 0
}

# net_down: delete the recorded namespaces.
net_down() {
	local n
	[ -e "$STATE/netns" ] || return 0
	for n in $(tac "$STATE/netns"); do ip netns del "$n" 2>/dev/null; done
	return 0
}

# leftovers PATTERN: say what is left (a process matching PATTERN, a mount
# or namespace of ours); false when something is.
leftovers() {
	local left rc=0
	# (a daemon's helper may linger as a zombie a moment)
	for _ in $(seq 30); do left=$(pgrep -a "$1") || break; sleep 0.1; done
	[ -z "$left" ] || { say "left running: $(echo "$left" | tr '\n' ';')" >&2; rc=1; }
	left=$(grep " $STATE/" /proc/mounts)
	[ -z "$left" ] || { say "left mounted: $(echo "$left" | tr '\n' ';')" >&2; rc=1; }
	left=$(ip netns list | grep "^$NS-")
	[ -z "$left" ] || { say "left: namespaces $(echo "$left" | tr '\n' ' ')" >&2; rc=1; }
	return $rc
}
