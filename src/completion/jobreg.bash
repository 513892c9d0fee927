# bash completion for jobreg-get, jobreg-set, jobreg-clear, jobreg-dispatch.
# Installed once per command name, since bash-completion loads
# completions/NAME when NAME is first completed.
#
# The tables below are the options of SPEC §5; an option that takes a value
# names its kind after ':'.  Job ids are asked of `jobreg-get -a` (with the
# -d DIR already on the line), never read from the registry here.  Uses
# bash-completion's _filedir, _pids and _command_offset when they are
# loaded, plain compgen otherwise.
# shellcheck disable=SC2207  # compgen's words are split on purpose

declare -gA _jobreg_options=(
	[common]='-d:dir --dir:dir -w:duration --lock-wait:duration -q --quiet -h --help -V --version'
	[jobreg-get]='-l --long -j --json -P --prometheus -s:status --status:status -o:file --output:file
		-a --all --is:status --wait:limit --history --log --follow --faillog --report --slots --line
		--notify:text --notify-after:number --audit --since:duration'
	[jobreg-set]='--if:status --owner:pid --ttl:duration -m:text --note:text --exit:number --force
		--late-after:limit --keep-runs:number -a --all --cancel --signal:signal --kill-after:duration
		--wait:limit --pause --for:limit --resume --overdue-after:limit --notify-after:number'
	[jobreg-clear]='--if:status --stale --older-than:duration --force -n --dry-run -v --verbose -a --all'
	[jobreg-dispatch]='--once --retry-failed --clear --wait:limit --timeout:limit --kill-after:duration
		--signal:signal -E:number --conflict-exit-code:number -m:text --note:text
		--retries:number --retry-delay:duration --log --chronic --log-size:size
		--late-after:limit --keep-runs:number --coalesce --replace --slots:slots --every:duration
		--overdue-after:limit --ok-exit:exits --warn-exit:exits --retry-exit:exits
		--min-duration:duration --after:jobs
		--notify:text --notify-after:number'
)
# The names --signal takes (src/signame.c; also with SIG, any case, or as a
# number), as kill -l gives them: never bash's EXIT, DEBUG, ERR or RETURN.
_jobreg_signals=(HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM
	STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS
	RTMIN RTMIN+{1..15} RTMAX-{14..1} RTMAX)
# The operands after the options: job ids for ever, or a job then its
# status or its command; the options that change them (set --cancel takes
# jobs, get --slots slot groups).
declare -gA _jobreg_operands=(
	[jobreg-get]='jobs' [jobreg-clear]='jobs' [jobreg-set]='job setstatus' [jobreg-dispatch]='job command'
	[jobreg-set --cancel]='jobs' [jobreg-set --pause]='jobs' [jobreg-set --resume]='jobs'
	[jobreg-get --slots]='groups'
)

# _jobreg_kind CMD OPTION: the kind of OPTION's value, "flag", or "" if unknown.
_jobreg_kind() {
	local o
	for o in ${_jobreg_options[common]} ${_jobreg_options[$1]}; do
		[[ $o == "$2" ]] && { echo flag; return; }
		[[ $o == "$2":* ]] && { echo "${o#*:}"; return; }
	done
}

# _jobreg_value KIND: the candidates for an option's value.
_jobreg_value() {
	local last
	case $1 in
	dir) if declare -F _filedir >/dev/null; then _filedir -d; else
		local IFS=$'\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); fi ;;
	file) if declare -F _filedir >/dev/null; then _filedir; else
		local IFS=$'\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); fi ;;
	status) # a comma-separated list: complete its last word
		last=${cur##*,}
		COMPREPLY=($(compgen -P "${cur%"$last"}" -W 'PENDING RUNNING STALE DONE OK FAILED CANCELLED WARNING LATE PAUSED OVERDUE' -- "${last^^}")) ;;
	setstatus) COMPREPLY=($(compgen -W 'PENDING RUNNING DONE' -- "${cur^^}")) ;;
	signal) # the names, with SIG once SI is typed
		last=${cur^^}
		if [[ $last == SI || $last == SIG* ]]; then
			last=${last#SI}
			COMPREPLY=($(compgen -P SIG -W "${_jobreg_signals[*]}" -- "${last#G}"))
		else
			COMPREPLY=($(compgen -W "${_jobreg_signals[*]}" -- "$last"))
		fi ;;
	limit) COMPREPLY=($(compgen -W inf -- "$cur")) ;;
	size) COMPREPLY=($(compgen -W '64k 1M 16M' -- "$cur")) ;;
	pid) declare -F _pids >/dev/null && _pids ;;
	jobs) # a comma-separated list of job ids (dispatch --after): its last word
		last=${cur##*,}
		local before=${cur%"$last"}
		cur=$last _jobreg_jobs "$get" "$(_jobreg_dir "$dir")"
		COMPREPLY=("${COMPREPLY[@]/#/$before}") ;;
	slots) # the known groups as NAME:N (_jobreg's $get and $dir)
		_jobreg_groups "$get" "$(_jobreg_dir "$dir")" sized ;;
	esac
}

# _jobreg_jobs GET [DIR]: the job ids of the registry, as jobreg-get -a lists them.
_jobreg_jobs() {
	local line ids=()
	while read -r line; do ids+=("${line%% *}"); done < <("$1" ${2:+-d "$2"} -a 2>/dev/null)
	COMPREPLY=($(compgen -W "${ids[*]}" -- "$cur"))
}

# _jobreg_groups GET [DIR [SIZED]]: the slot groups, as jobreg-get --slots
# lists them; with SIZED as NAME:N, N its slots (dispatch --slots, where
# every dispatcher of a group gives the same N).
_jobreg_groups() {
	local group state last='' ids=() n=0
	# (a group's slots come one after another, then its waiters)
	while IFS=$'\t' read -r group _ state _; do
		[[ $state == held || $state == free ]] || continue
		if [[ $group != "$last" ]]; then
			[[ -z $last ]] || ids+=("$last${3:+:$n}")
			last=$group n=0
		fi
		((n++))
	done < <("$1" ${2:+-d "$2"} --slots 2>/dev/null)
	[[ -z $last ]] || ids+=("$last${3:+:$n}")
	COMPREPLY=($(compgen -W "${ids[*]}" -- "$cur"))
}

# _jobreg_dir WORD: the -d word as typed, its quoting and ~/ undone.
_jobreg_dir() {
	local d=$1
	case $d in
	\'*\' | \"*\") d=${d:1:${#d}-2} ;;
	*) d=${d//\\/} ;;
	esac
	[[ $d == \~/* ]] && d=$HOME/${d#\~/}
	printf '%s' "$d"
}

_jobreg() {
	local cmd=${1##*/} cur=${2-} w=("${COMP_WORDS[@]}") cw=$COMP_CWORD
	local i=1 v word kind dir='' first operands=$cmd
	local get=jobreg-get
	[[ $1 == */* ]] && get=${1%/*}/jobreg-get
	COMPREPLY=()
	# The options before the operands; parsing stops at the first operand or --.
	while :; do
		word=${w[i]}
		if ((i == cw)); then
			[[ $cur == -* ]] && {
				local o names=()
				for o in ${_jobreg_options[common]} ${_jobreg_options[$cmd]}; do names+=("${o%%:*}"); done
				COMPREPLY=($(compgen -W "${names[*]}" -- "$cur"))
				return; }
			first=$i; break
		fi
		[[ $word == -- ]] && { first=$((i + 1)); break; }
		[[ $word == -?* ]] || { first=$i; break; }
		v=''
		if [[ $word == --*=* ]]; then            # --dir=DIR in one word
			kind=$(_jobreg_kind "$cmd" "${word%%=*}") v=${word#*=}
		elif [[ $word == -[!-]?* ]]; then        # -dDIR
			kind=$(_jobreg_kind "$cmd" "${word:0:2}") v=${word:2}
			[[ $kind == flag ]] || [[ -z $kind ]] || word=${word:0:2}
		else
			kind=$(_jobreg_kind "$cmd" "$word")
			if [[ $kind != flag && -n $kind ]]; then   # OPT VALUE, or OPT = VALUE
				v=$((i + 1))
				[[ $v -le $cw && ${w[v]} == = ]] && ((v++))
				((v > cw)) && cur=''            # completing right after '='
				((v >= cw)) && { _jobreg_value "$kind"; return; }
				i=$v v=${w[v]}
			fi
		fi
		[[ $word == -d* || $word == --dir* ]] && [[ $kind == dir ]] && dir=$v
		[[ -n ${_jobreg_operands["$cmd $word"]:-} ]] && operands="$cmd $word"
		((i++))
	done
	dir=$(_jobreg_dir "$dir")
	# The operands: N is the one being completed.
	local n=$((cw - first)) ops
	read -ra ops <<<"${_jobreg_operands[$operands]}"
	case ${ops[n]:-${ops[-1]}} in
	jobs | job) _jobreg_jobs "$get" "$dir" ;;
	groups) _jobreg_groups "$get" "$dir" ;;
	setstatus) ((n == 1)) && _jobreg_value setstatus ;;
	command) # JOB [--] COMMAND [ARG...]: the command completes as itself
		local start=$((first + 1))
		[[ ${w[start]} == -- ]] && ((start < cw)) && ((start++))
		if ((cw == start)) && [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W -- -- "$cur"))
		elif declare -F _command_offset >/dev/null; then
			_command_offset "$start"
		elif ((cw == start)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			local IFS=$'\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))
		fi ;;
	esac
}

complete -F _jobreg jobreg-get jobreg-set jobreg-clear jobreg-dispatch
