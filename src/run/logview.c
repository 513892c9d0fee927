#include "run/logview.h"
#include "registry/openat.h"
#include "util/msg.h"
#include "record/record.h"
#include "record/transition.h"
#include "liveness/jobstate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/inotify.h>
#endif

#define CHUNK 65536
#define FOLLOW_EVERY 100   /* ms: how soon the end of the run is noticed */

/* Open JOB's log NAME (".log" or ".faillog") into *fd; 1 with a message
 * (unless QUIET) when there is none, else an exit status. */
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
				   : fail(EXIT_FALSE, job, "no %s", failed_run ? "log of a failed run" : "log");
	else if (got < 0)
		rc = fail_errno(errno, job, "open %s", reg_path(reg, name));
	free(name);
	return rc;
}

/* JOB's state into ST: an exit status, a corrupt record reported. */
static int load(const struct registry *reg, const char *job, struct job_state *st)
{
	int rc = jobstate_load(reg, job, st);
	return rc == EXIT_CORRUPT ? jobstate_corrupt(reg, job, st) : rc;
}

/* Copy FD from *OFFSET to its end to OUT; -1 with errno. */
static int copy_out(int fd, off_t *offset, int out, char *buf)
{
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK, *offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (write_full(out, buf, (size_t)n) < 0)
			return -1;
		*offset += n;
	}
}

/* Copy JOB's log SUFFIX to OUT (see open_log()). */
static int print(const struct registry *reg, const char *job, const char *suffix, int out,
		 int quiet_missing, int failed_run)
{
	char *buf = xmalloc(CHUNK);
	off_t offset = 0;
	int fd, rc = open_log(reg, job, suffix, &fd, quiet_missing, failed_run);
	if (!rc && copy_out(fd, &offset, out, buf) < 0)
		rc = fail_errno(errno, job, "%s log", out == 1 ? "print the" : "show the");
	if (fd >= 0)
		close_fd(fd);
	free(buf);
	return rc;
}

int logview_print(const struct registry *reg, const char *job)
{
	return print(reg, job, ".log", 1, 0, 0);
}

int logview_faillog(const struct registry *reg, const char *job)
{
	struct job_state st;
	int rc = load(reg, job, &st);
	/* Until the next run begins, the last failure's log is the latest. */
	int latest = !rc && jobstate_last_run_failed(&st);
	jobstate_free(&st);
	return rc ? rc : print(reg, job, latest ? ".log" : ".faillog", 1, 0, 1);
}

void logview_chronic(const struct registry *reg, const char *job)
{
	(void)print(reg, job, ".log", 2, 1, 1);
}

/* The bytes dropped from the log so far, as its first line says. */
static unsigned long long dropped(int fd, off_t *head)
{
	char line[64];
	ssize_t n = pread(fd, line, sizeof line - 1, 0);
	*head = 0;
	if (n <= 0)
		return 0;
	line[n] = '\0';
	if (strncmp(line, "[jobreg: ", 9) != 0 || !strchr(line, '\n'))
		return 0;
	*head = strchr(line, '\n') - line + 1;
	return strtoull(line + 9, NULL, 10);
}

/* Is run RUN of JOB still going?  (An attempt waiting for its retry, and
 * a job read dead or otherwise, have ended.) */
static int going(const struct registry *reg, const char *job, unsigned long long run, int *rc)
{
	struct job_state st;
	*rc = load(reg, job, &st);
	int yes = !*rc && st.status == ST_RUNNING && record_count(&st.rec, "runs") == run &&
		  !record_get(&st.rec, "retry_at");
	jobstate_free(&st);
	return yes;
}

int logview_follow(const struct registry *reg, const char *job)
{
	char *buf = xmalloc(CHUNK);
	struct job_state st;
	unsigned long long run = 0, seen_dropped = 0, run_pos = 0;
	off_t offset = 0, head = 0;
	int fd = -1, ino = -1, rc = load(reg, job, &st);

	if (!rc && st.status == ST_RUNNING && !record_get(&st.rec, "retry_at"))
		run = record_count(&st.rec, "runs");
	jobstate_free(&st);
	if (!rc)
		rc = open_log(reg, job, ".log", &fd, 0, 0);
#ifdef __linux__
	if (!rc && run) {
		char *name = reg_dot_name(job, ".log");
		ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ino >= 0 && inotify_add_watch(ino, reg_path(reg, name), IN_MODIFY) < 0) {
			close_fd(ino);
			ino = -1;
		}
		free(name);
	}
#endif
	/* RUN_POS: how far into the run's output we have printed.  A cut
	 * moves what is kept to the front, after a new first line: go on from
	 * there (what was dropped before it was read is gone). */
	seen_dropped = rc ? 0 : dropped(fd, &head);
	for (int live = run != 0; !rc;) {
		unsigned long long d = dropped(fd, &head);
		if (d != seen_dropped) {
			seen_dropped = d;
			offset = head + (off_t)(run_pos > d ? run_pos - d : 0);
		}
		if (copy_out(fd, &offset, 1, buf) < 0) {
			rc = fail_errno(errno, job, "print the log");
			break;
		}
		run_pos = seen_dropped + (unsigned long long)(offset > head ? offset - head : 0);
		if (!live)
			break;
		/* One more look at the log once the run has ended. */
		live = going(reg, job, run, &rc);
		if (!live || rc)
			continue;
		struct pollfd p = { .fd = ino, .events = POLLIN };
		if (poll(&p, ino >= 0, FOLLOW_EVERY) > 0) {
			char events[4096];
			while (read(ino, events, sizeof events) > 0)
				;
		}
	}
	if (ino >= 0)
		close_fd(ino);
	if (fd >= 0)
		close_fd(fd);
	free(buf);
	return rc;
}
