/* supervise: step 5 of jobreg-dispatch (SPEC §5) — run the command, pass
 * held signals on to it, enforce its time limit, wait for its end.
 *
 * supervise_signals(), once at start-up: HELD gets SIGHUP SIGINT SIGQUIT
 * SIGTERM SIGUSR1 SIGUSR2, SIGCHLD and SIGURG (a canceller's wake-up,
 * never passed on); OLD the caller's mask; SIGCHLD made queueable.  The
 * caller blocks HELD before it writes RUNNING, so no signal can kill the
 * dispatcher between RUNNING and DONE.
 *
 * supervise_start() execs S->command with the mask OLD, the SIGPIPE
 * disposition dispatch inherited and S->keep_fd (the run lock) kept open.
 * supervise_step() returns at each tick (a second) and SIGURG, where the
 * caller looks for a cancel (SPEC §5a).  Meanwhile:
 * - A held signal is forwarded once the exec succeeded, unless the kernel
 *   sent it (SI_KERNEL: the terminal's Ctrl-C, Ctrl-\ or hangup): that
 *   went to our whole process group, the command's too while it shares it.
 * - With S->timeout > 0 the command has its own process group (setpgid in
 *   child and parent, so neither order races), which forwarded signals
 *   reach.  At the limit: S->signal, SIGCONT, and with S->kill_after > 0
 *   SIGKILL that much later; one sigtimedwait() to the next deadline, no
 *   polling.  As with timeout(1), the run ends when the command does.
 * - With S->check_lock, each tick checks the run lock is still ours (SPEC
 *   §6: a partitioned shared filesystem takes it silently): LOCK_EX|LOCK_NB
 *   failing with EWOULDBLOCK, EBADFD or ESHUTDOWN is a loss; any other
 *   error proves nothing and is retried 0.1 s later.  A loss is said and
 *   stops the run as at a time limit (KILL 10 s later when S->kill_after
 *   is 0); no tick or wake-up follows.  A removed or replaced .JOB.run is
 *   no loss.
 *
 * supervise_outcome(): the record's result and the exit status — 128+N
 * killed by signal N, 126 not executable, 127 not found, 124 the limit. */
#ifndef JOBREG_SUPERVISE_H
#define JOBREG_SUPERVISE_H

#include "util/signame.h"

#include <signal.h>

struct run_result;

struct supervise {
	char **command;     /* argv, for execvp */
	int keep_fd;        /* inherited by the command; -1: none */
	double timeout;     /* seconds; <= 0: no limit */
	double kill_after;  /* seconds after the limit's signal; <= 0: never */
	int signal;         /* sent at the limit (SIGTERM) */
	int check_lock;     /* check once a second that keep_fd is still locked */
	int sigpipe_ignored; /* the command gets SIGPIPE ignored (else default):
			      * as dispatch got it, before cli_init() */
	int out_fd, err_fd; /* the command's stdout and stderr (-1: ours) */
	int in_fd;          /* > 0: the command's stdin (a notification's, §5c) */
	const char *job;    /* for the message of a lost lock: JOB and */
	const char *run;    /* the run's number */
};

struct supervise_end {
	int wait_status;    /* of the command, when it was started */
	int start_errno;    /* fork/pipe failed: nothing ran */
	int exec_errno;     /* the exec failed (the child exited 126/127) */
	int wait_errno;     /* waitpid failed: the end is unknown */
	int timed_out;      /* the limit's signal was sent */
	int killed;         /* and SIGKILL --kill-after later */
	int lost_lock;      /* the run lock was lost and the run stopped */
	int stopped;        /* HUP, INT, QUIT or TERM came (and was passed on) */
	double kill_at;     /* when a KILL is due (now_mono()), or -1 */
	pid_t pid;          /* supervise's own, between calls: */
	int started, own_group, ended;
	double limit_at, check_at;
};

/* The command ended (reaped) or the pause is over; a tick; SIGURG; a pause
 * only: dispatch told to stop (HUP INT QUIT TERM), the run lock lost (said). */
enum supervise_event { SV_ENDED, SV_TICK, SV_WAKE, SV_STOP, SV_LOST };

void supervise_signals(sigset_t *held, sigset_t *old);
/* Start S->command (END filled); then supervise_step() until SV_ENDED. */
void supervise_start(const struct supervise *s, const sigset_t *held, const sigset_t *old,
		     struct supervise_end *end);
enum supervise_event supervise_step(const struct supervise *s, const sigset_t *held,
				    struct supervise_end *end);
/* 0: the command is stopped (SIGSTOP) so it cannot end before a signal,
 * and supervise_stop() continues it; 1: it had ended (reaped). */
int supervise_freeze(struct supervise_end *end);
/* Stop the command as at a time limit: SIG, SIGCONT, and SIGKILL
 * KILL_AFTER seconds later (<= 0: none) or when one is due, the earlier. */
void supervise_stop(struct supervise_end *end, int sig, double kill_after);
/* Between attempts, or while what a command left goes: supervise_step()
 * with no command, SV_ENDED at UNTIL (now_mono()). */
enum supervise_event supervise_pause(const struct supervise *s, const sigset_t *held,
				     double until);
/* Fill OUT (its signal name in NAME) and return dispatch's exit status. */
int supervise_outcome(const struct supervise_end *end, struct run_result *out,
		      char name[SIGNAME_MAX]);

#endif
