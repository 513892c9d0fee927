/* logrelay: the output relay and the run's log (see logrelay.h).  Past
 * 450 lines: the relay, the cut and the turnover share its state. */
#define _GNU_SOURCE   /* F_SETPIPE_SZ */
#include "run/logrelay.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)   /* the most read at once, and the pipes' size */
#define TRICKLE 4096      /* a wake-up that found less waits (relay()) */

/* "[jobreg: N bytes dropped]\n" into LINE; returns its length. */
static int dropped_line(char line[DROPPED_LINE_MAX], unsigned long long dropped)
{
	return snprintf(line, DROPPED_LINE_MAX, "[jobreg: %llu bytes dropped]\n", dropped);
}

size_t logrelay_dropped_read(const char *buf, size_t n, unsigned long long *dropped)
{
	static const char start[] = "[jobreg: ";
	size_t len = sizeof start - 1, i = len;
	if (n < len || memcmp(buf, start, len) != 0)
		return 0;
	unsigned long long d = 0;
	for (; i < n && i < DROPPED_LINE_MAX && buf[i] >= '0' && buf[i] <= '9'; i++)
		d = d * 10 + (unsigned long long)(buf[i] - '0');
	static const char end[] = " bytes dropped]\n";
	if (i == len || n - i < sizeof end - 1 || memcmp(buf + i, end, sizeof end - 1) != 0)
		return 0;
	*dropped = d;
	return i + sizeof end - 1;
}

/* A page shared with the relay: did what it last passed on to our stderr
 * end mid-line?  msg.h's messages then begin a line of their own. */
static volatile int *mid_line;
static int out_is_err;   /* our stdout goes to our stderr's file too */

/* Of the N bytes before a cut point, those after the last newline (0:
 * none, the cut stays): kept, so the cut falls at a line's start. */
static size_t line_back(const char *before, size_t n)
{
	for (size_t i = n; i > 0; i--)
		if (before[i - 1] == '\n')
			return n - i;
	return 0;
}

/* How far back a cut looks for a line's start: at most LINE_SLACK, never
 * so far that the log could outgrow twice SIZE. */
static size_t slack(unsigned long long size)
{
	return size - DROPPED_LINE_MAX < LINE_SLACK ? (size_t)(size - DROPPED_LINE_MAX) : LINE_SLACK;
}

int logrelay_parse_size(const char *s, unsigned long long *size)
{
	size_t n = strspn(s, "0123456789");
	unsigned long long v;
	unsigned shift = 0;
	if (parse_digits(s, n, 1ull << 40, &v) < 0)
		return -1;
	switch (tolower((unsigned char)s[n])) {
	case '\0': break;
	case 'k': shift = 10; n++; break;
	case 'm': shift = 20; n++; break;
	case 'g': shift = 30; n++; break;
	default: return -1;
	}
	if (s[n] || v > (1ull << 40) >> shift || (v << shift) < LOG_SIZE_MIN)
		return -1;
	*size = v << shift;
	return 0;
}

/* Is JOB's log SUFFIX there (*HAVE)?  An exit status: 77 when planted. */
static int refuse_planted(const struct registry *reg, const char *job, const char *suffix,
			  int *have)
{
	char *name = reg_dot_name(job, suffix);
	struct stat st;
	int rc = 0;
	*have = fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!*have && errno != ENOENT)
		rc = fail_errno(errno, job, "stat %s", reg_path(reg, name));
	else if (*have && !S_ISREG(st.st_mode))
		rc = reg_not_regular(reg, job, name);
	free(name);
	return rc;
}

int logrelay_turn_over(const struct registry *reg, const char *job, int failed)
{
	char *log = reg_dot_name(job, ".log"), *faillog = reg_dot_name(job, ".faillog");
	int have;

	/* A planted entry is refused, never renamed or followed. */
	int rc = refuse_planted(reg, job, ".log", &have);
	if (!rc && have && !failed && unlinkat(reg->fd, log, 0) < 0 && errno != ENOENT)
		rc = fail_errno(errno, job, "remove %s", reg_path(reg, log));
	else if (!rc && have && failed && renameat(reg->fd, log, reg->fd, faillog) < 0)
		rc = fail_errno(errno, job, "rename %s", reg_path(reg, log));
	else if (!rc && !have && failed && unlinkat(reg->fd, faillog, 0) < 0 && errno != ENOENT)
		/* That failure left no log: an older one is not its. */
		rc = fail_errno(errno, job, "remove %s", reg_path(reg, faillog));
	free(log);
	free(faillog);
	return rc;
}

int logrelay_prepare(const struct registry *reg, const char *job, int make)
{
	char *name = reg_dot_name(job, ".newlog");
	struct stat st;
	int fd = -1, have, rc = refuse_planted(reg, job, ".log", &have);
	if (!rc)
		rc = refuse_planted(reg, job, ".faillog", &have);
	if (!rc && make) {
		int flags = O_WRONLY | O_CREAT | O_EXCL;
		int made = entry_open(reg->fd, name, flags, &fd, &st);
		/* A leftover of a dispatch that died here goes first. */
		if (made == -1 && errno == EEXIST)
			made = unlinkat(reg->fd, name, 0) == 0 ? entry_open(reg->fd, name, flags, &fd, &st)
				: errno == EISDIR ? ENTRY_NOT_REGULAR : -1;
		if (made == ENTRY_NOT_REGULAR)
			rc = reg_not_regular(reg, job, name);
		else if (made < 0)
			rc = fail_errno(errno, job, "create %s", reg_path(reg, name));
		else if (entry_share(fd, reg->share_mode) < 0) {
			rc = fail_errno(errno, job, "chmod %s", reg_path(reg, name));
			(void)unlinkat(reg->fd, name, 0);
		}
	}
	/* Under the run lock it is a leftover.  One that cannot be removed
	 * (another user's, sticky directory) only makes a reader wait a while. */
	if (!rc && !make)
		(void)unlinkat(reg->fd, name, 0);
	if (fd >= 0)
		close_fd(fd);
	free(name);
	return rc;
}

int logrelay_commit(const struct registry *reg, const char *job, int failed, int made)
{
	char *name = reg_dot_name(job, ".newlog"), *log = reg_dot_name(job, ".log");
	int rc = logrelay_turn_over(reg, job, failed);
	if (!rc && made && renameat(reg->fd, name, reg->fd, log) < 0)
		rc = fail_errno(errno, job, "rename %s", reg_path(reg, name));
	free(name);
	free(log);
	return rc;
}

void logrelay_abandon(const struct registry *reg, const char *job)
{
	char *name = reg_dot_name(job, ".newlog");
	(void)unlinkat(reg->fd, name, 0);
	free(name);
}

int logrelay_empty(const struct registry *reg, const char *job)
{
	char *log = reg_dot_name(job, ".log");
	struct stat st;
	int fd = -1, rc = entry_open(reg->fd, log, O_WRONLY, &fd, &st) == 0 ? 0 : -1;
	if (!rc)
		rc = ftruncate(fd, 0);
	if (fd >= 0)
		close_fd(fd);
	free(log);
	return rc;
}

/* The relay's log. */
struct sink {
	int fd;
	mode_t mode;   /* the log's, without LOG_CUT_MARK */
	unsigned long long size;
	off_t end, head;   /* where the next byte goes; the first line's length */
	unsigned long long dropped, unlogged;   /* so far; could not be written */
	int err;
};

/* A cut begins: LOG_CUT_MARK in the mode, then a NUL first byte, which
 * the mark tells a reader is the cut's, not the run's (logview.h). */
static int cut_begin(const struct sink *s)
{
	if (fchmod(s->fd, s->mode | LOG_CUT_MARK) < 0 || pwrite_full(s->fd, "", 1, 0) < 0)
		return -1;
	return 0;
}

/* A cut ends: the log cut to its first line LINE (LEN bytes, DROP more
 * dropped) and the KEPT bytes after it, the line written last. */
static int cut_end(struct sink *s, const char *line, int len, off_t kept,
		   unsigned long long drop)
{
	if (ftruncate(s->fd, len + kept) < 0 || pwrite_full(s->fd, line, (size_t)len, 0) < 0 ||
	    fchmod(s->fd, s->mode) < 0)
		return -1;
	s->dropped += drop;
	s->head = len;
	s->end = len + kept;
	return 0;
}

/* Cut the log to its last SIZE bytes (back to a line's start within
 * slack()) after a new first line.  A NUL first byte first tells a reader
 * (logview.h) to wait; the kept bytes move forward in chunks no longer
 * than the gap before them, so none overwrites what is still to be read;
 * the first line, written last, ends the cut. */
static int cut(struct sink *s, char *buf)
{
	unsigned long long drop = (unsigned long long)(s->end - s->head) - s->size;
	off_t from = s->head + (off_t)drop;
	size_t back = slack(s->size);
	ssize_t got = pread(s->fd, buf, back, from - (off_t)back);
	if (got < 0)
		return -1;
	back = line_back(buf, (size_t)got);
	from -= (off_t)back;
	drop -= back;
	unsigned long long keep = s->size + back;
	char line[DROPPED_LINE_MAX];
	int n = dropped_line(line, s->dropped + drop);
	off_t to = n;
	if (cut_begin(s) < 0)
		return -1;
	size_t step = (size_t)(from - to) < CHUNK ? (size_t)(from - to) : CHUNK;
	for (unsigned long long done = 0; done < keep;) {
		// cppcheck-suppress knownConditionTrueFalse ; STEP > 0: FROM >= SIZE - slack() >= DROPPED_LINE_MAX > TO
		size_t c = keep - done < step ? (size_t)(keep - done) : step;
		got = pread(s->fd, buf, c, from + (off_t)done);
		if (got <= 0 || pwrite_full(s->fd, buf, (size_t)got, to + (off_t)done) < 0)
			return got == 0 ? (errno = EIO, -1) : -1;
		done += (unsigned long long)got;
	}
	return cut_end(s, line, n, (off_t)keep, drop);
}

/* The log becomes the first line (DROP more dropped) and BUF's N bytes, as cut() does. */
static int replace(struct sink *s, const char *buf, size_t n, unsigned long long drop)
{
	char line[DROPPED_LINE_MAX];
	int len = dropped_line(line, s->dropped + drop);
	if (cut_begin(s) < 0 || pwrite_full(s->fd, buf, n, len) < 0)
		return -1;
	return cut_end(s, line, len, (off_t)n, drop);
}

/* Log BUF's N bytes, cut at twice SIZE.  After a failure nothing more is
 * written, only counted: the log stays a whole prefix of what came. */
static void sink_write(struct sink *s, const char *buf, size_t n, char *scratch)
{
	size_t done = 0;
	/* A read of SIZE or more replaces the log with its own last SIZE: a
	 * flood costs one copy, not a copy and a cut. */
	if (n >= s->size && !s->err) {
		size_t skip = n - (size_t)s->size, back = slack(s->size);
		back = back < skip ? back : skip;
		skip -= line_back(buf + skip - back, back);
		if (replace(s, buf + skip, n - skip, (unsigned long long)(s->end - s->head) + skip) < 0)
			s->err = errno ? errno : EIO;
		else
			done = n;
	}
	while (done < n && !s->err) {
		unsigned long long room = 2 * s->size - (unsigned long long)s->end;
		size_t want = n - done < room ? n - done : (size_t)room;
		ssize_t w = pwrite(s->fd, buf + done, want, s->end);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
		s->end += w;
		if ((unsigned long long)s->end >= 2 * s->size && cut(s, scratch) < 0)
			s->err = errno ? errno : EIO;
	}
	s->unlogged += n - done;
}

/* --chronic: the run's last SIZE bytes and a line's slack, in memory. */
struct ring {
	char *data;
	size_t cap, start, len;
	unsigned long long size, total;
};

static void ring_add(struct ring *r, const char *buf, size_t n)
{
	r->total += n;
	if (n >= r->cap) {
		memcpy(r->data, buf + n - r->cap, r->cap);
		r->start = 0;
		r->len = r->cap;
		return;
	}
	size_t at = (r->start + r->len) % r->cap, first = r->cap - at < n ? r->cap - at : n;
	memcpy(r->data + at, buf, first);
	memcpy(r->data, buf + first, n - first);
	if (r->len + n > r->cap) {
		r->start = (r->start + r->len + n - r->cap) % r->cap;
		r->len = r->cap;
	} else {
		r->len += n;
	}
}

/* The ring as a log would hold it, to the report pipe FD after an R (not: no report). */
static void ring_report(struct ring *r, int fd)
{
	char *flat = xmalloc(r->len + 1), line[DROPPED_LINE_MAX];
	size_t first = r->cap - r->start < r->len ? r->cap - r->start : r->len, skip = 0;
	memcpy(flat, r->data + r->start, first);
	memcpy(flat + first, r->data, r->len - first);
	if (r->len > r->size) {
		skip = r->len - (size_t)r->size;
		skip -= line_back(flat, skip);
	}
	unsigned long long dropped = r->total - (r->len - skip);
	int n = dropped ? dropped_line(line, dropped) : 0;
	(void)(write_full(fd, "R", 1) == 0 && write_full(fd, line, (size_t)n) == 0 &&
	       write_full(fd, flat + skip, r->len - skip) == 0);
	free(flat);
}

/* The relay's run lock copy and the ack pipe's end, for let_go(). */
static volatile sig_atomic_t lock_copy = -1, ack_end = -1;

/* SIGUSR1, the command ended: let the run lock go, even in a write to a stalled reader. */
static void let_go(int sig)
{
	int saved = errno;
	(void)sig;
	if (lock_copy >= 0)
		(void)close(lock_copy);
	if (ack_end >= 0)
		(void)close(ack_end);
	lock_copy = ack_end = -1;
	errno = saved;
}

/* The relay: read the command's streams (ERR -1: both come through OUT)
 * until they end, log what comes, keep it in RING (--chronic: data not
 * NULL) and with PASS pass it on; then the ring to REPORT.  After a
 * wake-up that found little it sleeps 10 ms: many short lines cost a
 * wake-up per 10 ms, not per line; a steady flow never waits. */
static _Noreturn void relay(const char *job, int out, int err, struct sink *s, int pass,
			    struct ring *ring, int report)
{
	static const struct timespec trickle_wait = { 0, 10000000 };   /* 10 ms */
	struct pollfd fds[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
	char *buf = xmalloc(CHUNK), *scratch = xmalloc(CHUNK);
	int passing[2] = { pass, pass }, open = err < 0 ? 1 : 2, pass_err[2] = { 0, 0 };
	unsigned long long unpassed[2] = { 0, 0 };

	while (open > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t found = 0;
		int was_open = open;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, buf, CHUNK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close_fd(fds[i].fd);
				fds[i].fd = -1;
				open--;
				continue;
			}
			found += (size_t)n;
			/* Logged first: what a reader saw passed on is in the log. */
			sink_write(s, buf, (size_t)n, scratch);
			if (ring->data)
				ring_add(ring, buf, (size_t)n);
			if (!passing[i]) {
				unpassed[i] += pass ? (unsigned long long)n : 0;
			} else if (write_full(i + 1, buf, (size_t)n) == 0) {
				/* What goes to our stderr's file (> FILE 2>&1). */
				if (mid_line && (i == 1 || err < 0 || out_is_err))
					*mid_line = buf[n - 1] != '\n';
			} else if (errno == EPIPE) {
				/* The reader has gone: the command is told, as without us. */
				close_fd(fds[i].fd);
				fds[i].fd = -1;
				open--;
			} else {
				passing[i] = 0;
				pass_err[i] = errno;
				unpassed[i] += (unsigned long long)n;
			}
		}
		if (found < TRICKLE && open == was_open)
			(void)nanosleep(&trickle_wait, NULL);
	}
	for (int i = 0; i < 2; i++)
		if (unpassed[i])
			warn(job, "could not pass on %llu bytes of the run's output to %s: %s",
			     unpassed[i], i ? "stderr" : "stdout", strerror(pass_err[i]));
	if (s->unlogged)
		warn(job, "could not log %llu bytes of the run's output: %s", s->unlogged,
		     strerror(s->err));
	if (ring->data)
		ring_report(ring, report);
	_exit(0);
}

/* A pipe, closed on exec, CHUNK large where the system allows. */
static int output_pipe(int p[2])
{
	if (pipe(p) < 0 || fcntl(p[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(p[1], F_SETFD, FD_CLOEXEC) < 0)
		return -1;
#ifdef F_SETPIPE_SZ   /* Linux */
	(void)fcntl(p[1], F_SETPIPE_SZ, CHUNK);
#endif
	return 0;
}

/* Do 1 and 2 go to the same file (2>&1)?  With NOT_REGULAR, one that is no
 * regular file: the two streams can then share a pipe, their order kept. */
static int same_file(int not_regular)
{
	struct stat a, b;
	return fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && !(not_regular && S_ISREG(a.st_mode));
}

/* The relay's side of the start (--chronic without memory for the ring:
 * the report falls back on the log). */
static _Noreturn void become_relay(const char *job, int out[2], int err[2], int report[2],
				   int ack[2], int run_lock, struct sink *s, enum log_mode mode)
{
	struct sigaction sa;
	sigset_t usr1;
	struct ring ring = { .size = s->size };

	close_fd(out[1]);
	if (err[1] >= 0)
		close_fd(err[1]);
	close_fd(report[0]);
	close_fd(ack[0]);
	lock_copy = run_lock;
	ack_end = ack[1];
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = let_go;   /* no SA_RESTART: a stalled write is left */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	if (mode == LOG_CHRONIC) {
		ring.cap = (size_t)s->size + slack(s->size);
		ring.data = malloc(ring.cap);
	}
	relay(job, out[0], err[0], s, mode == LOG_PASS, &ring, report[1]);
}

int logrelay_start(const struct registry *reg, const char *job, enum log_mode mode,
		   unsigned long long size, int run_lock, struct logrelay *r, int *out_fd,
		   int *err_fd)
{
	char *name = reg_dot_name(job, ".log");
	struct sink s = { .fd = -1, .size = size };
	struct stat st;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, report[2] = { -1, -1 }, ack[2] = { -1, -1 };
	int rc = 0;
	/* --chronic passes nothing on: one pipe, the order kept. */
	int one_pipe = mode == LOG_CHRONIC || same_file(1);

	r->pid = -1;
	r->out_fd = r->err_fd = r->report_fd = r->ack_fd = -1;
	out_is_err = same_file(0);
	if (!mid_line) {
		void *page = mmap(NULL, sizeof *mid_line, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		mid_line = page == MAP_FAILED ? NULL : page;
		message_mid_line(mid_line);
	}
	int got = entry_open(reg->fd, name, O_RDWR, &s.fd, &st);   /* a cut reads it */
	if (got == 0)
		s.mode = st.st_mode & 07777 & ~(mode_t)LOG_CUT_MARK;
	if (got == ENTRY_NOT_REGULAR)
		rc = reg_not_regular(reg, job, name);
	else if (got < 0)
		rc = fail_errno(errno, job, "open %s", reg_path(reg, name));
	else if (output_pipe(out) < 0 || (!one_pipe && output_pipe(err) < 0) ||
		 output_pipe(report) < 0 || output_pipe(ack) < 0)
		rc = fail_errno(errno, job, "pipe");
	else if ((r->pid = fork()) < 0)
		rc = fail_errno(errno, job, "cannot start the log relay: fork");
	if (!rc && r->pid == 0)
		become_relay(job, out, err, report, ack, run_lock, &s, mode);
	/* Ours: the output pipes' write ends, the others' read ends. */
	int *ends[4][2] = { { &out[0], &out[1] }, { &err[0], &err[1] },
			    { &report[1], &report[0] }, { &ack[1], &ack[0] } };
	for (int i = 0; i < 4; i++) {
		if (*ends[i][0] >= 0)
			close_fd(*ends[i][0]);
		if (rc && *ends[i][1] >= 0)
			close_fd(*ends[i][1]);
	}
	if (!rc) {
		r->out_fd = *out_fd = out[1];
		r->err_fd = err[1];
		*err_fd = one_pipe ? out[1] : err[1];
		r->report_fd = report[0];
		r->ack_fd = ack[0];
		(void)fcntl(report[0], F_SETFL, O_NONBLOCK);
	}
	if (s.fd >= 0)
		close_fd(s.fd);
	free(name);
	return rc;
}

/* FD into B until its end (1) or DEADLINE (0); once something came the
 * rest is read whatever the time: the relay is writing its report. */
static int read_until_end(int fd, struct buf *b, double deadline)
{
	char chunk[65536];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n > 0) {
			buf_add(b, chunk, (size_t)n);
			continue;
		}
		if (n == 0)
			return 1;
		if (errno != EAGAIN && errno != EINTR)
			return 0;
		double left = b->len ? 1 : deadline - now_mono();
		if (left <= 0)
			return 0;
		(void)poll(&p, 1, left < 1 ? (int)(left * 1000) + 1 : 1000);
	}
}

void logrelay_finish(struct logrelay *r)
{
	if (r->out_fd >= 0)
		close_fd(r->out_fd);
	if (r->err_fd >= 0)
		close_fd(r->err_fd);
	r->out_fd = r->err_fd = -1;
	if (r->pid <= 0)
		return;
	/* The relay ends with the pipes' last writer: 2 s at most, its report read meanwhile. */
	buf_reset(&r->report);
	int ended = read_until_end(r->report_fd, &r->report, now_mono() + 2);
	r->have_report = ended && r->report.len && r->report.data[0] == 'R';
	close_fd(r->report_fd);
	r->report_fd = -1;
	if (!ended) {
		/* Kept by a leftover: the relay lets the run lock go, then closes ACK. */
		struct buf none = {0};
		(void)fcntl(r->ack_fd, F_SETFL, O_NONBLOCK);
		if (kill(r->pid, SIGUSR1) == 0)
			(void)read_until_end(r->ack_fd, &none, now_mono() + 2);
		buf_free(&none);
	}
	close_fd(r->ack_fd);
	r->ack_fd = -1;
	/* Ended: it closed the report pipe as it exited. */
	while (waitpid(r->pid, NULL, ended ? 0 : WNOHANG) < 0 && errno == EINTR)
		;
	r->pid = -1;
}

int logrelay_report(struct logrelay *r)
{
	if (!r->have_report)
		return -1;
	size_t n = r->report.len - 1;
	if (n && write_full(2, r->report.data + 1, n) == 0 && mid_line)
		*mid_line = r->report.data[n] != '\n';
	return 0;
}
