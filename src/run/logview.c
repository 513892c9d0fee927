#include "run/logview.h"
#include "run/logrelay.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"
#include "record/record.h"
#include "record/transition.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 65536
#define HEAD 128   /* the first bytes compared: the first line and more */

/* JOB's log SUFFIX into *FD; an exit status, 1 when none (said unless QUIET_MISSING). */
static int open_log(const struct registry *reg, const char *job, const char *suffix, int *fd,
		    int quiet_missing, int failed_run)
{
	char *name = reg_dot_name(job, suffix);
	struct stat st;
	int rc = 0;

	*fd = -1;
	int got = reg->fd < 0 ? (errno = ENOENT, -1) : entry_open(reg->fd, name, O_RDONLY, fd, &st);
	if (got == ENTRY_NOT_REGULAR)
		rc = reg_not_regular(reg, job, name);
	else if (got < 0 && errno == ENOENT)
		rc = quiet_missing ? EXIT_FALSE
				   : fail(EXIT_FALSE, job, "no %s (only a run dispatched with --log or --chronic keeps one)",
					  failed_run ? "log of a failed run" : "log");
	else if (got < 0)
		rc = fail_errno(errno, job, "open %s", reg_path(reg, name));
	free(name);
	return rc;
}

/* ---- Reading a log that the relay may be cutting. ---- */

/* One log file, as a reader goes through it. */
struct reader {
	const char *job;
	int fd;
	int out;                  /* where it is printed */
	int started;              /* the log's first line is printed */
	unsigned long long pos;   /* the run's output printed, drops counted */
	int skip_line;            /* output was lost: go on after a newline */
	int mid_line;             /* the last byte printed was no newline */
	char seen[HEAD];          /* the log's first bytes at the last read */
	size_t nseen;
	off_t seen_size;          /* and its size then */
	char *buf;
};

static ssize_t read_at(int fd, char *buf, size_t len, off_t at)
{
	ssize_t n;
	while ((n = pread(fd, buf, len, at)) < 0 && errno == EINTR)
		;
	return n;
}

/* The run's output from r->pos on into r->buf: the bytes read, -1 with
 * errno, or 0 with *BUSY when the log changed under the read or, while
 * GOING (a relay may write), a cut is under way (logview.h).  Output
 * dropped before it was read is told here. */
static ssize_t look(struct reader *r, int going, int *busy)
{
	char h1[HEAD], h2[HEAD];
	unsigned long long dropped = 0;
	struct stat before, after;

	*busy = 0;
	ssize_t n1 = fstat(r->fd, &before) < 0 ? -1 : read_at(r->fd, h1, HEAD, 0);
	if (n1 < 0)
		return -1;
	size_t len = logrelay_dropped_read(h1, (size_t)n1, &dropped);
	size_t common = (size_t)n1 < r->nseen ? (size_t)n1 : r->nseen;
	if (going && ((n1 > 0 && h1[0] == '\0' && (before.st_mode & LOG_CUT_MARK)) ||
		      (len <= common && memcmp(h1, r->seen, len) == 0 &&
		       memcmp(h1, r->seen, common) != 0 && before.st_size >= r->seen_size)))
		return *busy = 1, 0;
	unsigned long long from = r->pos > dropped ? r->pos : dropped;
	off_t at = (off_t)(len + (from - dropped));
	ssize_t n = read_at(r->fd, r->buf, CHUNK, at);
	ssize_t n2 = n < 0 ? -1 : read_at(r->fd, h2, HEAD, 0);
	if (n2 < 0 || fstat(r->fd, &after) < 0)
		return -1;
	/* The start may grow, never change; nor the log shrink under the read. */
	if (n2 < n1 || memcmp(h1, h2, (size_t)n1) != 0 || after.st_size < at + n ||
	    (going && n1 > 0 && h1[0] == '\0' && (after.st_mode & LOG_CUT_MARK)))
		return *busy = 1, 0;
	memcpy(r->seen, h2, (size_t)n2);
	r->nseen = (size_t)n2;
	r->seen_size = after.st_size;
	if (!r->started) {
		/* As the log is: its first line too. */
		r->started = 1;
		r->pos = from;
		if (len && write_full(r->out, h1, len) < 0)
			return -1;
	} else if (from > r->pos) {
		warn(r->job, "the log was cut: %llu bytes dropped before they were read",
		     from - r->pos);
		r->pos = from;
		r->skip_line = 1;
		if (r->mid_line && write_full(r->out, "\n", 1) < 0)
			return -1;
		r->mid_line = 0;
	}
	return n;
}

/* Print N bytes look() read: after a loss from the next newline on; with
 * WHOLE only whole lines (a chunk with none as it is).  0, or -1. */
static int emit(struct reader *r, size_t n, int whole)
{
	const char *p = r->buf, *end = r->buf + n;
	if (r->skip_line) {
		const char *nl = memchr(p, '\n', n);
		if (!nl) {
			if (n == CHUNK || !whole)
				r->pos += n;   /* all of it the rest of a lost line */
			return 0;
		}
		r->pos += (unsigned long long)(nl + 1 - p);
		p = nl + 1;
		r->skip_line = 0;
	}
	const char *stop = end;
	if (whole) {
		while (stop > p && stop[-1] != '\n')
			stop--;
		if (stop == r->buf && n == CHUNK)
			stop = end;
	}
	if (stop == p)
		return 0;
	if (write_full(r->out, p, (size_t)(stop - p)) < 0)
		return -1;
	r->pos += (unsigned long long)(stop - p);
	r->mid_line = stop[-1] != '\n';
	return 0;
}

/* The log from r->pos to its end; *SETTLED 0 when a cut kept some back.  An exit status. */
static int take(struct reader *r, int going, int whole, int *settled)
{
	*settled = 1;
	for (int tries = 0;;) {
		int busy;
		ssize_t n = look(r, going, &busy);
		if (n < 0)
			return fail_errno(errno, r->job, "read the log");
		if (busy && ++tries < 100)
			continue;   /* a cut takes microseconds */
		if (busy)
			*settled = 0;
		if (busy || n == 0)
			return 0;
		if (emit(r, (size_t)n, whole) < 0)
			return fail_errno(errno, r->job, "%s the log", r->out == 1 ? "print" : "show");
		if (n < CHUNK)
			return 0;
	}
}

/* All of FD (no relay writes it) to OUT; with END_LINE, its last line ended. */
static int print_fd(const char *job, int fd, int out, int end_line)
{
	struct reader r = { .job = job, .fd = fd, .out = out, .buf = xmalloc(CHUNK) };
	int settled, rc = take(&r, 0, 0, &settled);
	if (end_line && r.mid_line)
		(void)write_full(out, "\n", 1);
	free(r.buf);
	return rc;
}

/* ---- --faillog and --chronic: logs no relay writes. ---- */

int logview_faillog(const struct registry *reg, const char *job, double lock_wait)
{
	struct job_state st;
	int fd = -1, lock = -1;
	int rc = reg->fd < 0 ? 0 : reg_lock(reg, job, JOB_LOCK, LOCK_SH, lock_wait, 0, &lock);
	if (!rc) {
		rc = jobstate_read(reg, job, &st);
		/* Until the next run begins, the last failure's log is the latest. */
		int latest = !rc && jobstate_last_run_failed(&st);
		jobstate_free(&st);
		if (!rc)
			rc = open_log(reg, job, latest ? ".log" : ".faillog", &fd, 0, 1);
	}
	reg_unlock(&lock);
	if (!rc)
		rc = print_fd(job, fd, 1, 0);
	if (fd >= 0)
		close_fd(fd);
	return rc;
}

int logview_failed_tail(const struct registry *reg, const char *job, const struct job_state *st,
			off_t tail, int *fd)
{
	struct stat sb;
	/* As --faillog chooses: the latest log while the failed run is the latest. */
	int rc = open_log(reg, job, jobstate_last_run_failed(st) ? ".log" : ".faillog", fd, 1, 1);
	if (rc == EXIT_FALSE)
		return 0;
	if (!rc && fstat(*fd, &sb) < 0)
		rc = fail_errno(errno, job, "stat the log of a failed run");
	if (!rc && sb.st_size > tail && lseek(*fd, sb.st_size - tail, SEEK_SET) < 0)
		rc = fail_errno(errno, job, "seek in the log of a failed run");
	if (rc && *fd >= 0) {
		close_fd(*fd);
		*fd = -1;
	}
	return rc;
}

void logview_chronic(const struct registry *reg, const char *job)
{
	int fd;
	if (open_log(reg, job, ".log", &fd, 1, 1) == 0) {
		(void)print_fd(job, fd, 2, 1);
		close_fd(fd);
	}
}

/* ---- --log and --follow: the latest log, which a relay may write. ---- */

struct view {
	struct registry *reg;
	const char *job;
	int follow;            /* --follow: until the run ends */
	struct reader r;
	struct record run;     /* the run followed, as first seen RUNNING */
	int have_run;
	int rc;
};

/* Are A and B records of one dispatch (its attempts: runs of one process)? */
static int same_dispatch(const struct record *a, const struct record *b)
{
	static const char *const keys[] = { "host", "pid", "pid_start" };
	if (!record_get(a, "pid"))
		return record_count(a, "runs") == record_count(b, "runs");
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!same_string(record_get(a, keys[i]), record_get(b, keys[i])))
			return 0;
	return 1;
}

/* Is JOB's run lock held (a dispatch is under way)? */
static int run_lock_held(const struct registry *reg, const char *job)
{
	int probe = -1, busy = 0;
	unsigned long long ino;
	if (reg_probe_run_lock(reg, job, &probe, &ino, &busy) != 0)
		busy = 0;
	reg_unlock(&probe);
	return busy;
}

/* A starting run's log is .JOB.newlog until RUNNING is written
 * (logrelay.h): while it is there and the run lock held, wait for it (a
 * few milliseconds; at most 5 s, for a slow disk). */
static void wait_new_log(const struct registry *reg, const char *job)
{
	char *name = reg_dot_name(job, ".newlog"), *files = reg_dot_name(job, ".");
	struct stat st;
	struct entry_watch w;
	double until = now_mono() + 5;
	/* (woken as the new log is put in place or the run lock let go) */
	wait_watch_open(&w, reg);
	while (now_mono() < until && reg->fd >= 0 &&
	       fstatat(reg->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && run_lock_held(reg, job))
		wait_watch(&w, files, until);
	wait_watch_close(&w);
	free(name);
	free(files);
}

/* Does the log's run go on: the one RUNNING when first asked, or before
 * that one starting (run lock held, SPEC §5 step 4)? */
static int going(struct view *v, const struct job_state *st)
{
	if (st->status == ST_RUNNING && !v->have_run) {
		record_copy(&v->run, &st->rec);
		v->have_run = 1;
	}
	if (v->have_run)
		return st->status == ST_RUNNING && same_dispatch(&v->run, &st->rec);
	return run_lock_held(v->reg, v->job);
}

/* A new log file (the next attempt's): the old one's rest printed, its
 * last line ended, and on with the new one.  An exit status. */
static int next_attempt(struct view *v)
{
	char *name = reg_dot_name(v->job, ".log");
	struct stat now, ours;
	int fd, rc = 0, settled;

	int there = v->reg->fd >= 0 && fstatat(v->reg->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0;
	free(name);
	if (!there || fstat(v->r.fd, &ours) < 0 ||
	    (now.st_dev == ours.st_dev && now.st_ino == ours.st_ino))
		return 0;   /* none between the two steps of a turnover: wait */
	if ((rc = take(&v->r, 0, 0, &settled)) != 0)
		return rc;
	if (v->r.mid_line && write_full(1, "\n", 1) < 0)
		return fail_errno(errno, v->job, "print the log");
	v->r.mid_line = 0;
	if ((rc = open_log(v->reg, v->job, ".log", &fd, 1, 0)) != 0)
		return rc == EXIT_FALSE ? 0 : rc;
	close_fd(v->r.fd);
	v->r = (struct reader){ .job = v->job, .fd = fd, .out = 1, .buf = v->r.buf };
	return 0;
}

/* At each change, print what came; 1 when done (--follow: the run ended) or on an error. */
static int printed(struct view *v, const struct job_state *st)
{
	int settled = 1, on = going(v, st);
	if (on && v->follow)
		v->rc = next_attempt(v);
	if (!v->rc)
		v->rc = take(&v->r, on, on && v->follow, &settled);
	return v->rc || !on || (!v->follow && settled);
}

/* printed() at each change of the record or the log NAME, until done. */
static int print_following(struct view *v, const char *name)
{
	char *jobs[] = { (char *)v->job };
	struct waiter *w = wait_jobs_open(v->reg, jobs, 1, name);
	const struct job_state *st;
	int rc;
	while ((rc = wait_jobs_look(w, &st)) == 0 && !printed(v, st) &&
	       (rc = wait_jobs_sleep(w, -1)) == 0)
		;
	wait_jobs_close(w);
	return rc;
}

/* --log: the log as it is now (a corrupt record: no run going), but a cut waited out. */
static int print_now(struct view *v, const char *name)
{
	struct job_state st;
	int rc = jobstate_load(v->reg, v->job, &st);
	int done = rc == 0 || rc == EXIT_CORRUPT ? printed(v, &st) : 1;
	jobstate_free(&st);
	if (rc == EXIT_CORRUPT)
		rc = 0;
	return rc || done ? rc : print_following(v, name);
}

int logview_print(struct registry *reg, const char *job, int follow)
{
	struct view v = { .reg = reg, .job = job, .follow = follow };
	char *name = reg_dot_name(job, ".log");
	int fd;

	wait_new_log(reg, job);
	int rc = open_log(reg, job, ".log", &fd, 0, 0);
	if (!rc) {
		v.r = (struct reader){ .job = job, .fd = fd, .out = 1, .buf = xmalloc(CHUNK) };
		rc = follow ? print_following(&v, name) : print_now(&v, name);
		if (!rc)
			rc = v.rc;
		close_fd(v.r.fd);
		free(v.r.buf);
	}
	if (v.have_run)
		record_free(&v.run);
	free(name);
	return rc;
}
