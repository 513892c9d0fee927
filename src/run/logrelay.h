/* logrelay: a run's output kept in DIR/.JOB.log (SPEC §3b; dispatch --log,
 * --chronic).  The command's stdout and stderr go through pipes to a relay
 * process, which holds the run lock as the command does (a kill -9 of
 * dispatch leaves it relaying, so the command gets no SIGPIPE).  It logs
 * what arrives at once, in arrival order, and with --log passes each
 * stream on unchanged and unbuffered.  A closed reader is passed back (the
 * stream's pipe closed: SIGPIPE or EPIPE as without --log); a non-blocking
 * stdout is waited for, never dropped; other failures to pass on are said
 * in one line at the end.
 *
 * The log keeps at least the last SIZE bytes: at twice that it is cut in
 * place to them (back to the start of their first line within LINE_SLACK)
 * after a first line "[jobreg: N bytes dropped]" (N for the whole run).  A
 * cut makes the first byte NUL first and writes that line last, with
 * LOG_CUT_MARK in the mode meanwhile, so a reader tells a cut under way
 * from output that begins with NUL (logview.h).  The log is diagnostics,
 * not state: no fsync, and a log that cannot be written (a full disk) never
 * stops or slows the command; the unlogged bytes are counted and said at
 * the end.  With --chronic the relay also keeps the last SIZE bytes in
 * memory for the report, whole even when the disk could not hold the log. */
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

/* The length of the "[jobreg: N bytes dropped]\n" line that BUF (N bytes,
 * a log's beginning) starts with, N in *DROPPED; 0: none. */
size_t logrelay_dropped_read(const char *buf, size_t n, unsigned long long *dropped);

/* A new run of JOB begins (dispatch, or set), holding the job lock: with
 * FAILED (jobstate_last_run_failed()) the log becomes .JOB.faillog, or
 * without one the older fail log goes (not that failure's); else the log
 * is removed.  A planted entry is refused (77), never renamed.  Returns an
 * exit status (the message printed). */
int logrelay_turn_over(const struct registry *reg, const char *job, int failed);

/* Before RUNNING, holding the job and run locks: refuse a planted .log or
 * .faillog (77); with MAKE create the new log as .JOB.newlog (mode as a
 * record's, never through a planted entry) until logrelay_commit(), else
 * remove one a dead dispatch left (a reader would wait for it).  The logs
 * in place are untouched: a dispatch that cannot start leaves them as they
 * were.  Returns an exit status. */
int logrelay_prepare(const struct registry *reg, const char *job, int make);

/* RUNNING is written: logrelay_turn_over(), then the new log (MADE: one
 * was made) in its place.  Returns an exit status (the message printed). */
int logrelay_commit(const struct registry *reg, const char *job, int failed, int made);

/* RUNNING could not be written: the new log goes. */
void logrelay_abandon(const struct registry *reg, const char *job);

/* Start the relay of JOB's log for MODE and SIZE, holding the run lock
 * RUN_LOCK; *OUT_FD and *ERR_FD for the command.  An exit status. */
int logrelay_start(const struct registry *reg, const char *job, enum log_mode mode,
		   unsigned long long size, int run_lock, struct logrelay *r, int *out_fd,
		   int *err_fd);

/* The command has ended: close our pipe ends and wait a moment for the
 * relay to log the rest, taking its report (--chronic).  When a process
 * the command left behind keeps the pipes open, the relay is told to let
 * the run lock go (dispatch holds it until DONE) and relays on. */
void logrelay_finish(struct logrelay *r);

/* --chronic: print the report logrelay_finish() took on standard error;
 * 0, or -1 when there is none (the relay did not end in time). */
int logrelay_report(struct logrelay *r);

/* Empty JOB's log to give its blocks back: 0, or -1. */
int logrelay_empty(const struct registry *reg, const char *job);

/* The size SIZE ("1M", "512k", "2g", "1048576": the unit in either
 * case), at least LOG_SIZE_MIN; 0, or -1 when bad. */
int logrelay_parse_size(const char *s, unsigned long long *size);

#endif
