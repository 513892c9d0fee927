/* supervise: step 5 of jobreg-dispatch — run the command, pass signals on
 * to it, enforce its time limit, and wait for its end (SPEC §5).
 *
 * supervise_signals() is called once at start-up: it fills HELD with the
 * signals the run holds (SIGHUP SIGINT SIGQUIT SIGTERM SIGUSR1 SIGUSR2,
 * SIGCHLD, and SIGURG: a canceller's wake-up, never passed on), saves the caller's mask in OLD, and makes SIGCHLD queueable.
 * The caller blocks HELD before it writes RUNNING: from then on no signal
 * can kill the dispatcher between RUNNING and DONE; each is kept for the
 * command.
 *
 * supervise_run() forks and execs S->command with the mask OLD and the
 * SIGPIPE disposition dispatch inherited, keeping S->keep_fd (the run
 * lock) open across the exec, and returns when the command has ended:
 * - A held signal is forwarded once the exec has succeeded (so one that
 *   came earlier is delivered as soon as the command runs) — except one
 *   the command received itself: a signal the kernel sent us (si_code
 *   SI_KERNEL: the terminal's Ctrl-C, Ctrl-\ or hangup) went to our whole
 *   process group, which includes the command when it still shares it.
 * - With S->timeout > 0, the command runs in its own process group
 *   (setpgid in the child and in the parent, so neither order races);
 *   forwarded signals go to that group.  At the limit the group gets
 *   S->signal, then SIGCONT so stopped members act on it; with
 *   S->kill_after > 0, SIGKILL that much later.  The wait is one
 *   sigtimedwait() bounded by the next deadline: no polling.
 *   As with timeout(1), the run is over when the command itself ends;
 *   members of its group that outlive it are not waited for.
 *
 * - With S->check_lock, it checks once a second that it still holds the
 *   run lock S->keep_fd (SPEC §6: a partitioned shared filesystem can take
 *   it away without telling us): a LOCK_EX|LOCK_NB of a lock we hold
 *   succeeds, EWOULDBLOCK, EBADFD or ESHUTDOWN means it is gone (any other
 *   error proves nothing: it asks again 0.1 s later).  On a loss it says so,
 *   and the run is stopped as at a time limit: S->signal, then SIGKILL
 *   S->kill_after later (10 s when that is 0).  A removed or replaced
 *   .JOB.run is no loss: our lock on the old inode stands.
 * - With S->cancel_asked, a cancel is looked for at the same checks and
 *   at once on SIGURG; one that came stops the run as a time limit does,
 *   with its own signal and KILL delay (SPEC §5a).
 *
 * supervise_outcome() maps the end to what the record and the exit status
 * say: 128+N killed by signal N, 126 not executable, 127 not found, 124
 * when the limit ended the run. */
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
	const char *job;    /* for the message of a lost lock: JOB and */
	const char *run;    /* the run's number */
	/* Has a cancel of the run come (SPEC §5a)?  Asked once a second,
	 * and at once on SIGURG; 1 with the signal to send and the seconds
	 * before KILL (<= 0: none).  NULL: never asked. */
	int (*cancel_asked)(void *ctx, int *sig, double *kill_after);
	void *cancel_ctx;
};

struct supervise_end {
	int wait_status;    /* of the command, when it was started */
	int start_errno;    /* fork/pipe failed: nothing ran */
	int exec_errno;     /* the exec failed (the child exited 126/127) */
	int wait_errno;     /* waitpid failed: the end is unknown */
	int timed_out;      /* the limit's signal was sent */
	int killed;         /* and SIGKILL --kill-after later */
	int lost_lock;      /* the run lock was lost and the run stopped */
	int stopped;        /* dispatch was told to stop: HUP, INT, QUIT or
			     * TERM came (and was passed on) */
	int cancelled;      /* a cancel's signal was sent to the command */
	int cancel_no_kill; /* ... and no cancel asked for a KILL */
	double kill_at;     /* when a KILL was still due as it ended (now_mono()),
			     * or -1 */
};

void supervise_signals(sigset_t *held, sigset_t *old);
void supervise_run(const struct supervise *s, const sigset_t *held, const sigset_t *old,
		   struct supervise_end *end);
/* Between attempts (--retries): wait SECONDS, holding the signals as
 * while a command runs.  Returns 1 early when dispatch is told to stop
 * (HUP, INT, QUIT, TERM), when the run lock S->keep_fd is lost (then
 * *LOST, after one line), or when a cancel came (*CANCELLED); else 0. */
int supervise_pause(const struct supervise *s, const sigset_t *held, double seconds,
		    int *lost, int *cancelled);
/* Fill OUT (its signal name in NAME) and return dispatch's exit status. */
int supervise_outcome(const struct supervise_end *end, struct run_result *out,
		      char name[SIGNAME_MAX]);

#endif
