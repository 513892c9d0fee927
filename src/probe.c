#include "probe.h"
#include "proc.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

void probe_reader(struct reader *me)
{
	static char host[HOST_NAME_MAX + 1];
	static int done;
	if (!done) {
		done = 1;
		/* Truncation leaves no NUL by POSIX: keep one. */
		if (gethostname(host, sizeof host - 1) < 0)
			host[0] = '\0';
	}
	me->host = host[0] ? host : NULL;
	me->boot_id = boot_id();
	me->pid_ns = ns_inode("pid");
	me->time_ns = ns_inode("time");
	me->now = now_real();
}

/* kill(pid, 0) says the pid is gone. */
static int gone(long pid)
{
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

void probe_pid(long pid, struct probes *p)
{
	if (pid <= 0 || pid > INT_MAX || gone(pid)) {
		p->pid = PID_GONE;
		return;
	}
	int live = pid_start_time(pid, &p->pid_start);
	if (live > 0)
		p->pid = PID_STARTED;
	else if (live == 0)
		p->pid = PID_ZOMBIE;
	else if (gone(pid))
		p->pid = PID_GONE;   /* it ended between the two looks */
	else
		p->pid = PID_HIDDEN; /* kill(2) found it: /proc hides it */
}
