/* cli: what the commands share and the library does not need — how a
 * command starts (cli_init), the common options, the parsing of user input
 * (ids, numbers, durations), usage errors, the registry path, and the
 * buffer of standard output. */
#ifndef JOBREG_CLI_H
#define JOBREG_CLI_H

#include <getopt.h>

#include "util/msg.h"
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

/* Start command NAME (SPEC §5, "robust to how it is started"): descriptors
 * 0-2 that are closed are opened on /dev/null, so no lock or record can
 * become one of them; SIGPIPE is ignored, so a closed stdout or stderr
 * only makes writes fail (whether it was ignored before is kept in C for
 * the command dispatch runs); and as pid 1 of a pid namespace, which gets
 * no default action for signals, TERM, INT and HUP end the command as
 * they would any other (exit 128+N).  USAGE and LONGOPTS are the
 * command's, for the messages below. */
void cli_init(const char *name, char **argv, const char *usage,
	      const struct option *longopts, struct common *c);

/* getopt_long(3) over ARGV with SHORTOPTS and cli_init's LONGOPTS,
 * opterr 0: the next option, or -1. */
int cli_next_option(int argc, char **argv, const char *shortopts);

/* Handle one cli_next_option() result that is common to all commands (or an
 * error).  Returns -1 when parsing goes on, else the status to exit with
 * (0 after --help/--version, 64 after a usage error). */
int cli_common_option(int opt, const char *arg, struct common *c, const char *help);

/* A usage error: "PROG: text; usage: USAGE", returns 64. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "bad WHAT 'ARG'" and, if not NULL, " (HINT)", as a usage error; when the
 * option word was a bundled short option whose rest reads as a long one
 * ("-wait 5" is -w with "ait"), it asks "did you mean --wait?". */
int bad_value(const char *what, const char *arg, const char *hint);
/* A value any string may be (-d DIR, -o FILE, -m NOTE) from a bundled
 * short option whose rest reads as a long one ("-dir x" is -d "ir"): a
 * usage error asking "did you mean --dir?"; else -1 (parsing goes on). */
int lookalike_value(const char *arg);

/* Check every id; on the first bad one print its error and return 64.
 * An operand beginning with '-' is reported as a misplaced option. */
int check_job_ids(char **ids, int count);
/* "misplaced option 'WORD': options come before the job ids"; returns 64. */
int misplaced_option(const char *word);

/* A non-negative decimal number with an optional unit s, m, h or d. */
int parse_duration(const char *s, double *seconds);
/* A duration, or "inf" for no limit (*seconds = -1). */
int parse_limit(const char *s, double *seconds);
/* A decimal integer in 0..MAX. */
int parse_uint(const char *s, long max, long *value);
/* The job settings set and dispatch both take: --late-after DURATION
 * (inf: -1, remove it; 0 is refused: every job would be late at once) and
 * --keep-runs N (0..KEEP_RUNS_MAX).  Return -1 (parsing goes on), or 64
 * after the message. */
int parse_late_after(const char *s, double *seconds);
int parse_keep_runs(const char *s, long *keep);

/* The registry path: -d, else $JOBREG_DIR, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg.  Returns a malloc'd path,
 * or NULL after printing why (exit 64). */
char *registry_path(const char *opt_dir);

/* Buffered standard output: out_flush() reports a failed write once. */
void out_add(const char *data, unsigned long len);
void out_adds(const char *s);
int out_flush(void);

#endif
