/* cli: the options every command shares and the value helpers of the
 * others (see cli.h).  Past 450 lines: the helpers and the usage errors
 * that name a fix all read the one option table kept here. */
#include "cmd/cli.h"
#include "record/status.h"
#include "run/logrelay.h"
#include "util/signame.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *usage_text = "", *help_text = "";
static const struct option *long_options;
static char **args;
static struct common *common;

/* As pid 1 the kernel gives TERM, INT and HUP no default action; pid 1
 * cannot die of a signal it sends itself, so exit as if it had. */
static void end_by_signal(int sig)
{
	_exit(128 + sig);
}

/* A closed 0, 1 or 2 would be the number of the next file we open: a lock
 * or a record would become our stderr, or the command's. */
static void open_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (null != fd)
			_exit(EXIT_IO);   /* no /dev/null, and no stderr to say so */
	}
}

void cli_init(const char *name, char **argv, const char *usage, const char *help,
	      const struct option *longopts, struct common *c)
{
	static const int ending[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa, old;

	prog_name = name;
	usage_text = usage;
	help_text = help;
	long_options = longopts;
	args = argv;
	common = c;
	c->dir = NULL;
	c->lock_wait = 10;
	open_standard_fds();
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old);
	c->sigpipe_ignored = old.sa_handler == SIG_IGN;
	if (getpid() == 1) {
		/* Only where the default was in force: an ignored one stays
		 * ignored, for us and for the command dispatch runs. */
		for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++) {
			sa.sa_handler = end_by_signal;
			if (sigaction(ending[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
				sigaction(ending[i], &sa, NULL);
		}
	}
}

void usage_error(const char *fmt, ...)
{
	struct buf text = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&text, fmt, ap);
	va_end(ap);
	/* (a question needs no full stop) */
	buf_addf(&text, "%s Try '%s --help'.", text.len && text.data[text.len - 1] == '?' ? "" : ".",
		 prog_name);
	exit(fail(EXIT_USAGE, NULL, "%s", text.data));
}

void bad_value(const char *what, const char *arg, const char *hint)
{
	usage_error("bad %s '%s'%s%s%s", what, arg, hint ? " (" : "", hint ? hint : "",
		    hint ? ")" : "");
}

/* What WORD ("-lq", "-w5") is as a bundle of SHORTOPTS' letters: 0 none,
 * 1 flags only, 2 flags and then one that takes the rest as its value. */
static int short_bundle(const char *word, const char *shortopts)
{
	for (const char *c = word + 1; *c; c++) {
		const char *o = *c == ':' || *c == '+' ? NULL : strchr(shortopts, *c);
		if (!o)
			return 0;
		if (o[1] == ':')
			return 2;
	}
	return 1;
}

/* "-history" spells --history, which getopt would read as -h -i -s ...;
 * so does "-hist" (an abbreviation, as for "--hist"), unless it is a
 * bundle of short options as it stands: flags ("-al"), or, under three
 * letters, one with its value ("-ou" is -o u, but "-out" is --output). */
static void refuse_single_dash_long(const char *word, const char *shortopts)
{
	if (word[0] != '-' || word[1] == '-' || !word[1] || !word[2])
		return;
	size_t len = strcspn(word + 1, "=");
	const struct option *prefix_of = NULL;
	int prefixes = 0;
	for (const struct option *o = long_options; o->name; o++) {
		if (strncmp(o->name, word + 1, len) != 0)
			continue;
		if (strlen(o->name) == len)
			usage_error("unknown option '%s': did you mean --%s?", word, o->name);
		prefix_of = o;
		prefixes++;
	}
	int bundle = short_bundle(word, shortopts);
	if (prefixes == 1 && (bundle == 0 || (bundle == 2 && len >= 3)))
		usage_error("unknown option '%s': did you mean --%s?", word, prefix_of->name);
}

/* The word where the last cli_next_option() call began, whether getopt
 * stopped inside it, in a bundle of short options ("-lq"), and whether
 * the options ended with "--". */
static int option_word, in_bundle, dashdash;

int cli_after_dashdash(void)
{
	return dashdash;
}

/* The long option given a value it does not take ("--json=1"), which
 * getopt_long reports as '?' with optopt OPT; else NULL.  A letter inside
 * a bundle ("-Fq") leaves optind where it was: only a whole word is one. */
static const char *valued_flag(int opt)
{
	if (!opt || optind != option_word + 1)
		return NULL;
	const char *word = args[option_word], *eq = strchr(word, '=');
	if (!eq || strncmp(word, "--", 2) != 0)
		return NULL;
	size_t len = (size_t)(eq - word - 2);
	for (const struct option *o = long_options; o && o->name; o++)
		if (o->has_arg == no_argument && o->val == opt && strncmp(o->name, word + 2, len) == 0)
			return o->name;
	return NULL;
}

/* The edit distance of A (LEN bytes) and B, both at most 64 bytes:
 * insertions, deletions, substitutions and swaps of neighbours ("timout",
 * "tiemout" -> "timeout").  Row I of the table is rows[I % 3]. */
static size_t edit_distance(const char *a, size_t len, const char *b)
{
	size_t blen = strlen(b), rows[3][65];
	for (size_t j = 0; j <= blen; j++)
		rows[0][j] = j;
	for (size_t i = 1; i <= len; i++) {
		size_t *cur = rows[i % 3], *back = rows[(i - 1) % 3], *two_back = rows[(i + 1) % 3];
		cur[0] = i;
		for (size_t j = 1; j <= blen; j++) {
			size_t d = back[j - 1] + (a[i - 1] != b[j - 1]);
			if (back[j] + 1 < d)
				d = back[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    two_back[j - 2] + 1 < d)
				d = two_back[j - 2] + 1;
			cur[j] = d;
		}
	}
	return rows[len % 3][blen];
}

/* An unknown long option WORD ("--timout=5"): "did you mean --timeout?"
 * for the nearest known one, a slip of a letter or two away. */
static void suggest_long_option(const char *word)
{
	if (strncmp(word, "--", 2) != 0)
		return;
	size_t len = strcspn(word + 2, "="), best = len < 6 ? 2 : 3;
	/* (no option is longer; a huge word costs no quadratic time) */
	if (!len || len > 64)
		return;
	const struct option *nearest = NULL;
	for (const struct option *o = long_options; o && o->name; o++) {
		size_t d = edit_distance(word + 2, len, o->name);
		if (d < best) {
			best = d;
			nearest = o;
		}
	}
	if (nearest)
		usage_error("unknown option '%.*s': did you mean --%s?", (int)len + 2, word,
			    nearest->name);
}

/* An option every command takes, or getopt's error (cli_next_option()). */
static void common_option(int opt, const char *arg)
{
	const char *flag;
	switch (opt) {
	case 'd':
		if (!*arg)
			usage_error("empty registry directory");
		common->dir = arg;
		return;
	case 'w': common->lock_wait = duration_or_err(arg, "lock wait"); return;
	case 'q': quiet = 1; return;
	case 'h':
		out_adds("usage: ");
		out_adds(usage_text);
		out_adds("\n");
		out_adds(help_text);
		exit(out_flush() ? EXIT_IO : 0);
	case 'V':
		out_adds(prog_name);
		out_adds(" " JOBREG_VERSION "\n");
		exit(out_flush() ? EXIT_IO : 0);
	case ':':
		usage_error("option '%s' needs an argument", args[optind - 1]);
	case '?':
	default:
		if ((flag = valued_flag(optopt)) != NULL)
			usage_error("option '--%s' takes no value", flag);
		if (optopt)
			usage_error("unknown option '-%c'", optopt);
		suggest_long_option(args[optind - 1]);
		usage_error("unknown option '%s'", args[optind - 1]);
	}
}

int cli_next_option(int argc, char **argv, const char *shortopts)
{
	for (;;) {
		opterr = 0;
		if (!in_bundle && optind < argc)
			refuse_single_dash_long(argv[optind], shortopts);
		option_word = optind;
		int opt = getopt_long(argc, argv, shortopts, long_options, NULL);
		in_bundle = opt != -1 && optind == option_word;
		dashdash = opt == -1 && optind == option_word + 1 &&
			   strcmp(argv[option_word], "--") == 0;
		if (opt == -1 || !strchr("dwqhV:?", opt))
			return opt;
		common_option(opt, optarg);
	}
}

void misplaced_option(const char *word)
{
	usage_error("misplaced option '%s': options come before the job %s", word,
		    strcmp(prog_name, "jobreg-dispatch") == 0 ? "id" : "ids");
}

void check_job_ids(char **ids, int count)
{
	for (int i = 0; i < count; i++) {
		if (valid_job_id(ids[i]))
			continue;
		/* No job id begins with '-': an option after the operands
		 * (after "--", a bad job id). */
		if (ids[i][0] == '-' && ids[i][1] && !dashdash)
			misplaced_option(ids[i]);
		/* Unprintable bytes escaped: the message stays one line. */
		struct buf shown = {0};
		for (const unsigned char *p = (const unsigned char *)ids[i]; *p; p++) {
			if (*p < 0x20 || *p >= 0x7f)
				buf_addf(&shown, "\\x%02x", *p);
			else
				buf_addc(&shown, (char)*p);
		}
		/* Name the id whole, unless it is absurdly long. */
		if (strlen(ids[i]) > JOB_ID_MAX)
			usage_error("bad job id '%.1024s%s': longer than %d bytes", shown.data,
				    shown.len > 1024 ? "..." : "", JOB_ID_MAX);
		usage_error("bad job id '%s': use 1-%d of [A-Za-z0-9._@+-], not starting with '.' or '-'",
			    shown.len ? shown.data : "", JOB_ID_MAX);
	}
}

/* A time unit written as a word of its own, any case: the unit letter
 * it means, and how many of that a unit is (weeks are said in days). */
static const struct unit_word {
	const char *word;
	char letter;
	int times;
} unit_words[] = {
	{ "s", 's', 1 }, { "sec", 's', 1 }, { "secs", 's', 1 }, { "second", 's', 1 },
	{ "seconds", 's', 1 }, { "m", 'm', 1 }, { "min", 'm', 1 }, { "mins", 'm', 1 },
	{ "minute", 'm', 1 }, { "minutes", 'm', 1 }, { "h", 'h', 1 }, { "hr", 'h', 1 },
	{ "hour", 'h', 1 }, { "hours", 'h', 1 }, { "d", 'd', 1 }, { "day", 'd', 1 },
	{ "days", 'd', 1 }, { "w", 'd', 7 }, { "week", 'd', 7 }, { "weeks", 'd', 7 },
};

/* ARG, the value of the option getopt just returned, ends in a digit and
 * the next word is a unit ("--for 2 hours"): the user meant "--for 2h",
 * and "hours" would be taken for a job id. */
static void refuse_unit_word(const char *arg)
{
	size_t len = strlen(arg);
	if (!args || !len || arg[len - 1] < '0' || arg[len - 1] > '9' || !args[optind])
		return;
	const char *next = args[optind], *word = args[optind - 1];
	for (size_t i = 0; i < sizeof unit_words / sizeof unit_words[0]; i++) {
		const struct unit_word *u = &unit_words[i];
		if (strcasecmp(next, u->word) != 0)
			continue;
		/* The option as given: its own word before ARG ("--for 2"),
		 * or the part of one word before it ("--for=2", "-w2"). */
		struct buf opt = {0}, number = {0};
		if (arg == word)
			buf_addf(&opt, "%s ", args[optind - 2]);
		else
			buf_add(&opt, word, (size_t)(arg - word));
		if (u->times == 1)
			buf_adds(&number, arg);
		else
			buf_addf(&number, "%.15g", strtod(arg, NULL) * u->times);
		usage_error("'%s%s %s': the unit goes with the number: did you mean %s%s%c?",
			    opt.data, arg, next, opt.data, number.data, u->letter);
	}
}

/* The duration ARG (see cli.h) in seconds, else a usage error with HINT. */
static double duration_value(const char *arg, const char *what, const char *hint)
{
	double value = 0, scale = 1;
	int digits = 0;
	const char *p = arg;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		value = value * 10 + (*p - '0');
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			scale /= 10;
			value += (*p - '0') * scale;
		}
	}
	if (!digits)
		bad_value(what, arg, hint);
	switch (*p) {
	case '\0': break;
	case 's': p++; break;
	case 'm': value *= 60; p++; break;
	case 'h': value *= 3600; p++; break;
	case 'd': value *= 86400; p++; break;
	default: bad_value(what, arg, hint);
	}
	/* A century is more than any wait or age we can mean; under a
	 * nanosecond, a record would hold 0, which means something else
	 * (--late-after 0 is refused, --timeout 0 is no limit). */
	if (*p || value > 3.2e9 || (value > 0 && value < 1e-9))
		bad_value(what, arg, hint);
	refuse_unit_word(arg);
	return value;
}

double duration_or_err(const char *arg, const char *what)
{
	return duration_value(arg, what, "e.g. 30s, 15m, 12h, 7d");
}

double limit_or_err(const char *arg, const char *what)
{
	if (strcmp(arg, "inf") == 0 || strcmp(arg, "infinity") == 0)
		return -1;
	return duration_value(arg, what, "a duration, or inf");
}

long number_or_err(const char *arg, long min, long max, const char *what)
{
	unsigned long long v = 0;
	if (parse_digits(arg, strlen(arg), (unsigned long long)max, &v) < 0 || (long)v < min) {
		char range[48];
		snprintf(range, sizeof range, "%ld-%ld", min, max);
		bad_value(what, arg, range);
	}
	return (long)v;
}

unsigned status_list_or_err(const char *arg)
{
	unsigned mask;
	if (parse_status_list(arg, &mask) < 0)
		bad_value("status list", arg, status_list_words);
	return mask;
}

int cancel_signal_or_err(const char *arg)
{
	int sig = signal_or_err(arg);
	/* SIGCONT follows a cancel's signal, so that a stopped run acts on
	 * it: one that stops or continues would stop nothing. */
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT)
		usage_error("--signal %s would not stop a cancelled run", arg);
	return sig;
}

int signal_or_err(const char *arg)
{
	int sig = signal_number(arg);
	if (sig <= 0)
		bad_value("signal", arg, NULL);
	return sig;
}

unsigned long long size_or_err(const char *arg)
{
	unsigned long long size;
	if (logrelay_parse_size(arg, &size) < 0)
		bad_value("log size", arg, "at least 1k; units k, M, G");
	return size;
}

double late_after_or_err(const char *arg)
{
	double seconds = limit_or_err(arg, "late-after duration");
	if (seconds == 0)
		bad_value("late-after duration", arg, "a duration, or inf");
	return seconds;
}

double overdue_after_or_err(const char *arg)
{
	double seconds = limit_or_err(arg, "overdue-after duration");
	if (seconds == 0)
		bad_value("overdue-after duration", arg, "a duration, or inf");
	return seconds;
}

void exit_list_or_err(const char *arg, const char *what, struct exit_set *set)
{
	if (exit_set_parse(arg, set) < 0)
		bad_value(what, arg, "e.g. 3,24,64-78; statuses 0-255");
}

unsigned long long notify_after_or_err(const char *arg)
{
	return (unsigned long long)number_or_err(arg, 1, INT_MAX, "notify-after");
}

const char *note_or_err(const char *arg)
{
	const char *problem = note_problem(arg);
	if (problem)
		usage_error("bad note: %s", problem);
	return arg;
}

char *registry_path(const char *opt_dir)
{
	const char *dir = getenv("JOBREG_DIR"), *xdg = getenv("XDG_STATE_HOME"),
		   *home = getenv("HOME");
	struct buf path = {0};
	if (opt_dir)
		return xstrdup(opt_dir);
	if (dir && *dir)
		return xstrdup(dir);
	/* The XDG spec says relative paths there are to be ignored. */
	if (xdg && xdg[0] == '/')
		buf_addf(&path, "%s/jobreg", xdg);
	else if (home && *home)
		buf_addf(&path, "%s/.local/state/jobreg", home);
	else
		exit(fail(EXIT_USAGE, NULL,
			  "no registry: give -d DIR or set JOBREG_DIR, XDG_STATE_HOME or HOME"));
	return path.data;
}
