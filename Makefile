# jobreg — POSIX-ish Makefile (GNU make for the pattern rules is fine too).
.POSIX:

VERSION   = 0.3.0
PREFIX    = /usr/local
BINDIR    = $(PREFIX)/bin
MANDIR    = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(PREFIX)/share/zsh/site-functions
CC        = cc
CFLAGS    = -O2 -g
WARNFLAGS = -std=c11 -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wvla
CPPFLAGS  = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DJOBREG_VERSION=\"$(VERSION)\"
LDFLAGS   =
SANITIZE  =
# Static by default: a static binary starts faster than /bin/true, since no
# dynamic loader runs.  STATIC= links dynamically; SANITIZE=1 always does.
STATIC    = 1

PROGS = bin/jobreg-get bin/jobreg-set bin/jobreg-clear bin/jobreg-dispatch
LIBOBJ = src/msg.o src/sys.o src/status.o src/utf8.o src/rfc3339.o src/signame.o \
	 src/record.o src/transition.o src/entry.o src/atomic.o src/registry.o src/lock.o src/listing.o src/proc.o \
	 src/probe.o src/liveness.o src/state.o src/tidy.o src/leftover.o src/wait.o \
	 src/supervise.o src/output.o src/outfile.o src/cli.o src/history.o src/commit.o \
	 src/run.o src/logrelay.o src/logview.o src/prom.o
HDRS = src/msg.h src/sys.h src/status.h src/utf8.h src/rfc3339.h src/signame.h src/transition.h \
	 src/record.h src/entry.h src/atomic.h src/registry.h src/lock.h src/listing.h src/proc.h \
	 src/probe.h src/liveness.h src/state.h src/tidy.h src/leftover.h src/wait.h \
	 src/supervise.h src/output.h src/outfile.h src/cli.h src/history.h src/commit.h \
	 src/run.h src/logrelay.h src/logview.h src/prom.h
MAN1 = man/jobreg-get.1 man/jobreg-set.1 man/jobreg-clear.1 man/jobreg-dispatch.1
MAN7 = man/jobreg.7

# SANITIZE=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
SANFLAGS_1 = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ALLCFLAGS = $(WARNFLAGS) $(CFLAGS) $(SANFLAGS_$(SANITIZE))
STATICFLAGS_1 = -static
ALLLDFLAGS = $(LDFLAGS) $(STATICFLAGS_$(STATIC)$(SANITIZE)) $(SANFLAGS_$(SANITIZE))

all: $(PROGS)

.SUFFIXES: .c .o
.c.o:
	$(CC) $(CPPFLAGS) $(ALLCFLAGS) -c -o $@ $<

$(LIBOBJ) src/jobreg-get.o src/jobreg-set.o src/jobreg-clear.o src/jobreg-dispatch.o: $(HDRS) .build-flags

# Rebuild everything when the flags change (plain <-> SANITIZE=1).
.build-flags: FORCE
	@echo '$(CC) $(CPPFLAGS) $(ALLCFLAGS) $(ALLLDFLAGS)' > .build-flags.new; \
	if cmp -s .build-flags.new .build-flags; then rm -f .build-flags.new; else mv .build-flags.new .build-flags; fi

src/libjobreg.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

bin/jobreg-get: src/jobreg-get.o src/libjobreg.a
	$(CC) $(ALLLDFLAGS) -o $@ src/jobreg-get.o src/libjobreg.a
bin/jobreg-set: src/jobreg-set.o src/libjobreg.a
	$(CC) $(ALLLDFLAGS) -o $@ src/jobreg-set.o src/libjobreg.a
bin/jobreg-clear: src/jobreg-clear.o src/libjobreg.a
	$(CC) $(ALLLDFLAGS) -o $@ src/jobreg-clear.o src/libjobreg.a
bin/jobreg-dispatch: src/jobreg-dispatch.o src/libjobreg.a
	$(CC) $(ALLLDFLAGS) -o $@ src/jobreg-dispatch.o src/libjobreg.a

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
	rm -f $(PROGS) src/*.o src/libjobreg.a .build-flags .build-flags.new

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
	rm -f $(DESTDIR)$(MANDIR)/man7/jobreg.7 $(DESTDIR)$(ZSHCOMPDIR)/_jobreg

FORCE:
.PHONY: all check check-clock check-sharedfs stress fuzz bench lint clean install uninstall FORCE
