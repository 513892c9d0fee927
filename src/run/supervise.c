/* supervise: run the command of a dispatch (see supervise.h). */
#include "run/supervise.h"
#include "util/msg.h"
#include "record/record.h"
#include "record/transition.h"
#include "util/signame.h"
#include "util/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The signals passed on to the command (SPEC §5 step 5). */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

/* Those that tell dispatch to stop: no retry after them. */
static int is_stop(int sig)
{
	return sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGTERM;
}

static void on_child(int sig)
{
	(void)sig;   /* only so that SIGCHLD is queued for sigwaitinfo() */
}

void supervise_signals(sigset_t *held, sigset_t *old)
{
	struct sigaction sa;

	sigemptyset(held);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(held, forwarded[i]);
	sigaddset(held, SIGCHLD);
	sigaddset(held, SIGURG);
	sigprocmask(SIG_BLOCK, NULL, old);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

/* In the child: become the command, or report why not on REPORT. */
static _Noreturn void become_command(const struct supervise *s, const sigset_t *old, int report)
{
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, s->sigpipe_ignored ? SIG_IGN : SIG_DFL);
	if ((s->out_fd < 0 || dup2(s->out_fd, 1) == 1) &&
	    (s->err_fd < 0 || dup2(s->err_fd, 2) == 2) &&
	    (s->timeout <= 0 || setpgid(0, 0) == 0) &&
	    (s->keep_fd < 0 || fcntl(s->keep_fd, F_SETFD, 0) == 0) &&
	    sigprocmask(SIG_SETMASK, old, NULL) == 0)
		execvp(s->command[0], s->command);
	int err = errno;
	(void)write_full(report, &err, sizeof err);
	_exit(err == ENOENT ? 127 : 126);
}

/* Send SIG to the run: to the command's process group when it has one
 * (and to the command itself if it has left that group), else to the
 * command.  A run that has ended meanwhile (ESRCH) needs nothing, and
 * there is nothing to do about a member we may not signal (EPERM). */
static void signal_run(pid_t pid, int own_group, int sig)
{
	if (!own_group || getpgid(pid) != pid)
		(void)kill(pid, sig);
	if (own_group)
		(void)kill(-pid, sig);
}

/* Was SI sent by a process (kill, sigqueue, tgkill), rather than by the
 * kernel on a terminal's behalf?  Linux uses codes <= 0 for the former;
 * POSIX names SI_USER and SI_QUEUE. */
static int sent_by_process(const siginfo_t *si)
{
	return si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code < 0;
}

/* Pass a held signal on, unless the command received it already: the
 * kernel signals a whole process group (the terminal's Ctrl-C goes to the
 * foreground group), so a command still in our group got it too. */
static void forward(pid_t pid, int own_group, const siginfo_t *si)
{
	if (!sent_by_process(si) && getpgid(pid) == getpgrp())
		return;
	signal_run(pid, own_group, si->si_signo);
}

/* Take the held signals that came before the fork into EARLY (at most
 * MAX; as they do not queue, one of each kind): the command cannot have
 * received them, whoever sent them, so each is passed on once it runs. */
static size_t take_early(const sigset_t *held, siginfo_t *early, size_t max)
{
	static const struct timespec none = { 0, 0 };
	size_t n = 0;
	while (n < max) {
		siginfo_t si;
		int sig = sigtimedwait(held, &si, &none);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0)
			break;
		if (sig != SIGCHLD && sig != SIGURG)
			early[n++] = si;
	}
	return n;
}

static struct timespec timespec_of(double seconds)
{
	struct timespec ts;
	if (!(seconds < 1e9))
		seconds = 1e9;   /* about 31 years; the loop waits again */
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	return ts;
}

/* The verdict of one check of a held lock: flock(LOCK_EX|LOCK_NB) of our
 * own descriptor returned RC with ERR.  Lost only for EWOULDBLOCK (someone
 * else holds it now), EBADFD (the filesystem dropped it) and ESHUTDOWN (the
 * client was evicted); any other error proves nothing, and the next check
 * asks again. */
enum lock_check { LOCK_STILL_HELD, LOCK_LOST, LOCK_UNKNOWN };

static enum lock_check lock_check_verdict(int rc, int err)
{
	if (rc == 0)
		return LOCK_STILL_HELD;
	/* EWOULDBLOCK: someone else holds it; EBADFD: a GlusterFS client
	 * (strict-locks) that lost its connection refuses the descriptor;
	 * ESHUTDOWN: a CephFS client evicted, its locks given up. */
	return err == EWOULDBLOCK || err == EBADFD || err == ESHUTDOWN ? LOCK_LOST : LOCK_UNKNOWN;
}

/* Do we still hold the run lock?  One system call. */
static enum lock_check check_run_lock(int fd)
{
	int rc;
	do
		rc = flock(fd, LOCK_EX | LOCK_NB);
	while (rc < 0 && errno == EINTR);
	return lock_check_verdict(rc, errno);
}

/* Stop the run as timeout(1) does: SIG, then SIGCONT so that stopped
 * members act on it before the KILL, which comes at *kill_at (-1: never). */
static void stop_run(const struct supervise *s, pid_t pid, int own_group, double kill_after,
		     double *kill_at)
{
	signal_run(pid, own_group, s->signal);
	if (s->signal != SIGKILL && s->signal != SIGCONT)
		signal_run(pid, own_group, SIGCONT);
	*kill_at = kill_after > 0 && s->signal != SIGKILL ? now_mono() + kill_after : -1;
}

/* A cancel that came (S->cancel_asked): its signal sent as at a time
 * limit, KILL at *kill_at (the earlier, when one is due already). */
static void take_cancel(const struct supervise *s, pid_t pid, int own_group,
			struct supervise_end *end, double *kill_at)
{
	int sig;
	double kill_after, at;
	if (!s->cancel_asked || !s->cancel_asked(s->cancel_ctx, &sig, &kill_after))
		return;
	int no_kill = kill_after <= 0 && sig != SIGKILL;
	end->cancel_no_kill = end->cancelled ? end->cancel_no_kill && no_kill : no_kill;
	end->cancelled = 1;
	signal_run(pid, own_group, sig);
	if (sig != SIGKILL && sig != SIGCONT)
		signal_run(pid, own_group, SIGCONT);
	at = kill_after > 0 && sig != SIGKILL ? now_mono() + kill_after : -1;
	*kill_at = earliest(*kill_at, at);
}

/* Wait for the command PID to end, forwarding signals once it STARTED,
 * enforcing the limit from START on, and checking the run lock. */
static void wait_command(const struct supervise *s, pid_t pid, int started, double start,
			 const sigset_t *held, struct supervise_end *end)
{
	int own_group = started && s->timeout > 0;
	double limit_at = own_group ? start + s->timeout : -1;
	double kill_at = -1;
	int check_lock = s->check_lock && s->keep_fd >= 0;
	double check_at = started && (check_lock || s->cancel_asked) ? now_mono() + 1 : -1;
	char name[SIGNAME_MAX];

	end->kill_at = -1;
	for (;;) {
		pid_t done = waitpid(pid, &end->wait_status, WNOHANG);
		if (done == pid) {
			end->kill_at = kill_at;
			return;
		}
		if (done < 0 && errno != EINTR) {
			end->wait_errno = errno;
			return;
		}
		double now = now_mono();
		if (limit_at >= 0 && now >= limit_at) {
			limit_at = -1;
			if (!end->lost_lock) {
				end->timed_out = 1;
				stop_run(s, pid, own_group, s->kill_after, &kill_at);
			}
			continue;
		}
		if (kill_at >= 0 && now >= kill_at) {
			signal_run(pid, own_group, SIGKILL);
			end->killed = 1;
			kill_at = -1;
			continue;
		}
		if (check_at >= 0 && now >= check_at) {
			/* A check that proved nothing (ENOTCONN: a client
			 * giving its server up) is made again soon, since the
			 * next one is the one that can tell. */
			enum lock_check verdict = check_lock ? check_run_lock(s->keep_fd)
							     : LOCK_STILL_HELD;
			check_at = now_mono() + (verdict == LOCK_UNKNOWN ? 0.1 : 1);
			if (verdict != LOCK_LOST && !end->lost_lock)
				take_cancel(s, pid, own_group, end, &kill_at);
			if (verdict == LOCK_LOST) {
				check_at = -1;
				end->lost_lock = 1;
				warn(s->job, "run %s lost its run lock; stopping it with %s", s->run,
				     signal_name(s->signal, name));
				double kill_after = s->kill_after > 0 ? s->kill_after : 10;
				if (!end->timed_out)
					stop_run(s, pid, own_group, kill_after, &kill_at);
				else if (kill_at < 0)
					kill_at = now + kill_after;
			}
			continue;
		}
		double next = earliest(earliest(limit_at, kill_at), check_at);
		siginfo_t si;
		int sig;
		if (next >= 0) {
			struct timespec ts = timespec_of(next - now);
			sig = sigtimedwait(held, &si, &ts);
		} else {
			sig = sigwaitinfo(held, &si);
		}
		/* EAGAIN: a deadline has come; EINTR: look again.  Signals
		 * that came before the exec are passed on now that the command
		 * runs; none is sent to a failed exec's child. */
		if (sig == SIGURG && started && !end->lost_lock)
			take_cancel(s, pid, own_group, end, &kill_at);
		else if (sig > 0 && sig != SIGCHLD && started)
			forward(pid, own_group, &si);
		if (sig > 0 && is_stop(sig))
			end->stopped = 1;
	}
}

void supervise_run(const struct supervise *s, const sigset_t *held, const sigset_t *old,
		   struct supervise_end *end)
{
	int report[2];

	memset(end, 0, sizeof *end);
	if (pipe(report) < 0) {
		end->start_errno = errno;
		return;
	}
	if (fcntl(report[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(report[1], F_SETFD, FD_CLOEXEC) < 0) {
		end->start_errno = errno;
		close_fd(report[0]);
		close_fd(report[1]);
		return;
	}
	siginfo_t early[sizeof forwarded / sizeof forwarded[0]];
	size_t nearly = take_early(held, early, sizeof early / sizeof early[0]);
	double start = now_mono();
	pid_t pid = fork();
	if (pid < 0) {
		end->start_errno = errno;
		close_fd(report[0]);
		close_fd(report[1]);
		return;
	}
	if (pid == 0)
		become_command(s, old, report[1]);
	/* Also here, so that no signal can reach the group before it exists;
	 * EACCES means the child has exec'd, after its own setpgid. */
	if (s->timeout > 0)
		(void)setpgid(pid, pid);
	close_fd(report[1]);
	int err = 0;
	ssize_t n = read_full(report[0], &err, sizeof err);
	close_fd(report[0]);
	int started = n != (ssize_t)sizeof err;
	if (!started)
		end->exec_errno = err;
	for (size_t i = 0; i < nearly; i++) {
		if (started)
			signal_run(pid, s->timeout > 0, early[i].si_signo);
		end->stopped |= is_stop(early[i].si_signo);
	}
	wait_command(s, pid, started, start, held, end);
}

int supervise_outcome(const struct supervise_end *end, struct run_result *out,
		      char name[SIGNAME_MAX])
{
	out->exit_status = -1;
	out->signal_name = NULL;
	out->timed_out = end->timed_out;
	out->cancelled_by = NULL;
	if (end->start_errno)
		out->exit_status = 126;
	else if (end->exec_errno)
		out->exit_status = end->exec_errno == ENOENT ? 127 : 126;
	else if (end->wait_errno)
		return exit_for_errno(end->wait_errno);   /* the end is unknown */
	else if (WIFSIGNALED(end->wait_status))
		out->signal_name = signal_name(WTERMSIG(end->wait_status), name);
	else
		out->exit_status = WEXITSTATUS(end->wait_status);
	return run_result_status(out);
}

int supervise_pause(const struct supervise *s, const sigset_t *held, double seconds,
		    int *lost, int *cancelled)
{
	double until = now_mono() + seconds;
	int sig_unused;
	double kill_unused;

	*lost = *cancelled = 0;
	for (;;) {
		double now = now_mono();
		if (now >= until)
			return 0;
		/* The run lock is checked each second here too. */
		struct timespec ts = timespec_of(until - now < 1 ? until - now : 1);
		siginfo_t si;
		int sig = sigtimedwait(held, &si, &ts);
		if (sig > 0 && is_stop(sig))
			return 1;
		if (sig < 0 && errno == EAGAIN && s->check_lock && s->keep_fd >= 0 &&
		    check_run_lock(s->keep_fd) == LOCK_LOST) {
			warn(s->job, "run %s lost its run lock while waiting to try again",
			     s->run);
			*lost = 1;
			return 1;
		}
		/* A cancel now ends the retries (SPEC §5a). */
		if ((sig == SIGURG || (sig < 0 && errno == EAGAIN)) && s->cancel_asked &&
		    s->cancel_asked(s->cancel_ctx, &sig_unused, &kill_unused)) {
			*cancelled = 1;
			return 1;
		}
	}
}
