/* supervise: run the command of a dispatch (see supervise.h). */
#include "run/supervise.h"
#include "util/msg.h"
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
	if ((s->in_fd <= 0 || dup2(s->in_fd, 0) == 0) &&
	    (s->out_fd < 0 || dup2(s->out_fd, 1) == 1) &&
	    (s->err_fd < 0 || dup2(s->err_fd, 2) == 2) &&
	    (s->timeout <= 0 || setpgid(0, 0) == 0) &&
	    (s->keep_fd < 0 || fcntl(s->keep_fd, F_SETFD, 0) == 0) &&
	    sigprocmask(SIG_SETMASK, old, NULL) == 0)
		execvp(s->command[0], s->command);
	int err = errno;
	(void)write_full(report, &err, sizeof err);
	_exit(err == ENOENT ? 127 : 126);
}

/* SIG to the command's process group when it has one (and to the command
 * if it left it), else to the command.  ESRCH and EPERM need nothing. */
static void signal_run(pid_t pid, int own_group, int sig)
{
	if (pid <= 0)
		return;   /* (never kill(-1)) */
	if (!own_group || getpgid(pid) != pid)
		(void)kill(pid, sig);
	if (own_group)
		(void)kill(-pid, sig);
}

/* Pass a held signal on (supervise.h).  A process's has SI_USER, SI_QUEUE
 * or on Linux any code <= 0 (tgkill). */
static void forward(pid_t pid, int own_group, const siginfo_t *si)
{
	int sent = si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code < 0;
	if (!sent && getpgid(pid) == getpgrp())
		return;
	signal_run(pid, own_group, si->si_signo);
}

/* The held signals that came before the fork (one of each kind) into
 * EARLY, to be passed on once the command runs. */
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

/* Do we still hold the run lock FD (supervise.h)?  EBADFD: a GlusterFS
 * client (strict-locks) cut off; ESHUTDOWN: an evicted CephFS client. */
enum lock_check { LOCK_STILL_HELD, LOCK_LOST, LOCK_UNKNOWN };

static enum lock_check check_run_lock(int fd)
{
	int rc;
	do
		rc = flock(fd, LOCK_EX | LOCK_NB);
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return LOCK_STILL_HELD;
	return errno == EWOULDBLOCK || errno == EBADFD || errno == ESHUTDOWN ? LOCK_LOST
									     : LOCK_UNKNOWN;
}

void supervise_stop(struct supervise_end *end, int sig, double kill_after)
{
	/* (a reaped command's pid may be another process's by now) */
	if (end->ended || !end->started)
		return;
	signal_run(end->pid, end->own_group, sig);
	if (sig != SIGKILL && sig != SIGCONT)
		signal_run(end->pid, end->own_group, SIGCONT);
	end->kill_at = earliest(end->kill_at,
				kill_after > 0 && sig != SIGKILL ? now_mono() + kill_after : -1);
}

/* Has the command ended?  1, reaped, else 0. */
static int supervise_reap(struct supervise_end *end)
{
	while (!end->ended) {
		pid_t done = waitpid(end->pid, &end->wait_status, WNOHANG);
		if (done == 0)
			return 0;
		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			end->wait_errno = errno;
		end->ended = 1;
	}
	return 1;
}

int supervise_freeze(struct supervise_end *end)
{
	static const struct timespec tick = { 0, 10000000 };
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (supervise_reap(end))
		return 1;
	if (kill(end->pid, SIGSTOP) < 0)
		return 0;   /* (not ours to signal: the cancel's signal tries) */
	for (int i = 0; i < 20; i++) {
		siginfo_t si = { .si_pid = 0 };
		/* (WNOWAIT: an end is left for supervise_reap()) */
		(void)waitid(P_PID, (id_t)end->pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT);
		if (si.si_pid == end->pid)
			return si.si_code == CLD_STOPPED ? 0 : supervise_reap(end);
		(void)sigtimedwait(&chld, NULL, &tick);
	}
	return 0;   /* not stopped within 0.2 s (asleep in the kernel) */
}

enum supervise_event supervise_step(const struct supervise *s, const sigset_t *held,
				    struct supervise_end *end)
{
	char name[SIGNAME_MAX];
	int pausing = end->pid < 0;   /* supervise_pause() */
	for (;;) {
		if (!pausing && supervise_reap(end))
			return SV_ENDED;
		double now = now_mono();
		if (end->limit_at >= 0 && now >= end->limit_at) {
			if (pausing)
				return SV_ENDED;
			end->limit_at = -1;
			if (!end->lost_lock) {
				end->timed_out = 1;
				supervise_stop(end, s->signal, s->kill_after);
			}
			continue;
		}
		if (end->kill_at >= 0 && now >= end->kill_at) {
			signal_run(end->pid, end->own_group, SIGKILL);
			end->killed = 1;
			end->kill_at = -1;
			continue;
		}
		if (end->check_at >= 0 && now >= end->check_at) {
			/* One that proved nothing (ENOTCONN: a client giving
			 * its server up) again soon: the next one can tell. */
			enum lock_check verdict = s->check_lock && s->keep_fd >= 0 ?
						  check_run_lock(s->keep_fd) : LOCK_STILL_HELD;
			end->check_at = now_mono() + (verdict == LOCK_UNKNOWN ? 0.1 : 1);
			if (verdict != LOCK_LOST && !end->lost_lock)
				return SV_TICK;
			if (verdict == LOCK_LOST && pausing) {
				warn(s->job, "run %s lost its run lock while waiting to try again", s->run);
				return SV_LOST;
			}
			if (verdict == LOCK_LOST) {
				end->check_at = -1;
				end->lost_lock = 1;
				warn(s->job, "run %s lost its run lock; stopping it with %s", s->run,
				     signal_name(s->signal, name));
				double kill_after = s->kill_after > 0 ? s->kill_after : 10;
				if (!end->timed_out)
					supervise_stop(end, s->signal, kill_after);
				else
					end->kill_at = earliest(end->kill_at, now + kill_after);
			}
			continue;
		}
		double next = earliest(earliest(end->limit_at, end->kill_at), end->check_at);
		siginfo_t si;
		int sig;
		if (next >= 0) {
			/* (at most about 31 years; the loop waits again) */
			double left = next - now < 1e9 ? next - now : 1e9;
			struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
			sig = sigtimedwait(held, &si, &ts);
		} else {
			sig = sigwaitinfo(held, &si);
		}
		/* EAGAIN: a deadline; EINTR: look again.  None to a failed exec's child. */
		if (sig == SIGURG && end->started && !end->lost_lock)
			return SV_WAKE;
		if (sig > 0 && pausing && is_stop(sig))
			return SV_STOP;
		if (sig > 0 && sig != SIGCHLD && sig != SIGURG && end->started && !pausing)
			forward(end->pid, end->own_group, &si);
		if (sig > 0 && is_stop(sig))
			end->stopped = 1;
	}
}

void supervise_start(const struct supervise *s, const sigset_t *held, const sigset_t *old,
		     struct supervise_end *end)
{
	siginfo_t early[sizeof forwarded / sizeof forwarded[0]];
	size_t nearly = 0;
	double start = 0;
	pid_t pid = -1;
	int report[2];

	/* (ended until a command runs) */
	*end = (struct supervise_end){ .pid = -1, .kill_at = -1, .limit_at = -1, .check_at = -1,
				       .ended = 1 };
	if (pipe(report) < 0) {
		end->start_errno = errno;
		return;
	}
	if (fcntl(report[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(report[1], F_SETFD, FD_CLOEXEC) == 0) {
		nearly = take_early(held, early, sizeof early / sizeof early[0]);
		start = now_mono();
		pid = fork();
	}
	if (pid < 0) {
		end->start_errno = errno;
		close_fd(report[0]);
		close_fd(report[1]);
		return;
	}
	if (pid == 0)
		become_command(s, old, report[1]);
	end->pid = pid;
	end->ended = 0;
	/* Also here, so no signal reaches the group before it exists (EACCES:
	 * the child has exec'd, after its own setpgid). */
	if (s->timeout > 0)
		(void)setpgid(pid, pid);
	close_fd(report[1]);
	int err = 0;
	ssize_t n = read_full(report[0], &err, sizeof err);
	close_fd(report[0]);
	end->started = n != (ssize_t)sizeof err;
	if (!end->started)
		end->exec_errno = err;
	end->own_group = end->started && s->timeout > 0;
	for (size_t i = 0; i < nearly; i++) {
		if (end->started)
			signal_run(pid, s->timeout > 0, early[i].si_signo);
		end->stopped |= is_stop(early[i].si_signo);
	}
	end->limit_at = end->own_group ? start + s->timeout : -1;
	end->check_at = end->started ? now_mono() + 1 : -1;
}

int supervise_outcome(const struct supervise_end *end, struct run_result *out,
		      char name[SIGNAME_MAX])
{
	*out = (struct run_result){ .exit_status = -1, .timed_out = end->timed_out };
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

enum supervise_event supervise_pause(const struct supervise *s, const sigset_t *held,
				     double until)
{
	struct supervise_end pause = { .pid = -1, .started = 1, .limit_at = until,
				       .kill_at = -1, .check_at = now_mono() + 1 };
	return supervise_step(s, held, &pause);
}
