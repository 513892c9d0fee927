# jobreg — a Makefile for GNU make (pattern rules build each object in .build/).

VERSION   = 0.4.1
PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANDIR    = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(PREFIX)/share/zsh/site-functions
CC        = cc
CFLAGS    = -O2 -g
WARNFLAGS = -std=c11 -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wvla
CPPFLAGS  = -Isrc -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DJOBREG_VERSION=\"$(VERSION)\"
LDFLAGS   =
SANITIZE  =
# Static by default: a static binary starts faster than /bin/true, since no
# dynamic loader runs.  STATIC= links dynamically; SANITIZE=1 always does.
STATIC    = 1

PROGS = bin/jobreg-get bin/jobreg-set bin/jobreg-clear bin/jobreg-dispatch
# The library, folder by folder, each layer using only those above it in
# this list (src/README gives the plan).  Objects go to .build/, so that
# src/ holds sources only.
LIBSRC = src/util/msg.c src/util/sys.c src/util/utf8.c src/util/rfc3339.c src/util/signame.c src/util/shquote.c src/util/passwd.c \
	 src/record/status.c src/record/record.c src/record/transition.c src/record/health.c src/record/outcome.c \
	 src/registry/openat.c src/registry/atomic.c src/registry/registry.c src/registry/lock.c \
	 src/registry/listing.c src/registry/history.c src/registry/write.c src/registry/sweep.c \
	 src/registry/line.c src/registry/slots.c src/registry/pause.c src/registry/audit.c \
	 src/liveness/proc.c src/liveness/facts.c src/liveness/liveness.c src/liveness/jobstate.c \
	 src/liveness/wait.c src/liveness/slotview.c \
	 src/run/supervise.c src/run/logrelay.c src/run/logview.c src/run/runrecord.c src/run/holders.c src/run/attempts.c \
	 src/run/start.c src/run/turn.c src/run/cancel.c \
	 src/report/format.c src/report/outfile.c src/report/prom.c src/report/report.c src/report/auditview.c \
	 src/report/notify.c \
	 src/cmd/cli.c
# dispatch --after (SPEC §5d): the lists and their judge, the chain, the facts and the wait
LIBSRC += src/record/after.c src/registry/chain.c src/run/after.c
LIBOBJ = $(LIBSRC:src/%.c=.build/%.o)
HDRS = $(LIBSRC:.c=.h)
MAN1 = man/jobreg-get.1 man/jobreg-set.1 man/jobreg-clear.1 man/jobreg-dispatch.1
MAN7 = man/jobreg.7 man/jobreg-sharedfs.7

# SANITIZE=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
SANFLAGS_1 = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ALLCFLAGS = $(WARNFLAGS) $(CFLAGS) $(SANFLAGS_$(SANITIZE))
STATICFLAGS_1 = -static
ALLLDFLAGS = $(LDFLAGS) $(STATICFLAGS_$(STATIC)$(SANITIZE)) $(SANFLAGS_$(SANITIZE))

all: $(PROGS)

# (GNU make's pattern rules: one object a source, in .build/'s own copy
# of src/'s folders)
.build/%.o: src/%.c $(HDRS) .build/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALLCFLAGS) -c -o $@ $<

# Rebuild everything when the flags change (plain <-> SANITIZE=1).
.build/flags: FORCE
	@mkdir -p .build; echo '$(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS)' > .build/flags.new; \
	if cmp -s .build/flags.new .build/flags; then rm -f .build/flags.new; else mv .build/flags.new .build/flags; fi

.build/libjobreg.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

bin/%: .build/cmd/%.o .build/libjobreg.a
	$(CC) $(ALLLDFLAGS) -o $@ $< .build/libjobreg.a

check: all
	tests/run

# The tests that step the realtime clock (date -s, as root, and back in
# teardown): not part of check, which leaves the host as it found it.
check-clock: all
	tests/run tests/clock/*.bats

# The suites of a registry shared by hosts, on GlusterFS and on CephFS set
# up on this machine, each client in a network namespace of its own (root;
# installs the filesystems if missing; exit 77 when neither can run).
# SHAREDFS=gluster or SHAREDFS=ceph runs one (default: all, both).  Not
# part of check: most machines have neither.
check-sharedfs: all
	SHAREDFS=$(SHAREDFS) tests/sharedfs/run

# The long randomized crash, race and fault runs (counts set by variables,
# see tests/stress/run).
stress: all
	tests/stress/run

# make check BESIDE_ROUNDS times (5) with another make check running beside
# it, each in a copy of the tree of its own (see tests/stress/beside): the
# suite must pass on a machine loaded to 3 or more.  Not part of check.
check-beside:
	tests/stress/beside

# Coverage-guided fuzzing with libFuzzer (clang) of every tests/fuzz/*_fuzz.c
# target, FUZZ_SECONDS each: make fuzz FUZZ_SECONDS=600
FUZZ_SECONDS = 60
fuzz:
	tests/fuzz/run $(FUZZ_SECONDS)

# Ratios against baselines measured in the same run (see tests/bench/run).
bench: all
	tests/bench/run

# Static analysis: cppcheck (unused functions too) and clang-tidy (.clang-tidy) must report
# nothing, nor mandoc's lint of the man pages (-Wwarning).  LINT= picks.
LINT = cppcheck clang-tidy mandoc
lint:
	tests/lint $(LINT)

clean:
	rm -rf $(PROGS) .build .build-flags

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(PROGS) $(DESTDIR)$(BINDIR)
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MAN7) $(DESTDIR)$(MANDIR)/man7
	# bash-completion loads completions/NAME for command NAME: one file,
	# under each command's name.
	mkdir -p $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0644 src/completion/jobreg.bash $(DESTDIR)$(BASHCOMPDIR)/jobreg-get
	for c in jobreg-set jobreg-clear jobreg-dispatch; do \
		ln -sf jobreg-get $(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; \
	done
	install -m 0644 src/completion/_jobreg $(DESTDIR)$(ZSHCOMPDIR)/_jobreg

# Removes what install put there, and succeeds where nothing is.
uninstall:
	for c in jobreg-get jobreg-set jobreg-clear jobreg-dispatch; do \
		rm -f $(DESTDIR)$(BINDIR)/$$c $(DESTDIR)$(MANDIR)/man1/$$c.1 \
			$(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; \
	done
	rm -f $(DESTDIR)$(MANDIR)/man7/jobreg.7 $(DESTDIR)$(MANDIR)/man7/jobreg-sharedfs.7 \
		$(DESTDIR)$(ZSHCOMPDIR)/_jobreg

# The mains' objects are kept, so that a second make does nothing.
.SECONDARY:
FORCE:
.PHONY: all check check-beside check-clock check-sharedfs stress fuzz bench lint clean install uninstall FORCE
