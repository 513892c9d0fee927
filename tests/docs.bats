# The manual and --help say what the code does.
load lib/helper

pages="jobreg-get.1 jobreg-set.1 jobreg-clear.1 jobreg-dispatch.1 jobreg.7 jobreg-sharedfs.7"

@test "every man page renders with no groff warnings" {
	command -v groff >/dev/null || skip "groff not installed"
	for page in $pages; do
		run groff -mandoc -ww -z "$JOBREG_ROOT/man/$page"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || { echo "$page: $output"; false; }
	done
}

@test "every man page passes mandoc's lint at level warning" {
	command -v mandoc >/dev/null || skip "mandoc not installed (apt-get install mandoc)"
	for page in $pages; do
		run mandoc -Tlint -Wwarning "$JOBREG_ROOT/man/$page"
		[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$page: $output"; false; }
	done
}

@test "every cross-reference names the section its manual is in" {
	command -v man >/dev/null || skip "man not installed"
	local page xr name sec
	# Each manual once, however many pages name it; the first of them is told.
	# shellcheck disable=SC2086  # $pages is a list of names, split on purpose
	while read -r page xr name sec; do
		case $pages in *"$name.$sec"*) continue ;; esac
		man -w "$sec" "$name" >/dev/null 2>&1 && continue
		# a manual not installed here cannot be checked
		man -w "$name" >/dev/null 2>&1 || continue
		echo "$page: $xr $name $sec: $name is in $(man -w -a "$name" | tr '\n' ' ')"
		false
	done < <(cd "$JOBREG_ROOT/man" && grep -oE '\bXr [^ ]+ [0-9]' $pages | tr ':' ' ' | sort -u -k3,4)
}

@test "make lint runs mandoc's lint of the man pages, which fails on a warning" {
	command -v mandoc >/dev/null || skip "mandoc not installed (apt-get install mandoc)"
	# In a copy, with a page given a section out of order.
	local copy=$BATS_TEST_TMPDIR/copy
	mkdir -p "$copy/tests"
	cp -R "$JOBREG_ROOT/Makefile" "$JOBREG_ROOT/man" "$copy/"
	cp "$JOBREG_ROOT/tests/lint" "$copy/tests/"
	run make -C "$copy" lint LINT=mandoc
	[ "$status" -eq 0 ]
	[[ "$output" == *"lint: nothing reported by mandoc"* ]]
	printf '.Sh EXIT STATUS\nagain\n' >> "$copy/man/jobreg-set.1"
	run make -C "$copy" lint LINT=mandoc
	[ "$status" -ne 0 ]
	[[ "$output" == *"jobreg-set.1:"*"WARNING: sections out of conventional order"* ]]
	grep -qx 'LINT = cppcheck clang-tidy mandoc' "$JOBREG_ROOT/Makefile"
}

@test "every man page has the sections users look for" {
	for page in $pages; do
		for section in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -q "^\.Sh $section\$" "$JOBREG_ROOT/man/$page" ||
				{ echo "$page lacks $section"; false; }
		done
	done
}

@test "the man pages say what the commands do, not how: no threads, descriptor tricks or system-call counts" {
	# (how it is fast belongs in comments and the README's Performance section)
	run grep -n -i -E 'thread|close_range|io_uring|CLOSE_RANGE|getdents|system calls (per|a) record|[0-9.]+ system calls' man/jobreg-get.1 man/jobreg-set.1 man/jobreg-clear.1 man/jobreg-dispatch.1 man/jobreg.7 man/jobreg-sharedfs.7
	[ "$status" -eq 1 ] || flunk "$output"
}

@test "no example is wider than 80 columns: the man pages rendered at 80, and the README's code" {
	command -v man >/dev/null || skip "man not installed"
	# (characters, not bytes: the rendered quotes are UTF-8)
	local LC_ALL=C.UTF-8 page line n=0 fenced='' wide=''
	for page in $pages; do
		while IFS= read -r line; do
			((${#line} <= 80)) || wide+=$'\n'"$page: $line"
		done < <(MANWIDTH=80 man -l "$JOBREG_ROOT/man/$page" 2>/dev/null)
	done
	# the README's code: indented, or between ``` fences
	while IFS= read -r line; do
		n=$((n + 1))
		if [[ $line == '```'* ]]; then
			if [ -n "$fenced" ]; then fenced=''; else fenced=1; fi
			continue
		fi
		[[ -n $fenced || $line == '    '* ]] || continue
		((${#line} <= 80)) || wide+=$'\n'"README.md:$n: $line"
	done < <(expand "$JOBREG_ROOT/README.md")
	[ -z "$wide" ] || flunk "wider than 80 columns:$wide"
}

@test "every --help that takes a status list names every status word, CANCELLED and PAUSED too" {
	local words cmd w
	# the words as the commands take them, from the message for a bad list
	words=$(jobreg-get -a -s bogus 2>&1 | sed -n "s/.*'bogus' (\(.*\)).*/\1/p" | tr -d ,)
	[[ $words == *CANCELLED* && $words == *PAUSED* ]] || flunk "the words: $words"
	for cmd in jobreg-get jobreg-set jobreg-clear; do
		run "$cmd" --help
		[ "$status" -eq 0 ]
		for w in $words; do
			[[ $output == *"$w"* ]] || flunk "$cmd --help does not name $w"
		done
	done
}

@test "every long option in --help is documented in the command's man page" {
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		run "$cmd" --help
		[ "$status" -eq 0 ]
		opts=$(printf '%s\n' "$output" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
		[ -n "$opts" ]
		for opt in $opts; do
			# mdoc writes --all as "Fl \-all" (Fl adds one dash).
			grep -qE -- "Fl (\\\\)?-${opt#--}([^a-z-]|\$)" "$JOBREG_ROOT/man/$cmd.1" ||
				{ echo "$cmd.1 does not document $opt"; false; }
		done
	done
}

@test "every long option a command's page documents as an item is in its --help" {
	local cmd opt help n=0
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		help=$("$cmd" --help)
		# the option an item of the page begins with (".It Fl \-every Ar DURATION")
		for opt in $(grep -oE '^\.It Fl \\-[a-z][a-z-]+' "$JOBREG_ROOT/man/$cmd.1" | sed 's/.*\\-/--/' | sort -u); do
			[[ $help == *"$opt"* ]] || { echo "$cmd --help does not list $opt"; false; }
			n=$((n + 1))
		done
	done
	[ "$n" -ge 30 ]
}

@test "every command prints its name and the version from the changelog" {
	version=$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' "$JOBREG_ROOT/CHANGELOG.md" | head -n 1)
	[ -n "$version" ]
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		run "$cmd" --version
		[ "$status" -eq 0 ]
		[ "$output" = "$cmd $version" ]
	done
}

@test "make install puts the commands and man pages under DESTDIR and PREFIX" {
	# In a copy, so the build under test (maybe SANITIZE=1) stays as it is.
	src="$BATS_TEST_TMPDIR/src"
	mkdir -p "$src"
	# The build as it is (objects, binaries and flags, times kept), so that
	# install installs it rather than build it again.
	cp -pR "$JOBREG_ROOT/Makefile" "$JOBREG_ROOT/.build" "$JOBREG_ROOT/src" "$JOBREG_ROOT/man" \
		"$JOBREG_ROOT/bin" "$src/"
	run make -C "$src" install DESTDIR="$BATS_TEST_TMPDIR/dest" PREFIX=/opt/jr
	[ "$status" -eq 0 ]
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		[ -x "$BATS_TEST_TMPDIR/dest/opt/jr/bin/$cmd" ]
		[ -f "$BATS_TEST_TMPDIR/dest/opt/jr/share/man/man1/$cmd.1" ]
	done
	[ -f "$BATS_TEST_TMPDIR/dest/opt/jr/share/man/man7/jobreg.7" ]
	[ -f "$BATS_TEST_TMPDIR/dest/opt/jr/share/man/man7/jobreg-sharedfs.7" ]
}

@test "make uninstall succeeds where nothing is installed, and removes only what install puts there" {
	local t=$BATS_TEST_TMPDIR
	run make -C "$JOBREG_ROOT" uninstall DESTDIR="$t/none"
	[ "$status" -eq 0 ]
	[ ! -e "$t/none" ]
	# half an install (the commands only), beside another program
	mkdir -p "$t/half/usr/bin"
	: > "$t/half/usr/bin/jobreg-get"
	: > "$t/half/usr/bin/other"
	run make -C "$JOBREG_ROOT" uninstall DESTDIR="$t/half" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ "$(ls "$t/half/usr/bin")" = other ]
}

@test "every command page gives its options right after a short description, and jobreg-dispatch(1) has a Slots section" {
	local cmd after
	for cmd in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do
		# the section that follows DESCRIPTION
		after=$(grep '^\.Sh ' "$JOBREG_ROOT/man/$cmd.1" | sed -n '/^\.Sh DESCRIPTION$/{n;p;}')
		[ "$after" = ".Sh OPTIONS" ] || flunk "$cmd.1: DESCRIPTION is followed by '$after'"
	done
	run sed -n '/^\.Sh SLOTS$/,/^\.Sh /p' "$JOBREG_ROOT/man/jobreg-dispatch.1"
	[[ $output == *"must give the same"* ]] || flunk "no Slots section saying every dispatcher gives the same N"
	[[ $output == *"waits for itself"* ]] || flunk "the Slots section does not say a nested call waits for itself"
}
