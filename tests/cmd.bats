#!/usr/bin/env bats
# cmd= (SPEC §5 step 5): the dispatched command as a shell reads it back,
# never making the record corrupt.
bats_require_minimum_version 1.5.0
load lib/helper

# words CMD: the words bash reads back from CMD, each in <>.
words() {
	bash -c 'eval "set -- $1"; for w; do printf "<%s>" "$w"; done' _ "$1"
}

@test "cmd: a word is quoted only where it needs it, and reads back as it was" {
	jobreg-dispatch job -- true plain --opt=1 'a b' "it's" '$HOME `x`' '' 'é*' a=b
	[ "$(field job cmd)" = "true plain --opt=1 'a b' 'it'\\''s' '\$HOME \`x\`' '' 'é*' a=b" ]
	[ "$(words "$(field job cmd)")" = "<true><plain><--opt=1><a b><it's><\$HOME \`x\`><><é*><a=b>" ]
	# The first word would be an assignment, not a command.
	jobreg-dispatch job2 -- A=1 true 2>/dev/null || true
	[ "$(field job2 cmd)" = "'A=1' true" ]
}

@test "cmd: control bytes and invalid UTF-8 as bash's \$'…', the record still sound" {
	local nl=$'a\nb' tab=$'c\td' bad=$'\xff\xc3x' esc=$'\e[1m' c1=$'\xc2\x85' q=$'\n\'\\'
	jobreg-dispatch job -- true "$nl" "$tab" "$bad" "$esc" "$c1" "$q"
	[ "$(field job cmd)" = "true \$'a\\nb' \$'c\\td' \$'\\xFF\\xC3x' \$'\\e[1m' \$'\\xC2\\x85' \$'\\n\\'\\\\'" ]
	run -0 jobreg-get job
	[ "$output" = DONE ]
	[ "$(words "$(field job cmd)")" = "<true><$nl><$tab><$bad><$esc><$c1><$q>" ]
}

@test "cmd: a long command line is cut to 1024 bytes on a character boundary" {
	local long LC_ALL=C                        # lengths in bytes
	printf -v long '%*s' 2500 ''
	long=${long// /é}                          # 5000 bytes
	jobreg-dispatch job -- true "$long"
	field_into cmd job cmd
	# "true " then é from byte 5: byte 1024 would split one.
	[ "${#cmd}" -eq 1023 ]
	[ "$cmd" = "true ${long:0:1018}" ]
	run -0 jobreg-get job
	jobreg-dispatch job3 -- true "€$long"     # 3-byte, then 2-byte characters
	field_into cmd job3 cmd
	[ "${#cmd}" -eq 1024 ]
	[ "$cmd" = "true €${long:0:1016}" ]
	run -0 jobreg-get job3
	[ "$output" = DONE ]
}

@test "cmd: each attempt's RUNNING record has it, a new dispatch its own" {
	run -1 jobreg-dispatch -q --retries 1 --retry-delay 0.1 job -- \
		sh -c 'grep "^cmd=" "$JOBREG_DIR/$JOBREG_JOB"; exit 1' sh 'x y'
	local line="cmd=sh -c 'grep \"^cmd=\" \"\$JOBREG_DIR/\$JOBREG_JOB\"; exit 1' sh 'x y'"
	[ "$output" = "$line"$'\n'"$line" ]
	jobreg-dispatch job -- true
	[ "$(field job cmd)" = true ]
}
