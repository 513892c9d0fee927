#include "liveness/facts.h"
#include "liveness/proc.h"
#include "util/passwd.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int probe_reader(struct reader *me)
{
	static char host[HOST_NAME_MAX + 1];
	static int done;
	if (!done) {
		/* Truncation leaves no NUL by POSIX: keep one. */
		if (gethostname(host, sizeof host - 1) < 0)
			host[0] = '\0';
		done = 1;
	}
	me->host = host[0] ? host : NULL;
	me->now = now_real();
	return proc_identity(&me->boot_id, &me->pid_ns, &me->time_ns);
}

/* kill(pid, 0) says the pid is gone. */
static int gone(long pid)
{
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int probe_pid(long pid, struct probes *p)
{
	if (pid <= 0 || pid > INT_MAX || gone(pid)) {
		p->pid = PID_GONE;
		return 0;
	}
	int live = pid_start_time(pid, &p->pid_start);
	if (live >= 0) {
		p->pid = live ? PID_STARTED : PID_ZOMBIE;
		return 0;
	}
	int err = errno;
	if (gone(pid)) {
		p->pid = PID_GONE;   /* it ended between the two looks */
		return 0;
	}
	/* kill(2) found it.  Hidden from us: hidepid=2 makes its entry
	 * missing, hidepid=1 or a ptrace check unreadable. */
	if (err == ENOENT || err == ESRCH || err == EACCES || err == EPERM) {
		p->pid = PID_HIDDEN;
		return 0;
	}
	errno = err;
	return -1;
}

void user_at_host(struct buf *out)
{
	struct reader me = {0};
	(void)probe_reader(&me);   /* the host is read before /proc */
	if (!passwd_name(geteuid(), out))
		buf_addf(out, "%lu", (unsigned long)geteuid());
	buf_addf(out, "@%s", me.host ? me.host : "localhost");
}

int signal_owner(const struct record *r, int sig)
{
	struct reader me;
	struct probes p = {0};
	const char *host = record_get(r, "host"), *boot = record_get(r, "boot_id");
	const char *pid = record_get(r, "pid"), *start = record_get(r, "pid_start");
	const char *ns = record_get(r, "pid_ns");
	if (!host || !boot || !pid || !start || !ns || probe_reader(&me) < 0 || !me.host ||
	    strcmp(host, me.host) != 0 || !me.boot_id || strcmp(boot, me.boot_id) != 0 ||
	    strtoull(ns, NULL, 10) != me.pid_ns)
		return 0;
	long n = strtol(pid, NULL, 10);
	/* A pidfd taken before the start time is checked names that very
	 * process: if the pid is reused after the check, the signal finds
	 * the old one gone (ESRCH) rather than the new one. */
	int pidfd = pid_fd(n);
	int sent = 0;
	if (probe_pid(n, &p) == 0 && p.pid == PID_STARTED &&
	    p.pid_start == strtoull(start, NULL, 10)) {
#ifdef SYS_pidfd_send_signal
		if (pidfd >= 0)
			sent = syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0;
		else
#endif
			sent = kill((pid_t)n, sig) == 0;   /* (no pidfds: a kernel before 5.3) */
	}
	if (pidfd >= 0)
		close_fd(pidfd);
	return sent;
}
