/* signame: signal names as kill -l shows them ("TERM", "RTMIN+3",
 * "RTMAX-2"), both ways. */
#ifndef JOBREG_SIGNAME_H
#define JOBREG_SIGNAME_H

#define SIGNAME_MAX 16

/* The name of SIG without "SIG" ("TERM"); OUT holds names made up at run
 * time (real-time signals, unknown numbers). */
const char *signal_name(int sig, char out[SIGNAME_MAX]);

/* "TERM", "SIGTERM", "term", "15", "RTMIN+3", "SIGRTMAX-1": the number;
 * -1 when it names no signal. */
int signal_number(const char *name);

#endif
