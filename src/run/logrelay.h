/* logrelay: a run's output kept in DIR/.JOB.log (SPEC §3b; dispatch
 * --log and --chronic).  The command's standard output and standard error
 * go through two pipes to a relay, a process of the run (it holds the run
 * lock as the command does, so a kill -9 of dispatch leaves it relaying:
 * the command is not ended by SIGPIPE).  The relay writes what arrives to
 * the log at once, in arrival order, and with --log passes each stream on
 * to dispatch's own standard output or error, unchanged and unbuffered.
 * A closed reader is passed back: that stream's pipe is closed, so the
 * command gets SIGPIPE or EPIPE as it would without --log; a non-blocking
 * stdout is waited for, never dropped; any other failure to pass output on
 * is said in one line at the end.
 *
 * The log keeps at least the last SIZE bytes of the run: once it reaches
 * twice that, it is cut in place to its last SIZE bytes (back to the start
 * of their first line, when it begins at most LINE_SLACK before), after a
 * first line "[jobreg: N bytes dropped]" (N for the whole run), so it never
 * takes more than twice SIZE on disk.  A cut makes the first byte NUL
 * first and writes that line last, and the log's mode has LOG_CUT_MARK
 * meanwhile, so a reader tells a cut under way from a run whose own
 * output begins with a NUL byte (logview.h).  The log is diagnostics, not
 * state, and is not fsynced.  A log that cannot be written (a full disk)
 * never stops or slows the command: the relay goes on passing the output
 * on and says once, at the end, how many bytes it could not log.  With
 * --chronic the relay keeps the last SIZE bytes in memory too, and hands
 * them to dispatch at the end: the report of a failed run is whole even
 * when the disk could not hold its log. */
#ifndef JOBREG_LOGRELAY_H
#define JOBREG_LOGRELAY_H

#include <sys/stat.h>
#include <sys/types.h>

#include "registry/registry.h"
#include "util/sys.h"

enum log_mode { LOG_NONE, LOG_PASS, LOG_CHRONIC };

#define LOG_SIZE_DEFAULT (1ull << 20)
#define LOG_SIZE_MIN 1024ull

#define LINE_SLACK 4096   /* a cut keeps the whole line it falls in up to this */
#define DROPPED_LINE_MAX 64
/* In a log's mode while a cut is under way: no log is made with it. */
#define LOG_CUT_MARK S_IXUSR

struct logrelay {
	pid_t pid;          /* the relay, or -1 */
	int out_fd, err_fd; /* our copies of the pipes' write ends */
	int report_fd;      /* --chronic: the relay's report comes through it */
	int ack_fd;         /* closed by the relay once it let the run lock go */
	struct buf report;  /* --chronic: the run's last SIZE bytes, as a log */
	int have_report;    /* the relay handed them over */
};

/* Does the log text BUF (N bytes, its beginning) start with the line of
 * a log that lost bytes, "[jobreg: N bytes dropped]\n"?  Returns the
 * line's length with *DROPPED set, or 0 (none).  The one place the line
 * is read. */
size_t logrelay_dropped_read(const char *buf, size_t n, unsigned long long *dropped);


/* A new run of JOB begins (dispatch, with or without --log, or set): the
 * last run's log no longer is the latest's.  FAILED (that run failed or
 * was lost, jobstate_last_run_failed()): it becomes .JOB.faillog, and when it
 * had none the older fail log goes, since it is not that failure's; else
 * it is removed.  So .JOB.log is always the latest run's and .JOB.faillog
 * the last failure's, or absent.  A planted entry (a symlink, FIFO,
 * directory) is refused (77), never renamed.  Call holding the job lock.
 * Returns an exit status (the message printed). */
int logrelay_turn_over(const struct registry *reg, const char *job, int failed);

/* Before a run (or attempt) is recorded RUNNING: refuse a planted .log or
 * .faillog (77), and with MAKE create the new run's log, under the name
 * .JOB.newlog until logrelay_commit(), as a record is (mode 0666 & ~umask,
 * group-shared), never through a planted entry; without MAKE, remove a
 * .JOB.newlog a dispatch that died left (a reader would wait for it while
 * this run goes).  The logs are not touched
 * yet: a dispatch that cannot start leaves them as they were.  Call holding
 * the job lock and the run lock.  Returns an exit status. */
int logrelay_prepare(const struct registry *reg, const char *job, int make);

/* RUNNING is written: logrelay_turn_over(), then the new log (MADE:
 * logrelay_prepare() made one) in its place.  Returns an exit status (the
 * message printed). */
int logrelay_commit(const struct registry *reg, const char *job, int failed, int made);

/* RUNNING could not be written: the new log goes. */
void logrelay_abandon(const struct registry *reg, const char *job);

/* Start the relay of JOB's log (committed), for MODE and SIZE, holding
 * the run lock RUN_LOCK: *OUT_FD and *ERR_FD are the command's standard
 * output and error.  Returns an exit status. */
int logrelay_start(const struct registry *reg, const char *job, enum log_mode mode,
		   unsigned long long size, int run_lock, struct logrelay *r, int *out_fd,
		   int *err_fd);

/* The command has ended: close our ends of the pipes and wait a moment
 * for the relay to log the rest, taking its report (--chronic).  A process
 * the command left behind may hold the pipes, and the relay with them: it
 * then lets the run lock go (the run has ended; dispatch holds it until
 * DONE), and goes on relaying what that process writes. */
void logrelay_finish(struct logrelay *r);

/* --chronic: print the report logrelay_finish() took on standard error;
 * 0, or -1 when there is none (the relay did not end in time). */
int logrelay_report(struct logrelay *r);

/* Empty JOB's log, to give its blocks back: 0, or -1 (none, or not
 * emptied). */
int logrelay_empty(const struct registry *reg, const char *job);

/* The size SIZE ("1M", "512k", "2g", "1048576": the unit in either
 * case), at least LOG_SIZE_MIN; 0, or -1 when bad. */
int logrelay_parse_size(const char *s, unsigned long long *size);

#endif
