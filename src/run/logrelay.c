#define _GNU_SOURCE   /* F_SETPIPE_SZ */
#include "run/logrelay.h"
#include "registry/openat.h"
#include "util/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)   /* the most read at once, and the pipes' size */
#define TRICKLE 4096      /* a wake-up that found less waits (relay()) */

int logrelay_parse_size(const char *s, unsigned long long *size)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	default: return -1;
	}
	if (*end || errno || v > (1ull << 40) >> shift || (v << shift) < LOG_SIZE_MIN)
		return -1;
	*size = v << shift;
	return 0;
}

int logrelay_turn_over(const struct registry *reg, const char *job, int failed)
{
	char *log = reg_dot_name(job, ".log"), *faillog = reg_dot_name(job, ".faillog");
	struct stat st;
	int rc = 0;

	/* A planted entry is refused, never renamed or followed. */
	int have = fstatat(reg->fd, log, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT)
		rc = fail_errno(errno, job, "stat %s", reg_path(reg, log));
	else if (have && !S_ISREG(st.st_mode))
		rc = reg_not_regular(reg, job, log);
	else if (have && !failed && unlinkat(reg->fd, log, 0) < 0 && errno != ENOENT)
		rc = fail_errno(errno, job, "remove %s", reg_path(reg, log));
	else if (have && failed && renameat(reg->fd, log, reg->fd, faillog) < 0)
		rc = fail_errno(errno, job, "rename %s", reg_path(reg, log));
	else if (!have && failed && unlinkat(reg->fd, faillog, 0) < 0 && errno != ENOENT)
		/* That failure left no log: an older one is not its. */
		rc = fail_errno(errno, job, "remove %s", reg_path(reg, faillog));
	free(log);
	free(faillog);
	return rc;
}

int logrelay_prepare(const struct registry *reg, const char *job, int failed)
{
	char *log = reg_dot_name(job, ".log");
	struct stat st;
	int fd = -1, rc = logrelay_turn_over(reg, job, failed);

	int made = rc ? 0 : entry_open(reg->fd, log, O_WRONLY | O_CREAT | O_EXCL, &fd, &st);
	if (made == ENTRY_NOT_REGULAR)
		rc = reg_not_regular(reg, job, log);
	else if (made < 0)
		rc = fail_errno(errno, job, "create %s", reg_path(reg, log));
	else if (!rc && entry_share(fd, reg->share_mode) < 0)
		rc = fail_errno(errno, job, "chmod %s", reg_path(reg, log));
	if (fd >= 0)
		close_fd(fd);
	free(log);
	return rc;
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

/* The relay's log: where the next byte goes, the first line's length, the
 * bytes dropped so far, and those it could not write. */
struct sink {
	int fd;
	unsigned long long size;
	off_t end, head;
	unsigned long long dropped, unlogged;
	int err;
};

/* Cut the log to its last SIZE bytes after a new first line: the kept
 * bytes move forward in chunks no longer than the gap before them, so a
 * chunk never overwrites what is still to be read. */
static int cut(struct sink *s, char *buf)
{
	unsigned long long drop = (unsigned long long)(s->end - s->head) - s->size;
	char line[64];
	int n = snprintf(line, sizeof line, "[jobreg: %llu bytes dropped]\n", s->dropped + drop);
	off_t from = s->head + (off_t)drop, to = n;
	size_t step = (size_t)(from - to) < CHUNK ? (size_t)(from - to) : CHUNK;
	for (unsigned long long done = 0; done < s->size;) {
		// cppcheck-suppress knownConditionTrueFalse ; STEP > 0: FROM >= SIZE >= LOG_SIZE_MIN, TO < 64
		size_t c = s->size - done < step ? (size_t)(s->size - done) : step;
		ssize_t got = pread(s->fd, buf, c, from + (off_t)done);
		if (got <= 0 || pwrite(s->fd, buf, (size_t)got, to + (off_t)done) != got)
			return -1;
		done += (unsigned long long)got;
	}
	if (pwrite(s->fd, line, (size_t)n, 0) != n || ftruncate(s->fd, to + (off_t)s->size) < 0)
		return -1;
	s->dropped += drop;
	s->head = n;
	s->end = to + (off_t)s->size;
	return 0;
}

/* The log becomes a first line saying DROP more bytes were dropped, then
 * the N bytes of BUF. */
static int replace(struct sink *s, const char *buf, size_t n, unsigned long long drop)
{
	char line[64];
	int len = snprintf(line, sizeof line, "[jobreg: %llu bytes dropped]\n", s->dropped + drop);
	for (size_t done = 0; done < n;) {
		ssize_t w = pwrite(s->fd, buf + done, n - done, len + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	if (pwrite(s->fd, line, (size_t)len, 0) != len || ftruncate(s->fd, len + (off_t)n) < 0)
		return -1;
	s->dropped += drop;
	s->head = len;
	s->end = len + (off_t)n;
	return 0;
}

/* Log N bytes of BUF, cutting the log whenever the file reaches twice
 * SIZE, so it never takes more; after the first failure nothing more is
 * written, only counted (the log stays a whole prefix of what came). */
static void sink_write(struct sink *s, const char *buf, size_t n, char *scratch)
{
	size_t done = 0;
	/* A read of SIZE bytes or more leaves nothing of the log but its own
	 * last SIZE: only those are written (a flood costs one copy into the
	 * log, not a copy and a cut). */
	if (n >= s->size && !s->err) {
		size_t skip = n - (size_t)s->size;
		if (replace(s, buf + skip, (size_t)s->size, (unsigned long long)(s->end - s->head) + skip) < 0)
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

/* The relay: read the command's streams until they end, log what comes,
 * and pass it on (PASS) to our stdout or stderr.  ERR is -1 when both
 * streams come through OUT.  Output that trickles in is taken TRICKLE_WAIT
 * at a time: after a wake-up that found little, the relay waits before it
 * looks again, so a command printing many short lines costs it a wake-up
 * per 10 ms, not per line; a steady flow finds the pipe full and never
 * waits. */
static _Noreturn void relay(const char *job, int out, int err, struct sink *s, int pass)
{
	static const struct timespec trickle_wait = { 0, 10000000 };   /* 10 ms */
	struct pollfd fds[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
	char *buf = xmalloc(CHUNK), *scratch = xmalloc(CHUNK);
	int passing[2] = { pass, pass }, open = err < 0 ? 1 : 2;

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
			/* Logged first, so what a reader has seen passed on is in
			 * the log already; a closed stdout or stderr stops the
			 * passing on, not the log. */
			sink_write(s, buf, (size_t)n, scratch);
			if (passing[i] && write_full(i + 1, buf, (size_t)n) < 0)
				passing[i] = 0;
		}
		if (found < TRICKLE && open == was_open)
			(void)nanosleep(&trickle_wait, NULL);
	}
	if (s->unlogged)
		warn(job, "could not log %llu bytes of the run's output: %s", s->unlogged,
		     strerror(s->err));
	_exit(0);
}

/* A pipe for the command's output, its ends closed on exec, as large as
 * CHUNK where the system allows (else the default: it only costs speed). */
static int output_pipe(int p[2])
{
	if (pipe(p) < 0 || fcntl(p[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(p[1], F_SETFD, FD_CLOEXEC) < 0)
		return -1;
#ifdef F_SETPIPE_SZ   /* Linux */
	(void)fcntl(p[1], F_SETPIPE_SZ, CHUNK);
#endif
	return 0;
}

/* Do descriptors 1 and 2 go to the same place, not a regular file (a
 * terminal, /dev/null, a pipe: 2>&1)?  The command's two streams can then
 * share one pipe, which keeps their order exactly. */
static int same_destination(void)
{
	struct stat a, b;
	return fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && !S_ISREG(a.st_mode);
}

int logrelay_start(const struct registry *reg, const char *job, enum log_mode mode,
		   unsigned long long size, int run_lock, struct logrelay *r, int *out_fd,
		   int *err_fd)
{
	char *name = reg_dot_name(job, ".log");
	struct sink s = { .fd = -1, .size = size };
	struct stat st;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, rc = 0;
	/* --chronic passes nothing on: one pipe, the order kept. */
	int one_pipe = mode == LOG_CHRONIC || same_destination();

	r->pid = -1;
	r->out_fd = r->err_fd = -1;
	int got = entry_open(reg->fd, name, O_RDWR, &s.fd, &st);   /* a cut reads it */
	if (got == ENTRY_NOT_REGULAR)
		rc = reg_not_regular(reg, job, name);
	else if (got < 0)
		rc = fail_errno(errno, job, "open %s", reg_path(reg, name));
	else if (output_pipe(out) < 0 || (!one_pipe && output_pipe(err) < 0))
		rc = fail_errno(errno, job, "pipe");
	else if ((r->pid = fork()) < 0)
		rc = fail_errno(errno, job, "cannot start the log relay: fork");
	if (!rc && r->pid == 0) {
		/* The relay holds the run lock (RUN_LOCK, kept open) as the
		 * command does; only the command writes into the pipes. */
		(void)run_lock;
		close_fd(out[1]);
		if (err[1] >= 0)
			close_fd(err[1]);
		relay(job, out[0], err[0], &s, mode == LOG_PASS);
	}
	for (int i = 0; i < 2 && rc; i++) {
		if (out[i] >= 0)
			close_fd(out[i]);
		if (err[i] >= 0)
			close_fd(err[i]);
	}
	if (!rc) {
		close_fd(out[0]);
		if (err[0] >= 0)
			close_fd(err[0]);
		r->out_fd = *out_fd = out[1];
		r->err_fd = err[1];
		*err_fd = one_pipe ? out[1] : err[1];
	}
	if (s.fd >= 0)
		close_fd(s.fd);
	free(name);
	return rc;
}

void logrelay_finish(struct logrelay *r)
{
	static const struct timespec tick = { 0, 50000000 };   /* 50 ms */
	sigset_t child;

	if (r->out_fd >= 0)
		close_fd(r->out_fd);
	if (r->err_fd >= 0)
		close_fd(r->err_fd);
	r->out_fd = r->err_fd = -1;
	if (r->pid <= 0)
		return;
	/* The relay ends when the last writer of the pipes has: at most two
	 * seconds are waited for it (SIGCHLD is held by dispatch). */
	sigemptyset(&child);
	sigaddset(&child, SIGCHLD);
	for (int i = 0; i < 40; i++) {
		pid_t done = waitpid(r->pid, NULL, WNOHANG);
		if (done == r->pid || (done < 0 && errno != EINTR))
			break;
		(void)sigtimedwait(&child, NULL, &tick);
	}
	r->pid = -1;
}
