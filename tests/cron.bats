#!/usr/bin/env bats
# Cron as users run it: cron mails a job's output, not its exit status, so every
# failure must print something (SPEC §5 Logs and --timeout: a time limit and a lost
# run lock are said even with -q; a --chronic report ends with how the run ended),
# and an OK --chronic run must print nothing.  The README's and the man pages' cron
# lines run here as they are written (only durations, paths and commands put in).
#
# A real cron daemon (Debian's cron) runs in a private mount namespace, where tmpfs
# or bind mounts cover its crontabs, the system crontabs (/etc/crontab,
# /etc/cron.d), /run (its pid file) and /usr/sbin/sendmail, which is a small mail
# catcher writing each mail to a file: nothing on the host is changed, and the
# mounts go with the daemon.  All the lines run at one minute boundary, so the file
# waits once, up to ~100 s (65 s to the boundary, 30 s of the README's retries);
# the daemon is ended by its pid as soon as the mails are in, and in teardown_file
# whatever happened.
bats_require_minimum_version 1.5.0
load lib/helper

# The jobs and what each must mail: "JOB<TAB>the report's last line" (none: no mail).
expected_mails() {
	printf '%s\t%s\n' \
		to "jobreg-dispatch: to: run 1 timed out after 5s (TERM)" \
		fl "jobreg-dispatch: fl: run 1 failed: exit 1" \
		kl "jobreg-dispatch: kl: run 1 killed by SIGKILL" \
		sync "jobreg-dispatch: sync: run 1 timed out after 2s (TERM, then KILL)" \
		nightly "jobreg-dispatch: nightly: run 3 failed: exit 1, attempt 3 of 3"
	[ -n "$CRON_STRACE" ] && printf '%s\t%s\n' ll "jobreg-dispatch: ll: run 1 lost its run lock"
	return 0
}

setup_file() {
	CRON_SKIP='' CRON_STRACE=''
	if [ "$(id -u)" -ne 0 ]; then
		CRON_SKIP="needs root (mounts in a private namespace, root's crontab)"
	elif ! command -v cron >/dev/null 2>&1; then
		CRON_SKIP="cron is not installed (apt-get install cron)"
	elif [ ! -d /var/spool/cron/crontabs ]; then
		CRON_SKIP="no /var/spool/cron/crontabs: this cron is not Debian's"
	elif ! unshare -m --propagation private true 2>/dev/null; then
		CRON_SKIP="unshare -m does not work here (no mount namespaces or privilege)"
	fi
	if command -v strace >/dev/null 2>&1 &&
	   strace -o /dev/null -e trace=close -e inject=close:error=EIO:when=1 true >/dev/null 2>&1; then
		CRON_STRACE=1
	fi
	CRON_DIR=$BATS_FILE_TMPDIR/cron
	export CRON_SKIP CRON_STRACE CRON_DIR
	[ -z "$CRON_SKIP" ] || return 0
	start_cron
	wait_for_mails
	stop_cron
}

teardown_file() {
	stop_cron
}

local_setup() {
	[ -z "$CRON_SKIP" ] || skip "$CRON_SKIP"
	export REG=$CRON_DIR/reg JOBREG_DIR=$CRON_DIR/reg
}

# start_cron: the scripts, the crontab, a job held RUNNING, and the daemon; their
# pids in busy.pid and cron.pid.
start_cron() {
	local d=$CRON_DIR now at when old i
	mkdir -p "$d/bin" "$d/mail" "$d/reg"
	: > "$d/empty"
	# the mail catcher: each mail whole into mail/mail.N, once it has ended
	cat > "$d/sendmail" <<-EOF
	#!/bin/sh
	f=\$(mktemp "$BATS_FILE_TMPDIR/cron/mail/.in.XXXXXX") || exit 75
	cat > "\$f"
	mv "\$f" "$d/mail/mail.\${f##*.}"
	EOF
	# the README's mirror, one that outlives TERM
	cat > "$d/bin/mirror" <<-'EOF'
	#!/bin/sh
	trap '' TERM
	echo "mirror says: syncing"
	sleep 30
	EOF
	# the README's nightly.sh, failing every attempt; and one that fails only the first
	cat > "$d/bin/nightly.sh" <<-'EOF'
	#!/bin/sh
	echo "nightly says: attempt $JOBREG_ATTEMPT failed"
	exit 1
	EOF
	cat > "$d/bin/flaky.sh" <<-'EOF'
	#!/bin/sh
	[ "$JOBREG_ATTEMPT" -ge 2 ] || { echo "flaky says: not yet"; exit 1; }
	EOF
	chmod 755 "$d/sendmail" "$d/bin"/*
	# README: the nightly jobs' --late-after, given once before their first run
	JOBREG_DIR=$d/reg jobreg-set --late-after 25h nightly PENDING
	JOBREG_DIR=$d/reg jobreg-set --late-after 25h nightly2 PENDING
	# a DONE record a month old, for the housekeeping line to forget
	old=$(date -u -d '-30 days' +%Y-%m-%dT%H:%M:%SZ)
	printf '%s\n' version=1 status=DONE "since=$old" "started=$old" "ended=$old" exit=0 > "$d/reg/old"
	# for the metrics line, a registry with a corrupt record: data there, no mail
	mkdir -p "$d/metrics"
	echo garbage > "$d/metrics/bad"
	# a job already running, which the no-overlap lines must skip without a word
	JOBREG_DIR=$d/reg jobreg-dispatch busy sleep 300 < /dev/null > /dev/null 2>&1 3>&- &
	echo "$!" > "$d/busy.pid"
	for ((i = 0; i < 100; i++)); do
		[ "$(JOBREG_DIR=$d/reg jobreg-get busy 2>/dev/null)" != RUNNING ] || break
		sleep 0.1
	done
	# the next minute boundary with at least 8 s to go, as cron's fields (local time)
	now=$(date +%s)
	at=$((now - now % 60 + 60))
	((at - now >= 8)) || at=$((at + 60))
	echo "$at" > "$d/at"
	when=$(date -d "@$at" '+%M %H %d %m *')
	{
		echo "SHELL=/bin/sh"
		echo "PATH=$d/bin:$JOBREG_ROOT/bin:/usr/bin:/bin"
		echo "JOBREG_DIR=$d/reg"
		# the issue's cases
		echo "$when jobreg-dispatch -q --timeout 5s to -- sleep 30"
		echo "$when jobreg-dispatch --chronic fl -- false"
		echo "$when jobreg-dispatch -q --chronic kl -- sh -c 'kill -KILL \$\$'"
		echo "$when jobreg-dispatch -q --chronic ok -- echo fine"
		# (LeakSanitizer cannot work under ptrace, in a SANITIZE=1 build)
		[ -z "$CRON_STRACE" ] ||
			echo "$when ASAN_OPTIONS=detect_leaks=0 strace -o /dev/null -e trace=flock -e inject=flock:error=EBADFD:when=3 jobreg-dispatch -q --chronic ll -- sh -c 'echo ll says; exec sleep 30'"
		# README: cron without overlap, with a time limit (4m and 30s made 2s and 1s);
		# jobreg-dispatch(1): the same without a limit
		echo "$when jobreg-dispatch -q --timeout 2s --kill-after 1s sync -- mirror"
		echo "$when jobreg-dispatch -q --timeout 4m --kill-after 30s busy -- mirror"
		echo "$when jobreg-dispatch -q busy -- mirror"
		# README, jobreg-dispatch(1), jobreg(7): cron that mails only when it matters
		echo "$when jobreg-dispatch -q --chronic --retries 2 nightly -- nightly.sh"
		echo "$when jobreg-dispatch -q --chronic --retries 2 nightly2 -- flaky.sh"
		# README, jobreg-clear(1), jobreg(7): housekeeping; README: the metrics
		echo "$when jobreg-clear -q -a --if DONE --older-than 7d"
		echo "$when jobreg-get -q -d $d/metrics -a -P -o $d/jobreg.prom"
	} > "$d/crontab"
	# shellcheck disable=SC2016  # expanded by the namespace's sh
	unshare -m --propagation private sh -c '
		set -e
		d=$1
		mount -t tmpfs -o mode=1730 tmpfs /var/spool/cron/crontabs
		chgrp crontab /var/spool/cron/crontabs || true
		cp "$d/crontab" /var/spool/cron/crontabs/root
		chmod 600 /var/spool/cron/crontabs/root
		if [ -d /etc/cron.d ]; then mount -t tmpfs tmpfs /etc/cron.d; fi
		if [ -e /etc/crontab ]; then mount --bind "$d/empty" /etc/crontab; fi
		mount -t tmpfs tmpfs /run
		if [ -e /usr/sbin/sendmail ]; then
			mount --bind "$d/sendmail" /usr/sbin/sendmail
		else
			# no MTA: /usr/sbin as it is, seen through links, and the catcher
			mkdir "$d/sbin"
			mount --bind /usr/sbin "$d/sbin"
			mount -t tmpfs tmpfs /usr/sbin
			for f in "$d/sbin"/*; do ln -s "$f" /usr/sbin/; done
			cp "$d/sendmail" /usr/sbin/sendmail
		fi
		exec cron -f
	' sh "$d" < /dev/null > "$d/cron.out" 2>&1 3>&- &
	echo "$!" > "$d/cron.pid"
}

# wait_for_mails: until every mail expected is in and every job that must not
# mail has done its work (then 2 s more, for a mail that should not come), or 50 s
# after the minute.
wait_for_mails() {
	local d=$CRON_DIR at want n
	read -r at < "$d/at"
	want=$(expected_mails | wc -l)
	while (($(date +%s) < at + 50)); do
		n=$(find "$d/mail" -name 'mail.*' | wc -l)
		if ((n >= want)) && work_done; then
			sleep 2
			return 0
		fi
		sleep 1
	done
}

# work_done: the jobs that must not mail have ended as they should.  (The lines
# that find busy running leave no trace to wait for: they take milliseconds, and
# the mails waited for come seconds later.)
work_done() {
	local d=$CRON_DIR
	[ "$(JOBREG_DIR=$d/reg jobreg-get ok 2>/dev/null)" = DONE ] &&
		[ "$(JOBREG_DIR=$d/reg jobreg-get nightly2 2>/dev/null)" = DONE ] &&
		[ ! -e "$d/reg/old" ] && [ -e "$d/jobreg.prom" ]
}

# stop_cron: end the daemon and the running job, by their pids, if still there.
stop_cron() {
	local d=$CRON_DIR p i pid
	for p in cron busy; do
		[ -e "$d/$p.pid" ] || continue
		read -r pid < "$d/$p.pid"
		rm -f "$d/$p.pid"
		kill -TERM "$pid" 2>/dev/null || continue
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# subjects: each mail's file and Subject line into SUBJECTS (FILE<TAB>SUBJECT).
subjects() {
	local f s
	SUBJECTS=()
	for f in "$CRON_DIR"/mail/mail.*; do
		[ -e "$f" ] || continue
		s=$(grep -m 1 '^Subject: ' "$f") || s=
		SUBJECTS+=("$f"$'\t'"$s")
	done
}

# mails_for WORDS: how many mails have WORDS in their subject (the cron line's
# command), into N; the last one's file in MAIL.
mails_for() {
	local e
	subjects
	N=0 MAIL=
	for e in "${SUBJECTS[@]}"; do
		[[ ${e#*$'\t'} == *" $1"* ]] || continue
		N=$((N + 1)) MAIL=${e%%$'\t'*}
	done
}

# mail_of JOB: the one mail of the command of JOB ("... JOB -- ..."), its body
# into BODY (the lines after the headers); fails, showing what came, when there is
# not exactly one.
mail_of() {
	mails_for "$1 -- "
	if [ "$N" -ne 1 ]; then
		echo "$N mails for $1; the mails:"
		cat "$CRON_DIR"/mail/mail.* 2>/dev/null
		echo "cron said: $(cat "$CRON_DIR/cron.out")"
		return 1
	fi
	BODY=$(sed '1,/^$/d' "$MAIL")
}

# last_line_is TEXT: BODY ends with the line TEXT.
last_line_is() {
	[ "$(tail -n 1 <<< "$BODY")" = "$1" ] || flunk "the mail does not end with \"$1\": $BODY"
}

@test "cron: -q --timeout: a run the limit ended mails the line that says so" {
	mail_of to
	[ "$BODY" = "jobreg-dispatch: to: run 1 timed out after 5s (TERM)" ]
}

@test "cron: --chronic: a failed run that printed nothing mails how it ended" {
	mail_of fl
	[ "$BODY" = "jobreg-dispatch: fl: run 1 failed: exit 1" ]
	mail_of kl
	[ "$BODY" = "jobreg-dispatch: kl: run 1 killed by SIGKILL" ]
}

@test "cron: -q --chronic: a run that lost its run lock mails its log and the line that says so" {
	[ -n "$CRON_STRACE" ] || skip "no strace that can inject faults, to take the run lock away"
	mail_of ll
	[ "$(head -n 1 <<< "$BODY")" = "jobreg-dispatch: ll: run 1 lost its run lock; stopping it with TERM" ]
	grep -qx 'll says' <<< "$BODY"
	last_line_is "jobreg-dispatch: ll: run 1 lost its run lock"
}

@test "cron: -q --chronic: an OK run mails nothing, and no mail comes but the failures'" {
	mails_for "ok -- "
	[ "$N" -eq 0 ]
	[ "$(jobreg-get ok)" = DONE ]
	[ "$(field ok exit)" = 0 ]
	local n
	n=$(find "$CRON_DIR/mail" -name 'mail.*' | wc -l)
	[ "$n" -eq "$(expected_mails | wc -l)" ] || flunk "$n mails: $(cat "$CRON_DIR"/mail/mail.*)"
}

@test "cron: the README's line without overlap: a run the limit ended mails its output and the line; a run that finds the job running mails nothing" {
	mail_of sync
	[ "$BODY" = $'mirror says: syncing\njobreg-dispatch: sync: run 1 timed out after 2s (TERM, then KILL)' ]
	[ "$(field sync timed_out)" = 1 ]
	[ "$(field sync signal)" = KILL ]
	mails_for "busy -- "
	[ "$N" -eq 0 ]
	[ "$(field busy runs)" = 1 ]
}

@test "cron: the README's line that mails only when it matters: the last attempt's log and how it ended; a run OK on retry mails nothing" {
	mail_of nightly
	[ "$BODY" = $'nightly says: attempt 3 failed\njobreg-dispatch: nightly: run 3 failed: exit 1, attempt 3 of 3' ]
	[ "$(field nightly failures)" = 3 ]
	[ "$(field nightly late_after)" = 90000 ]
	mails_for "nightly2 -- "
	[ "$N" -eq 0 ]
	[ "$(jobreg-get nightly2)" = DONE ]
	[ "$(field nightly2 runs)" = 2 ]
	[ "$(field nightly2 exit)" = 0 ]
}

@test "cron: the README's housekeeping and metrics lines do their work and mail nothing" {
	mails_for "jobreg-clear "
	[ "$N" -eq 0 ]
	[ ! -e "$REG/old" ]
	mails_for "jobreg-get "
	[ "$N" -eq 0 ]
	grep -Eq '^jobreg_registry_up(\{[^}]*\})? 1$' "$CRON_DIR/jobreg.prom" || flunk "$(cat "$CRON_DIR/jobreg.prom")"
	grep -Eq '^jobreg_corrupt_records(\{[^}]*\})? 1$' "$CRON_DIR/jobreg.prom" || flunk "$(cat "$CRON_DIR/jobreg.prom")"
}
