# zsh -f tests/zcomplete.zsh FPATH_DIR LINE [DUMP]: complete LINE (cursor at
# its end) in an interactive zsh -f on a pseudo-terminal, with compinit and
# FPATH_DIR first in $fpath, and print the candidates offered, one a line.
# With DUMP, compinit keeps its dump there, as it does in ~/.zcompdump for a
# user: made by the first call, read by the next ones, which then start in
# a twentieth of the time (a fresh scan of every completion function costs a
# second of CPU).  Without it, no dump (-D).
# compadd is wrapped to print the words it is given that match what is on
# the line (its own -A capture), so this sees what the user would be shown.
zmodload zsh/zpty || exit 2
local out
zpty z zsh -f -i
local dump=-D
[[ -n $3 ]] && dump="-d ${(q)3}"
zpty -w z "PS1='' RPROMPT=''; unsetopt prompt_sp; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u $dump; print RE''ADY"
zpty -r z out '*READY*' || exit 3
zpty -w z 'compadd() { local -a __h; if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; builtin compadd -A __h "$@"; (( $#__h )) && print -rl -- "" "${__h[@]/#/CAND:}"; builtin compadd "$@"; }'
zpty -w z 'comppostfuncs=(__end); __end() { print -rl -- "" END-OF""-CANDIDATES; }; bindkey "^I" complete-word; print SE''T'
zpty -r z out '*SET*' || exit 3
zpty -n -w z "$2"$'\t'
zpty -r z out '*END-OF-CANDIDATES*' || exit 4
zpty -d z
local -a cands
cands=(${${(M)${(f)out//$'\r'/}:#CAND:*}#CAND:})
print -rl -- ${(ou)cands}
