#include "util/signame.h"
#include "util/sys.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct { int sig; const char *name; } names[] = {
	{ SIGHUP, "HUP" }, { SIGINT, "INT" }, { SIGQUIT, "QUIT" }, { SIGILL, "ILL" },
	{ SIGTRAP, "TRAP" }, { SIGABRT, "ABRT" }, { SIGBUS, "BUS" }, { SIGFPE, "FPE" },
	{ SIGKILL, "KILL" }, { SIGUSR1, "USR1" }, { SIGSEGV, "SEGV" }, { SIGUSR2, "USR2" },
	{ SIGPIPE, "PIPE" }, { SIGALRM, "ALRM" }, { SIGTERM, "TERM" }, { SIGCHLD, "CHLD" },
	{ SIGCONT, "CONT" }, { SIGSTOP, "STOP" }, { SIGTSTP, "TSTP" }, { SIGTTIN, "TTIN" },
	{ SIGTTOU, "TTOU" }, { SIGURG, "URG" }, { SIGXCPU, "XCPU" }, { SIGXFSZ, "XFSZ" },
	{ SIGVTALRM, "VTALRM" }, { SIGPROF, "PROF" }, { SIGWINCH, "WINCH" }, { SIGIO, "IO" },
	{ SIGSYS, "SYS" },
#ifdef SIGSTKFLT
	{ SIGSTKFLT, "STKFLT" },
#endif
#ifdef SIGPWR
	{ SIGPWR, "PWR" },
#endif
};
#define NAMES (sizeof names / sizeof names[0])

const char *signal_name(int sig, char out[SIGNAME_MAX])
{
	for (size_t i = 0; i < NAMES; i++)
		if (names[i].sig == sig)
			return names[i].name;
	/* Real-time signals as kill -l names them: the lower half counts up
	 * from RTMIN, the upper half down from RTMAX. */
	if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
		int from_min = sig - SIGRTMIN, from_max = SIGRTMAX - sig;
		if (from_min == 0)
			snprintf(out, SIGNAME_MAX, "RTMIN");
		else if (from_max == 0)
			snprintf(out, SIGNAME_MAX, "RTMAX");
		else if (from_min <= from_max)
			snprintf(out, SIGNAME_MAX, "RTMIN+%d", from_min % 100);
		else
			snprintf(out, SIGNAME_MAX, "RTMAX-%d", from_max % 100);
		return out;
	}
	snprintf(out, SIGNAME_MAX, "%d", sig % 100000);
	return out;
}

/* A decimal number in 0..999 that is all of S; -1 otherwise. */
static int small_number(const char *s)
{
	unsigned long long v;
	return parse_digits(s, strlen(s), 999, &v) == 0 ? (int)v : -1;
}

int signal_number(const char *name)
{
	int n = small_number(name);
	if (n >= 0)
		return n >= 1 && n <= SIGRTMAX ? n : -1;
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < NAMES; i++)
		if (strcasecmp(names[i].name, name) == 0)
			return names[i].sig;
	if (strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) {
		int max = name[4] == 'X' || name[4] == 'x';
		int off = 0;
		const char *rest = name + 5;
		if (*rest && (*rest != (max ? '-' : '+') || (off = small_number(rest + 1)) < 0))
			return -1;
		int sig = max ? SIGRTMAX - off : SIGRTMIN + off;
		return sig >= SIGRTMIN && sig <= SIGRTMAX ? sig : -1;
	}
	return -1;
}
