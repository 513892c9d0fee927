/* cli: what the commands share and the library does not need: how a
 * command starts, the common options, usage errors, the value helpers of
 * option arguments and the registry path.
 *
 * A value helper works the util-linux way (strtoul_or_err()): it returns
 * ARG's value, or exits 64 with one line naming the problem, so that a
 * command's switch is one line an option. */
#ifndef JOBREG_CLI_H
#define JOBREG_CLI_H

#include <getopt.h>

#include "util/msg.h"
#include "record/outcome.h"
#include "registry/registry.h"

/* The options every command takes, and how it was started. */
struct common {
	const char *dir;       /* -d DIR, or NULL */
	double lock_wait;      /* -w SECONDS, default 10 */
	int sigpipe_ignored;   /* SIGPIPE was ignored when we started */
};

#define COMMON_SHORTOPTS "d:w:qhV"
#define COMMON_LONGOPTS                              \
	{ "dir", required_argument, 0, 'd' },        \
	{ "lock-wait", required_argument, 0, 'w' },  \
	{ "quiet", no_argument, 0, 'q' },            \
	{ "help", no_argument, 0, 'h' },             \
	{ "version", no_argument, 0, 'V' }

/* Start command NAME robustly (SPEC §5): closed descriptors 0-2 are
 * opened on /dev/null, so no lock or record can become one of them;
 * SIGPIPE is ignored (whether it was before is kept in C, for the command
 * dispatch runs); as pid 1, TERM, INT and HUP exit 128+N as elsewhere.
 * USAGE, HELP and LONGOPTS are the command's, for --help and messages. */
void cli_init(const char *name, char **argv, const char *usage, const char *help,
	      const struct option *longopts, struct common *c);

/* getopt_long(3) with SHORTOPTS and cli_init's LONGOPTS: the command's
 * next own option, or -1.  -d, -w and -q go into cli_init's C; -h and -V
 * exit 0; an error exits 64, naming the nearest long option for a slip
 * ("--timout") or for one written with one dash ("-history"). */
int cli_next_option(int argc, char **argv, const char *shortopts);
/* Did the options end with "--"?  Then an operand may begin with '-'. */
int cli_after_dashdash(void);

/* A usage error: "PROG: text. Try 'PROG --help'." and exit 64. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "bad WHAT 'ARG'" and, if not NULL, " (HINT)", as a usage error. */
_Noreturn void bad_value(const char *what, const char *arg, const char *hint);
/* "misplaced option 'WORD': options come before the job ids"; exit 64. */
_Noreturn void misplaced_option(const char *word);
/* Check every id; on the first bad one print its error and exit 64.  An
 * operand beginning with '-' is reported as a misplaced option, unless
 * it came after "--". */
void check_job_ids(char **ids, int count);

/* The value helpers, for the option getopt just returned: ARG's value, or
 * a usage error "bad WHAT 'ARG' (...)".  A duration is a non-negative
 * decimal number with an optional unit s, m, h or d; a limit is a duration
 * or "inf" (-1: no limit).  A unit as a word of its own ("--for 2 hours")
 * is a usage error naming the fix. */
double duration_or_err(const char *arg, const char *what);
double limit_or_err(const char *arg, const char *what);
/* A decimal integer in MIN..MAX. */
long number_or_err(const char *arg, long min, long max, const char *what);
/* A status list (S[,S]) as its mask. */
unsigned status_list_or_err(const char *arg);
/* A signal's name or number. */
int signal_or_err(const char *arg);
/* A signal for a cancel: not one that stops or continues. */
int cancel_signal_or_err(const char *arg);
/* --log-size: bytes, at least 1k, with a unit k, M or G in either case. */
unsigned long long size_or_err(const char *arg);
/* --late-after: a limit (inf: -1, remove it) other than 0, by which
 * every job would be late. */
double late_after_or_err(const char *arg);
/* --overdue-after: the same rule (SPEC §2 Overdue runs; 0 would make
 * every run overdue at its first second). */
double overdue_after_or_err(const char *arg);
/* An exit-status list ("3,24,64-78": numbers 0-255 and ranges) into *SET. */
void exit_list_or_err(const char *arg, const char *what, struct exit_set *set);
/* --notify-after N (SPEC §5c): 1 to INT_MAX, the same for every command. */
unsigned long long notify_after_or_err(const char *arg);
/* -m NOTE: "bad note: invalid UTF-8" names the rule of SPEC §3 it breaks. */
const char *note_or_err(const char *arg);

/* The registry path: -d, else $JOBREG_DIR, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg, malloc'd; with none of
 * them it says so and exits 64 itself: never NULL. */
char *registry_path(const char *opt_dir);

#endif
