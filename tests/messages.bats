#!/usr/bin/env bats
# What the commands say when they cannot do as asked (SPEC §5 common
# options, §7): a usage error names the fix, never takes a slip for a job
# id, and every message points to what to do next.
bats_require_minimum_version 1.5.0
load lib/helper

# nothing_written: the registry was not even made.
nothing_written() {
	[ ! -e "$REG" ] || flunk "the registry was written: $(ls -A "$REG")"
}

@test "a duration followed by a unit as a word of its own is a usage error naming the fix, for every option that takes one" {
	local pause_ran=$T/ran
	run --separate-stderr jobreg-set --pause --for 2 hours job
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-set: '--for 2 hours': the unit goes with the number: did you mean --for 2h? Try 'jobreg-set --help'." ]
	run --separate-stderr jobreg-dispatch --every 5 min job touch "$pause_ran"
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: '--every 5 min': the unit goes with the number: did you mean --every 5m? Try 'jobreg-dispatch --help'." ]
	[ ! -e "$pause_ran" ]
	nothing_written
	# every option that takes a duration, in each way of giving it, any case
	local cmd
	for cmd in "jobreg-set --ttl 30 Seconds job RUNNING:--ttl 30s" \
		"jobreg-set --late-after 25 HOURS job PENDING:--late-after 25h" \
		"jobreg-set --cancel --kill-after 3 sec job:--kill-after 3s" \
		"jobreg-set --cancel --wait=1 minute job:--wait=1m" \
		"jobreg-get --is OK --wait 1.5 hr job:--wait 1.5h" \
		"jobreg-get -w 2 s job:-w 2s" \
		"jobreg-get -w2 mins job:-w2m" \
		"jobreg-clear --older-than 7 days -a:--older-than 7d" \
		"jobreg-set --pause --for 2 weeks job:--for 14d" \
		"jobreg-dispatch --wait 1 h job true:--wait 1h" \
		"jobreg-dispatch --timeout 30 m job true:--timeout 30m" \
		"jobreg-dispatch --timeout 1 --kill-after 5 secs job true:--kill-after 5s" \
		"jobreg-dispatch --retries 1 --retry-delay 1 d job true:--retry-delay 1d" \
		"jobreg-dispatch --late-after 1 w job true:--late-after 7d" \
		"jobreg-dispatch --lock-wait 3 second job true:--lock-wait 3s"; do
		# shellcheck disable=SC2086  # the words of the command, split on purpose
		run --separate-stderr ${cmd%%:*}
		[ "$status" -eq 64 ] || flunk "${cmd%%:*}: exit $status, $stderr"
		[[ $stderr == *": the unit goes with the number: did you mean ${cmd#*:}? Try '"* ]] ||
			flunk "${cmd%%:*}: $stderr"
	done
	nothing_written
}

@test "a duration with its unit, or a job whose id only looks like a unit after another option, is taken as before" {
	run -0 jobreg-set --ttl 30s m RUNNING
	run -0 jobreg-set -m h job DONE
	[ "$(jobreg-get m)" = RUNNING ]
	run -0 jobreg-dispatch --wait 2m s true
	[ "$(jobreg-get s)" = DONE ]
	# after "--", a word is an operand, as always
	run -0 jobreg-dispatch --timeout 1h -- d true
	[ "$(jobreg-get d)" = DONE ]
}

@test "an unknown long option suggests the nearest known one, and a word far from every option gets no guess" {
	run --separate-stderr jobreg-dispatch --timout 5 job true
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: unknown option '--timout': did you mean --timeout? Try 'jobreg-dispatch --help'." ]
	run --separate-stderr jobreg-dispatch --timout=5 job true
	[ "$stderr" = "jobreg-dispatch: unknown option '--timout': did you mean --timeout? Try 'jobreg-dispatch --help'." ]
	run --separate-stderr jobreg-get --jsno job
	[ "$stderr" = "jobreg-get: unknown option '--jsno': did you mean --json? Try 'jobreg-get --help'." ]
	run --separate-stderr jobreg-set --cancle job
	[ "$stderr" = "jobreg-set: unknown option '--cancle': did you mean --cancel? Try 'jobreg-set --help'." ]
	run --separate-stderr jobreg-clear --olderthan 1d -a
	[ "$stderr" = "jobreg-clear: unknown option '--olderthan': did you mean --older-than? Try 'jobreg-clear --help'." ]
	run --separate-stderr jobreg-get --frobnicate job
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-get: unknown option '--frobnicate'. Try 'jobreg-get --help'." ]
	nothing_written
}

@test "--slots with two groups in one word says to give one group per --slots" {
	run --separate-stderr jobreg-dispatch --slots a:2,b:1 job true
	[ "$status" -eq 64 ]
	[ "$stderr" = "jobreg-dispatch: --slots a:2,b:1: one group per --slots; give one --slots NAME:N for each group. Try 'jobreg-dispatch --help'." ]
	nothing_written
}

@test "--faillog and --log without a log say that only --log or --chronic keeps one" {
	jobreg-dispatch job false || true
	run --separate-stderr jobreg-get --faillog job
	[ "$status" -eq 1 ]
	[ "$stderr" = "jobreg-get: job: no log of a failed run (only a run dispatched with --log or --chronic keeps one)" ]
	run --separate-stderr jobreg-get --log job
	[ "$status" -eq 1 ]
	[ "$stderr" = "jobreg-get: job: no log (only a run dispatched with --log or --chronic keeps one)" ]
}

@test "a registry the user cannot write to is named in the message, not a temp or lock file of it" {
	need_setpriv
	public_dir jobreg-ro
	local reg=$PUBLIC/reg
	jobreg-set -d "$reg" old DONE
	chmod 755 "$reg"
	for cmd in "jobreg-set -d $reg old PENDING" "jobreg-set -d $reg new PENDING" \
		"jobreg-dispatch -d $reg new true" "jobreg-set -d $reg --pause old"; do
		# shellcheck disable=SC2086  # the words of the command, split on purpose
		run --separate-stderr as_nobody $cmd
		[ "$status" -eq 77 ] || flunk "$cmd: exit $status: $stderr"
		[[ $stderr == "jobreg-"*": "*": cannot write to registry $reg: Permission denied" ]] ||
			flunk "$cmd: $stderr"
	done
	[ "$(jobreg-get -d "$reg" old)" = DONE ]
}

@test "--chronic's last line of a retried run says which attempt it was" {
	run --separate-stderr jobreg-dispatch -q --chronic --retries 2 --retry-delay 0 job \
		sh -c 'echo "attempt $JOBREG_ATTEMPT"; exit 3'
	[ "$status" -eq 3 ]
	[ "$stderr" = $'attempt 3\njobreg-dispatch: job: run 3 failed: exit 3, attempt 3 of 3' ]
	# without --retries there are no attempts to count
	run --separate-stderr jobreg-dispatch -q --chronic job false
	[ "$stderr" = "jobreg-dispatch: job: run 4 failed: exit 1" ]
}
