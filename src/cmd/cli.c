#include "cmd/cli.h"
#include "record/transition.h"
#include "util/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct buf out;
static const char *usage_text = "";
static const struct option *long_options;
static char **args;

/* As pid 1 the kernel gives TERM, INT and HUP no default action: end as
 * they would end any other process, as far as pid 1 can (it cannot die of
 * a signal it sends itself). */
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

static void flush_before_message(void)
{
	(void)out_flush();
}

void cli_init(const char *name, char **argv, const char *usage,
	      const struct option *longopts, struct common *c)
{
	static const int ending[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa, old;

	prog_name = name;
	usage_text = usage;
	long_options = longopts;
	args = argv;
	c->dir = NULL;
	c->lock_wait = 10;
	open_standard_fds();
	message_before(flush_before_message);
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

int usage_error(const char *fmt, ...)
{
	struct buf text = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&text, fmt, ap);
	va_end(ap);
	buf_adds(&text, "; usage: ");
	buf_adds(&text, usage_text);
	int code = fail(EXIT_USAGE, NULL, "%s", text.data);
	buf_free(&text);
	return code;
}

/* The long option that the word just parsed names when read as "-WORD":
 * "-wait" was -w with the value "ait", and "-long" -l then -o "ng", but
 * "--wait" and "--long" were meant. */
static const char *meant_long_option(const char *arg)
{
	const char *word = optind > 0 ? args[optind - 1] : NULL;
	size_t n = word ? strlen(word) : 0, k = strlen(arg);
	/* The value is the end of a word of bundled short options. */
	if (!word || word[0] != '-' || word[1] == '-' || n < 3 || k == 0 || k > n - 2 ||
	    strcmp(word + n - k, arg) != 0)
		return NULL;
	for (const struct option *o = long_options; o && o->name; o++)
		if (strcmp(o->name, word + 1) == 0)
			return o->name;
	return NULL;
}

int lookalike_value(const char *arg)
{
	const char *meant = meant_long_option(arg);
	return meant ? usage_error("'%s' reads as an option: did you mean --%s?", args[optind - 1],
				   meant)
		     : -1;
}

int bad_value(const char *what, const char *arg, const char *hint)
{
	const char *meant = meant_long_option(arg);
	if (meant)
		return usage_error("bad %s '%s'%s%s%s; did you mean --%s?", what, arg,
				   hint ? " (" : "", hint ? hint : "", hint ? ")" : "", meant);
	return usage_error("bad %s '%s'%s%s%s", what, arg, hint ? " (" : "", hint ? hint : "",
			   hint ? ")" : "");
}

/* The word where the last cli_next_option() call began. */
static int option_word;

int cli_next_option(int argc, char **argv, const char *shortopts)
{
	opterr = 0;
	option_word = optind;
	return getopt_long(argc, argv, shortopts, long_options, NULL);
}

/* The long option given a value it does not take ("--json=1"), which
 * getopt_long reports as '?' with optopt set to the option's letter OPT;
 * else NULL.  Only a long option's word was passed whole by the call:
 * a letter inside a bundle ("-Fq") leaves optind where it was. */
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

int cli_common_option(int opt, const char *arg, struct common *c, const char *help)
{
	const char *flag;
	switch (opt) {
	case 'd':
		if (!*arg)
			return usage_error("empty registry directory");
		c->dir = arg;
		return lookalike_value(arg);
	case 'w':
		if (parse_duration(arg, &c->lock_wait) < 0)
			return bad_value("lock wait", arg, NULL);
		return -1;
	case 'q':
		quiet = 1;
		return -1;
	case 'h':
		out_adds("usage: ");
		out_adds(usage_text);
		out_adds("\n");
		out_adds(help);
		return out_flush() ? EXIT_IO : 0;
	case 'V':
		out_adds(prog_name);
		out_adds(" " JOBREG_VERSION "\n");
		return out_flush() ? EXIT_IO : 0;
	case ':':
		return usage_error("option '%s' needs an argument", args[optind - 1]);
	case '?':
	default:
		if ((flag = valued_flag(optopt)) != NULL)
			return usage_error("option '--%s' takes no value", flag);
		if (optopt)
			return usage_error("unknown option '-%c'", optopt);
		return usage_error("unknown option '%s'", args[optind - 1]);
	}
}

int misplaced_option(const char *word)
{
	return fail(EXIT_USAGE, NULL, "misplaced option '%s': options come before the job %s",
		    word, strcmp(prog_name, "jobreg-dispatch") == 0 ? "id" : "ids");
}

int check_job_ids(char **ids, int count)
{
	for (int i = 0; i < count; i++) {
		if (valid_job_id(ids[i]))
			continue;
		/* A job id cannot begin with '-': this is an option given
		 * after the operands, never a job to act on. */
		if (ids[i][0] == '-' && ids[i][1])
			return misplaced_option(ids[i]);
		/* Quote the id with its unprintable bytes escaped, so the
		 * message stays one readable line. */
		struct buf shown = {0};
		for (const unsigned char *p = (const unsigned char *)ids[i]; *p; p++) {
			if (*p < 0x20 || *p >= 0x7f)
				buf_addf(&shown, "\\x%02x", *p);
			else
				buf_addc(&shown, (char)*p);
		}
		/* Name the id whole, unless it is absurdly long. */
		if (strlen(ids[i]) > JOB_ID_MAX)
			fail(EXIT_USAGE, NULL, "bad job id '%.1024s%s': longer than %d bytes",
			     shown.data, shown.len > 1024 ? "..." : "", JOB_ID_MAX);
		else
			fail(EXIT_USAGE, NULL,
			     "bad job id '%s': use 1-%d of [A-Za-z0-9._@+-], not starting with '.' or '-'",
			     shown.len ? shown.data : "", JOB_ID_MAX);
		buf_free(&shown);
		return EXIT_USAGE;
	}
	return 0;
}

int parse_duration(const char *s, double *seconds)
{
	double value = 0, scale = 1;
	int digits = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		value = value * 10 + (*p - '0');
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			scale /= 10;
			value += (*p - '0') * scale;
		}
	}
	if (!digits)
		return -1;
	switch (*p) {
	case '\0': break;
	case 's': p++; break;
	case 'm': value *= 60; p++; break;
	case 'h': value *= 3600; p++; break;
	case 'd': value *= 86400; p++; break;
	default: return -1;
	}
	/* A century is more than any wait or age we can mean. */
	if (*p || value > 3.2e9)
		return -1;
	*seconds = value;
	return 0;
}

int parse_limit(const char *s, double *seconds)
{
	if (strcmp(s, "inf") == 0 || strcmp(s, "infinity") == 0) {
		*seconds = -1;
		return 0;
	}
	return parse_duration(s, seconds);
}

int parse_uint(const char *s, long max, long *value)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*value = v;
	return 0;
}

int parse_late_after(const char *s, double *seconds)
{
	if (parse_limit(s, seconds) < 0 || *seconds == 0)
		return bad_value("late-after duration", s, "a duration, or inf");
	return -1;
}

int parse_keep_runs(const char *s, long *keep)
{
	if (parse_uint(s, KEEP_RUNS_MAX, keep) < 0)
		return bad_value("keep-runs", s, "0-10000");
	return -1;
}

char *registry_path(const char *opt_dir)
{
	const char *env;
	struct buf path = {0};

	if (opt_dir)
		return xstrdup(opt_dir);
	env = getenv("JOBREG_DIR");
	if (env && *env)
		return xstrdup(env);
	/* The XDG spec says relative paths there are to be ignored. */
	env = getenv("XDG_STATE_HOME");
	if (env && env[0] == '/') {
		buf_adds(&path, env);
		buf_adds(&path, "/jobreg");
		return path.data;
	}
	env = getenv("HOME");
	if (!env || !*env) {
		fail(EXIT_USAGE, NULL,
		     "no registry: give -d DIR or set JOBREG_DIR, XDG_STATE_HOME or HOME");
		return NULL;
	}
	buf_adds(&path, env);
	buf_adds(&path, "/.local/state/jobreg");
	return path.data;
}

/* Write to standard output; a failure is reported once, and every later
 * write is dropped. */
static int out_write(const char *data, size_t len)
{
	static int failed;
	if (!len || failed)
		return failed;
	if (write_full(1, data, len) < 0) {
		failed = 1;
		fail_errno(errno, NULL, "write to standard output");
	}
	return failed;
}

void out_add(const char *data, unsigned long len)
{
	/* A large block (a listing's whole text) goes out as it is, not
	 * through a copy. */
	if (len >= 65536) {
		if (!out_flush())
			(void)out_write(data, len);
		return;
	}
	buf_add(&out, data, len);
	if (out.len >= 65536)
		out_flush();
}

void out_adds(const char *s)
{
	out_add(s, strlen(s));
}

int out_flush(void)
{
	/* Emptied first: the failure's message flushes again. */
	size_t len = out.len;
	out.len = 0;
	int failed = out_write(out.data, len);
	buf_reset(&out);
	return failed;
}
