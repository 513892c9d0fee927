#!/usr/bin/env bats
# Shell completion: src/completion/jobreg.bash (bash) and src/completion/_jobreg
# (zsh), loaded into real shells and asked for candidates.
bats_require_minimum_version 1.5.0
load lib/helper

BASH_COMPLETION=/usr/share/bash-completion/bash_completion

local_setup() {
	T=$BATS_TEST_TMPDIR
	COMPDIR=$JOBREG_ROOT/src/completion
	MODES=(plain)
	if [ -r "$BASH_COMPLETION" ]; then MODES+=(bash-completion); fi
}

# at_end_skip_without_bash_completion: the checks ran without bash-completion
# only; say so rather than pass as if both had run.
at_end_skip_without_bash_completion() {
	[ -r "$BASH_COMPLETION" ] ||
		skip "bash-completion is not installed: checked without it only"
}

# bcomp MODE WORD...: complete the command line WORD... (the last word is
# the one being completed, the cursor at its end) in a fresh bash, with
# bash-completion loaded first when MODE is bash-completion; the function
# is the one `complete -p` names for the command.  The candidates, sorted,
# one a line, in $output.  Words are as bash splits them: --is=RUN is the
# three words --is, =, RUN.  What the function printed on stderr (bash's own
# errors in it) is in $stderr.
bcomp() {
	run --separate-stderr bash --norc --noprofile -c '
		mode=$1 file=$2; shift 2
		if [ "$mode" = bash-completion ]; then . /usr/share/bash-completion/bash_completion || exit 2; fi
		. "$file" || exit 2
		spec=$(complete -p "${1##*/}") || exit 3
		func=${spec#*-F }; func=${func%% *}
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE= prev=
		for w in "$@"; do
			if [ -n "$COMP_LINE" ] && [ "$w" != = ] && [ "$prev" != = ]; then COMP_LINE+=" "; fi
			COMP_LINE+=$w prev=$w
		done
		COMP_POINT=${#COMP_LINE}
		"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort -u' bcomp "$1" "$COMPDIR/jobreg.bash" "${@:2}"
	[ "$status" -eq 0 ] || { echo "bash exited $status: $stderr"; return 1; }
}

# zcomp LINE: complete LINE in an interactive zsh -f (see tests/zcomplete.zsh),
# whose compinit keeps one dump for the file's tests, as a user's does; the
# candidates, sorted, one a line, in $output.
zcomp() {
	run --separate-stderr timeout 20 zsh -f "$BATS_TEST_DIRNAME/zcomplete.zsh" "$COMPDIR" "$1" \
		"$BATS_FILE_TMPDIR/zcompdump"
	[ "$status" -eq 0 ] || { echo "zsh harness exited $status: $stderr"; return 1; }
}

need_zsh() {
	command -v zsh >/dev/null || skip "zsh is not installed"
	zsh -f -c 'zmodload zsh/zpty' 2>/dev/null || skip "zsh has no zsh/zpty module"
}

# has WORD...: every WORD is a line of $output.
has() {
	local w line
	local -A lines=()   # (keys "x" + the line: a key cannot be empty)
	while IFS= read -r line; do lines[x$line]=1; done <<<"$output"
	for w in "$@"; do
		[ -n "${lines[x$w]:-}" ] || { echo "missing '$w' in: $output"; return 1; }
	done
}

# is WORD...: $output is exactly these lines (given sorted).
is() {
	[ "$output" = "$(printf '%s\n' "$@")" ] || { echo "got '$output', want '$*'"; return 1; }
}

# help_options CMD: the options CMD --help lists, one a line.
help_options() {
	"$1" --help | grep -E '^ +-' | grep -oE -- '(^| )(-[A-Za-z]|--[a-z][a-z-]+)(,| |$)' |
		tr -d ' ,' | LC_ALL=C sort -u
}

# signame_names: the names of src/util/signame.c's table, one a line.
signame_names() {
	grep -oE '\{ *SIG[A-Z0-9]+, *"[A-Z0-9]+" *\}' "$JOBREG_ROOT/src/util/signame.c" | sed 's/.*"\(.*\)".*/\1/'
}

# all_accepted WORD...: jobreg-dispatch --signal takes every WORD (a run
# with a time limit, which true never meets, in a registry of its own).
all_accepted() {
	local w i=0
	[ $# -gt 0 ] || { echo "no signal names"; return 1; }
	for w in "$@"; do
		i=$((i + 1))
		jobreg-dispatch -q -d "$T/signals" --timeout 1h --signal "$w" "s$i" true ||
			{ echo "jobreg-dispatch refuses --signal $w"; return 1; }
	done
}

# two_registries: $T/a holds alpha and beta, $JOBREG_DIR holds gamma.
two_registries() {
	jobreg-set -d "$T/a" alpha DONE
	jobreg-set -d "$T/a" beta PENDING
	jobreg-set gamma RUNNING
}

# ---- bash ------------------------------------------------------------------

@test "bash completion is bound to all four commands and offers each one's options" {
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get -
		has -l --long -j --json -P --prometheus -s -o -a --all --is --wait -d --dir -w --lock-wait -q -h -V
		bcomp "$mode" jobreg-set --
		has --if --owner --ttl --note --exit --force --dir --lock-wait --quiet --help --version
		bcomp "$mode" jobreg-clear -
		has --if --stale --older-than --force -n --dry-run -v --verbose -a --all -d -w -q -h -V
		bcomp "$mode" jobreg-dispatch --
		has --once --retry-failed --clear --wait --timeout --kill-after --signal --conflict-exit-code --note
		bcomp "$mode" jobreg-clear --dr
		is --dry-run
	done
	at_end_skip_without_bash_completion
}

@test "bash completion offers the options of 0.4: dispatch's line and slots, set's cancel and pause, get's slots" {
	two_registries
	mkdir "$T/other"
	printf '#!/bin/sh\n[ "$1 $2 $3" = "-d %s --slots" ] && printf "db\\t1\\tfree\\ndb\\t2\\theld\\tjob\\ngpu\\t1\\tfree\\n"\n' \
		"$T/a" >"$T/other/jobreg-get"
	chmod +x "$T/other/jobreg-get"
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-dispatch --
		has --coalesce --replace --slots --every
		bcomp "$mode" jobreg-set --
		has --cancel --signal --kill-after --wait --pause --for --resume
		bcomp "$mode" jobreg-get --sl
		is --slots
		bcomp "$mode" jobreg-set --cancel --signal KI
		is KILL
		bcomp "$mode" jobreg-set --cancel --wait ""
		is inf
		# the operands: jobs after --cancel, --pause and --resume, not a status
		bcomp "$mode" jobreg-set -d "$T/a" --cancel alpha ""
		is alpha beta
		bcomp "$mode" jobreg-set -d "$T/a" --pause --for 1h beta ""
		is alpha beta
		bcomp "$mode" jobreg-set -d "$T/a" alpha ""
		is DONE PENDING RUNNING
		# slot groups after --slots, each once
		bcomp "$mode" "$T/other/jobreg-get" -d "$T/a" --slots ""
		is db gpu
	done
	at_end_skip_without_bash_completion
}

@test "bash completion offers the slot groups after get --slots without an error, and after dispatch --slots as NAME:N" {
	jobreg-dispatch -d "$T/a" --slots db:2 one true
	jobreg-dispatch -d "$T/a" --slots gpu:1 --slots heavy:3 two true
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get -d "$T/a" --slots ""
		is db gpu heavy
		[ -z "$stderr" ] || flunk "bash said: $stderr"
		bcomp "$mode" jobreg-get -d "$T/a" --slots db ""
		is db gpu heavy
		[ -z "$stderr" ] || flunk "bash said: $stderr"
		# each group with its N, as every dispatcher of it must give
		bcomp "$mode" jobreg-dispatch -d "$T/a" --slots ""
		is db:2 gpu:1 heavy:3
		[ -z "$stderr" ] || flunk "bash said: $stderr"
		bcomp "$mode" jobreg-dispatch -d "$T/a" --once --slots h
		is heavy:3
		bcomp "$mode" jobreg-dispatch -d "$T/a" --slots = g
		is gpu:1
		# a registry with no group offers none, and says nothing
		bcomp "$mode" jobreg-dispatch -d "$T/none" --slots ""
		is ""
		[ -z "$stderr" ] || flunk "bash said: $stderr"
	done
	at_end_skip_without_bash_completion
}

@test "bash completion offers no option after the first job id, as the commands take none there" {
	two_registries
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get gamma -
		is ""
		bcomp "$mode" jobreg-clear -n gamma --
		is ""
	done
	at_end_skip_without_bash_completion
}

@test "every option that a command's --help lists is offered by the bash completion" {
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		bcomp plain "$cmd" -
		for opt in $(help_options "$cmd"); do has "$opt"; done
	done
}

@test "bash completion offers the status words after --is, --if and -s, also after a comma or =" {
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get --is RUN
		is RUNNING
		bcomp "$mode" jobreg-get --is ""
		is CANCELLED DONE FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
		bcomp "$mode" jobreg-clear --if DONE,
		is DONE,CANCELLED DONE,DONE DONE,FAILED DONE,LATE DONE,OK DONE,OVERDUE DONE,PAUSED DONE,PENDING DONE,RUNNING DONE,STALE DONE,WARNING
		bcomp "$mode" jobreg-clear -a --if DONE,f
		is DONE,FAILED
		bcomp "$mode" jobreg-get -a -s OK,pa
		is OK,PAUSED
		bcomp "$mode" jobreg-set --if = ""
		is CANCELLED DONE FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
		bcomp "$mode" jobreg-get -a -s st
		is STALE
		bcomp "$mode" jobreg-set job ""
		is DONE PENDING RUNNING
	done
	at_end_skip_without_bash_completion
}

@test "bash completion offers the job ids of the registry named by -d, else \$JOBREG_DIR, else the default" {
	two_registries
	jobreg-set -d "$T/xdg/jobreg" delta DONE
	jobreg-set -d "$T/a b" spaced DONE
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get -d "$T/a" ""
		is alpha beta
		bcomp "$mode" jobreg-clear -n --dir = "$T/a" b
		is beta
		bcomp "$mode" jobreg-dispatch -d"$T/a" --once ""
		is alpha beta
		bcomp "$mode" jobreg-set -m "-d x" ""
		is gamma
		bcomp "$mode" jobreg-get -l alpha ""
		is gamma
		JOBREG_DIR='' XDG_STATE_HOME=$T/xdg bcomp "$mode" jobreg-clear ""
		is delta
		bcomp "$mode" jobreg-get -d "$T/none" ""
		is ""
		[ ! -e "$T/none" ]
		# DIR as typed: quoted, escaped, or under ~.
		bcomp "$mode" jobreg-get -d "'$T/a b'" ""
		is spaced
		bcomp "$mode" jobreg-get -d "$(printf %q "$T/a b")" ""
		is spaced
		HOME=$T bcomp "$mode" jobreg-get -d "~/a" ""
		is alpha beta
	done
	at_end_skip_without_bash_completion
}

@test "bash completion asks jobreg-get, the one beside the command completed, for the job ids" {
	mkdir "$T/other"
	printf '#!/bin/sh\n[ "$1 $2 $3" = "-d %s -a" ] && echo "asked PENDING"\n' "$T/a" >"$T/other/jobreg-get"
	chmod +x "$T/other/jobreg-get"
	for mode in "${MODES[@]}"; do
		bcomp "$mode" "$T/other/jobreg-clear" -d "$T/a" ""
		is asked
	done
	at_end_skip_without_bash_completion
}

@test "bash completion offers directories after -d, files after -o, signals after --signal and inf after --wait" {
	mkdir -p "$T/dir1"
	: >"$T/file1"
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get -d "$T/"
		is "$T/dir1"
		bcomp "$mode" jobreg-get -o "$T/fi"
		is "$T/file1"
		bcomp "$mode" jobreg-dispatch --timeout 1m --signal TE
		is TERM
		bcomp "$mode" jobreg-dispatch --signal = SIGKI
		is SIGKILL
		bcomp "$mode" jobreg-dispatch --signal rtmin+
		has RTMIN+1 RTMIN+3
		bcomp "$mode" jobreg-get --is DONE --wait ""
		is inf
		bcomp "$mode" jobreg-clear --older-than ""
		is ""
	done
	at_end_skip_without_bash_completion
}

@test "bash completion of --signal offers exactly the names jobreg-dispatch --signal takes, no shell pseudo-signal" {
	local offered='' name
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-dispatch --timeout 1m --signal ""
		[ -z "$offered" ] || [ "$output" = "$offered" ]
		offered=$output
		# not bash's EXIT, DEBUG, ERR, RETURN, nor its JUNK(32) for an unnamed number
		[ -z "$(grep -E '^(EXIT|DEBUG|ERR|RETURN)$|JUNK|[()]' <<<"$offered")" ]
		# every name of src/util/signame.c, and the real-time ones as kill -l names them
		for name in $(signame_names) RTMIN RTMIN+1 RTMIN+15 RTMAX-14 RTMAX-1 RTMAX; do has "$name"; done
		# with SIG once SI is typed, in any case
		bcomp "$mode" jobreg-dispatch --signal Si
		[ "$output" = "$(sed 's/^/SIG/' <<<"$offered")" ]
		bcomp "$mode" jobreg-dispatch --signal = sigrtmax-1
		is SIGRTMAX-1 SIGRTMAX-10 SIGRTMAX-11 SIGRTMAX-12 SIGRTMAX-13 SIGRTMAX-14
		bcomp "$mode" jobreg-dispatch --signal e
		is ""
	done
	# and jobreg-dispatch takes each of them, bare and with SIG
	all_accepted $offered $(sed 's/^/SIG/' <<<"$offered")
	at_end_skip_without_bash_completion
}

@test "bash completion knows jobreg-get's --status and --output, the long forms of -s and -o" {
	two_registries
	: >"$T/file1"
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get --st
		is --status
		bcomp "$mode" jobreg-get -a --out
		is --output
		bcomp "$mode" jobreg-get -a --status ""
		is CANCELLED DONE FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
		bcomp "$mode" jobreg-get --status = DONE,f
		is DONE,FAILED
		bcomp "$mode" jobreg-get -P --output "$T/fi"
		is "$T/file1"
		bcomp "$mode" jobreg-get --output = "$T/fi"
		is "$T/file1"
		# their values are not job ids: the job ids come after them
		bcomp "$mode" jobreg-get --status DONE --output "$T/out" -d "$T/a" ""
		is alpha beta
	done
	at_end_skip_without_bash_completion
}

@test "bash completion of jobreg-dispatch completes the command after JOB or after -- as a command" {
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-dispatch job -- ech
		has echo
		bcomp "$mode" jobreg-dispatch --once -d "$T" job ech
		has echo
		bcomp "$mode" jobreg-dispatch job -
		is --
		: >"$T/arg1"
		bcomp "$mode" jobreg-dispatch job -- cat "$T/ar"
		is "$T/arg1"
	done
	at_end_skip_without_bash_completion
}

@test "with bash-completion, a command run by jobreg-dispatch completes with its own completion" {
	[ -r "$BASH_COMPLETION" ] || skip "bash-completion is not installed"
	two_registries
	bcomp bash-completion jobreg-dispatch job -- jobreg-clear --dr
	is --dry-run
	bcomp bash-completion jobreg-dispatch -m note job -- jobreg-get -d "$T/a" --is DONE ""
	is alpha beta
	bcomp bash-completion jobreg-dispatch --wait = 5m job jobreg-get --is R
	is RUNNING
}

# ---- zsh -------------------------------------------------------------------

@test "zsh loads the completion through compinit and binds it to all four commands" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	run --separate-stderr zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D
		print -r -- $_comps[jobreg-get] $_comps[jobreg-set] $_comps[jobreg-clear] $_comps[jobreg-dispatch]' \
		zsh "$COMPDIR"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "_jobreg _jobreg _jobreg _jobreg" ]
}

@test "zsh completion offers each command's options, every one its --help lists" {
	need_zsh
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		zcomp "$cmd -"
		for opt in $(help_options "$cmd"); do has "$opt"; done
	done
	zcomp "jobreg-get -"
	has -P --prometheus -s -o --wait
	zcomp "jobreg-dispatch --"
	has --retry-failed --timeout --kill-after --signal
	zcomp "jobreg-clear -q --dr"
	is --dry-run
	zcomp "jobreg-get alpha -"
	is ""
}

@test "zsh completion offers the status words after --is, --if and -s, also after a comma or =" {
	need_zsh
	zcomp "jobreg-get --is RUN"
	is RUNNING
	zcomp "jobreg-get --is="
	is CANCELLED DONE FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
	zcomp "jobreg-clear -a --if DONE,"
	has CANCELLED FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
	zcomp "jobreg-get -a -s ST"
	is STALE
	zcomp "jobreg-set job "
	is DONE PENDING RUNNING
}

@test "zsh completion offers the options of 0.4: dispatch's line and slots, set's cancel and pause, get's slots" {
	need_zsh
	two_registries
	mkdir "$T/other"
	printf '#!/bin/sh\n[ "$1 $2 $3" = "-d %s --slots" ] && printf "db\\t1\\tfree\\ndb\\t2\\theld\\tjob\\ngpu\\t1\\tfree\\n"\n' \
		"$T/a" >"$T/other/jobreg-get"
	chmod +x "$T/other/jobreg-get"
	zcomp "jobreg-dispatch --"
	has --coalesce --replace --slots --every
	zcomp "jobreg-set --"
	has --cancel --signal --kill-after --wait --pause --for --resume
	zcomp "jobreg-get --sl"
	is --slots
	zcomp "jobreg-set --cancel --signal KI"
	is KILL
	zcomp "jobreg-set -d $T/a --cancel alpha "
	has alpha beta
	zcomp "jobreg-set -d $T/a --resume "
	is alpha beta
	zcomp "jobreg-set -d $T/a alpha "
	is DONE PENDING RUNNING
	zcomp "$T/other/jobreg-get -d $T/a --slots "
	is db gpu
}

@test "zsh completion offers the slot groups after dispatch --slots as NAME:N, and after get --slots by name" {
	need_zsh
	jobreg-dispatch -d "$T/a" --slots db:2 one true
	jobreg-dispatch -d "$T/a" --slots gpu:1 --slots heavy:3 two true
	zcomp "jobreg-dispatch -d $T/a --slots "
	is db:2 gpu:1 heavy:3
	zcomp "jobreg-dispatch -d $T/a --once --slots=h"
	is heavy:3
	zcomp "jobreg-get -d $T/a --slots "
	is db gpu heavy
}

@test "zsh completion offers the job ids of the registry named by -d, else \$JOBREG_DIR, else the default" {
	need_zsh
	two_registries
	jobreg-set -d "$T/xdg/jobreg" delta DONE
	zcomp "jobreg-get -d $T/a "
	is alpha beta
	zcomp "jobreg-clear --dir=$T/a b"
	is beta
	zcomp "jobreg-dispatch -q "
	is gamma
	JOBREG_DIR='' XDG_STATE_HOME=$T/xdg zcomp "jobreg-clear "
	is delta
	jobreg-set -d "$T/a b" spaced DONE
	zcomp "jobreg-get -d '$T/a b' "
	is spaced
	zcomp "jobreg-get -d $(printf %q "$T/a b") "
	is spaced
	HOME=$T zcomp "jobreg-get --dir=~/a "
	is alpha beta
}

@test "zsh completion offers signals after --signal, inf after --wait, and the command after JOB or --" {
	need_zsh
	two_registries
	zcomp "jobreg-dispatch --signal TE"
	is TERM
	zcomp "jobreg-get --is DONE --wait "
	is inf
	zcomp "jobreg-dispatch job -- ech"
	has echo
	zcomp "jobreg-dispatch job ech"
	has echo
	zcomp "jobreg-dispatch job -"
	is --
	zcomp "jobreg-dispatch job -- jobreg-clear --dr"
	is --dry-run
	zcomp "jobreg-dispatch job jobreg-get -d $T/a "
	is alpha beta
}

@test "zsh completion of --signal offers exactly the names jobreg-dispatch --signal takes" {
	need_zsh
	zcomp "jobreg-dispatch --timeout 1m --signal "
	local offered=$output name
	# not zsh's EXIT, ZERR, DEBUG, nor IOT and POLL, which jobreg does not know
	[ -z "$(grep -E '^(EXIT|ZERR|DEBUG|ERR|RETURN|IOT|POLL)$' <<<"$offered")" ]
	for name in $(signame_names) RTMIN RTMIN+1 RTMIN+15 RTMAX-14 RTMAX-1 RTMAX; do has "$name"; done
	all_accepted $offered
	zcomp "jobreg-dispatch --signal=RTMAX-1"
	is RTMAX-1 RTMAX-10 RTMAX-11 RTMAX-12 RTMAX-13 RTMAX-14
}

@test "zsh completion knows jobreg-get's --status and --output, the long forms of -s and -o" {
	need_zsh
	two_registries
	: >"$T/file1"
	zcomp "jobreg-get --"
	has --status --output
	zcomp "jobreg-get -a --status="
	is CANCELLED DONE FAILED LATE OK OVERDUE PAUSED PENDING RUNNING STALE WARNING
	zcomp "jobreg-get -P --output $T/fi"
	is file1
	# their values are not job ids: the job ids come after them
	zcomp "jobreg-get --status DONE --output=$T/out -d $T/a "
	is alpha beta
}

# ---- installation ----------------------------------------------------------

@test "make install puts the bash completion under each command's name and the zsh one in site-functions" {
	# In a copy, so the build under test (maybe SANITIZE=1) stays as it is.
	src=$T/src
	mkdir -p "$src"
	# The build as it is (objects, binaries and flags, times kept), so that
	# install installs it rather than build it again.
	cp -pR "$JOBREG_ROOT/Makefile" "$JOBREG_ROOT/.build" "$JOBREG_ROOT/src" "$JOBREG_ROOT/man" \
		"$JOBREG_ROOT/bin" "$src/"
	run make -C "$src" install DESTDIR="$T/dest" PREFIX=/usr
	[ "$status" -eq 0 ]
	share=$T/dest/usr/share
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		cmp "$COMPDIR/jobreg.bash" "$share/bash-completion/completions/$cmd"
	done
	cmp "$COMPDIR/_jobreg" "$share/zsh/site-functions/_jobreg"
	if [ -r "$BASH_COMPLETION" ]; then
		# bash-completion's loader finds it by the command's name.
		XDG_DATA_DIRS=$share run bash --norc --noprofile -c '. "$1"; _completion_loader jobreg-clear; complete -p jobreg-clear' \
			bash "$BASH_COMPLETION"
		echo "$output"
		[ "$output" = "complete -F _jobreg jobreg-clear" ]
	fi
	run make -C "$src" uninstall DESTDIR="$T/dest" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -z "$(find "$T/dest" ! -type d)" ]
}

@test "bash and zsh completion offer jobreg-get --line, and job ids after it" {
	two_registries
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-get --li
		is --line
		bcomp "$mode" jobreg-get -d "$T/a" --line ""
		is alpha beta
	done
	if command -v zsh >/dev/null; then
		zcomp "jobreg-get --li"
		is --line
		zcomp "jobreg-get -d $T/a -j --line "
		is alpha beta
	fi
	at_end_skip_without_bash_completion
}

@test "bash and zsh completion offer job ids after dispatch --after, also after a comma" {
	jobreg-dispatch -d "$T/a" alpha true
	jobreg-dispatch -d "$T/a" beta true
	for mode in "${MODES[@]}"; do
		bcomp "$mode" jobreg-dispatch -d "$T/a" --after ""
		is alpha beta
		[ -z "$stderr" ] || flunk "bash said: $stderr"
		bcomp "$mode" jobreg-dispatch -d "$T/a" --after alpha,b
		is alpha,beta
		bcomp "$mode" jobreg-dispatch -d "$T/a" --after = a
		is alpha
	done
	need_zsh
	zcomp "jobreg-dispatch -d $T/a --after "
	is alpha beta
	zcomp "jobreg-dispatch -d $T/a --after alpha,b"
	is beta
	at_end_skip_without_bash_completion
}
