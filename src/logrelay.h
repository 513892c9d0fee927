/* logrelay: a run's output kept in DIR/.JOB.log (SPEC §3b; dispatch
 * --log and --chronic).  The command's standard output and standard error
 * go through two pipes to a relay, a process of the run (it holds the run
 * lock as the command does, so a kill -9 of dispatch leaves it relaying:
 * the command is not ended by SIGPIPE).  The relay writes what arrives to
 * the log at once, in arrival order, and with --log passes each stream on
 * to dispatch's own standard output or error, unchanged and unbuffered.
 *
 * The log keeps at least the last SIZE bytes of the run: once it reaches
 * twice that, it is cut in place to its last SIZE bytes, after a first
 * line "[jobreg: N bytes dropped]" (N for the whole run), so it never takes
 * more than twice SIZE on disk.  A reader at that moment may see it half
 * cut: the log is diagnostics, not state, and is not fsynced.  A log that
 * cannot be written (a full disk) never stops or slows the command: the
 * relay goes on passing the output on and says once, at the end, how many
 * bytes it could not log. */
#ifndef JOBREG_LOGRELAY_H
#define JOBREG_LOGRELAY_H

#include <sys/types.h>

#include "registry.h"

enum log_mode { LOG_NONE, LOG_PASS, LOG_CHRONIC };

#define LOG_SIZE_DEFAULT (1ull << 20)
#define LOG_SIZE_MIN 1024ull

struct logrelay {
	pid_t pid;          /* the relay, or -1 */
	int out_fd, err_fd; /* our copies of the pipes' write ends */
};

/* Begin JOB's log afresh, before a run or attempt starts: with
 * KEEP_FAILED (the run before failed or was lost) the last log is first
 * renamed to .JOB.faillog.  The new log is created as a record is (mode
 * 0666 & ~umask, group-shared), never through a symlink, FIFO or other
 * planted entry (77).  Call holding the run lock.  Returns an exit status
 * (the message printed). */
int logrelay_prepare(const struct registry *reg, const char *job, int keep_failed);

/* Start the relay of the log logrelay_prepare() made, for MODE and SIZE,
 * holding the run lock RUN_LOCK: *OUT_FD and *ERR_FD are the command's
 * standard output and error.  Returns an exit status. */
int logrelay_start(const struct registry *reg, const char *job, enum log_mode mode,
		   unsigned long long size, int run_lock, struct logrelay *r, int *out_fd,
		   int *err_fd);

/* The command has ended: close our ends of the pipes and wait a moment
 * for the relay to log the rest (a process the command left behind may
 * hold the pipes, and the relay with them: it is then a process of the
 * run, as that one is). */
void logrelay_finish(struct logrelay *r);

/* The size SIZE ("1M", "512k", "2G", "1048576"), at least LOG_SIZE_MIN;
 * 0, or -1 when bad. */
int logrelay_parse_size(const char *s, unsigned long long *size);

#endif
