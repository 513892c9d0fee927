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

#include "registry/registry.h"

enum log_mode { LOG_NONE, LOG_PASS, LOG_CHRONIC };

#define LOG_SIZE_DEFAULT (1ull << 20)
#define LOG_SIZE_MIN 1024ull

struct logrelay {
	pid_t pid;          /* the relay, or -1 */
	int out_fd, err_fd; /* our copies of the pipes' write ends */
};

/* A new run of JOB begins (dispatch, with or without --log, or set): the
 * last run's log no longer is the latest's.  FAILED (that run failed or
 * was lost, jobstate_last_run_failed()): it becomes .JOB.faillog, and when it
 * had none the older fail log goes, since it is not that failure's; else
 * it is removed.  So .JOB.log is always the latest run's and .JOB.faillog
 * the last failure's, or absent.  A planted entry (a symlink, FIFO,
 * directory) is refused (77), never renamed.  Call holding the job lock.
 * Returns an exit status (the message printed). */
int logrelay_turn_over(const struct registry *reg, const char *job, int failed);

/* logrelay_turn_over(), then the new run's log, created as a record is
 * (mode 0666 & ~umask, group-shared), never through a planted entry (77).
 * Call holding the run lock too.  Returns an exit status. */
int logrelay_prepare(const struct registry *reg, const char *job, int failed);

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

/* Empty JOB's log, to give its blocks back: 0, or -1 (none, or not
 * emptied). */
int logrelay_empty(const struct registry *reg, const char *job);

/* The size SIZE ("1M", "512k", "2G", "1048576"), at least LOG_SIZE_MIN;
 * 0, or -1 when bad. */
int logrelay_parse_size(const char *s, unsigned long long *size);

#endif
