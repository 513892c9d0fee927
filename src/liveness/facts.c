#include "liveness/facts.h"
#include "liveness/proc.h"
#include "util/sys.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
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
	if (boot_id(&me->boot_id) < 0 || ns_inode("pid", &me->pid_ns) < 0 ||
	    ns_inode("time", &me->time_ns) < 0)
		return -1;
	return 0;
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
	if (live > 0) {
		p->pid = PID_STARTED;
		return 0;
	}
	if (live == 0) {
		p->pid = PID_ZOMBIE;
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
