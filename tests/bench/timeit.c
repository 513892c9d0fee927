/* timeit: a tiny fork+exec timing driver for tests/bench/run.
 *
 *   timeit [-n CALLS] [-b BATCHES] [-w WARMUP] [-p PREP] [-x STATUS]
 *          [-P WORKERS] -- CMD [ARG...] [:: CMD [ARG...]]...
 *
 * Runs each command CALLS times per batch, BATCHES batches, after WARMUP
 * untimed calls of each.  Several commands are interleaved call by call
 * within each batch (A B A B ..., each call timed on its own), so the load
 * bursts of a shared machine hit them alike and the per-batch ratios stay
 * tight; with -p the commands run batch after batch instead.
 * PREP, if given, is run with /bin/sh -c before every batch (untimed), e.g.
 * to rebuild a registry that the command consumes.  Every call must exit
 * with STATUS (default 0), or timeit stops with exit 1.  The children's
 * stdout goes to /dev/null; their stderr is kept.
 *
 * Output, one line per command K (0-based), times in microseconds per call:
 *   T K MEDIAN MIN MAX
 * and for K >= 1 the per-batch ratio of command 0 to command K:
 *   R K MEDIAN MIN MAX
 *
 * With -P WORKERS: each batch forks WORKERS workers at once; worker I
 * runs CALLS calls of the command with every "%i" in its arguments
 * replaced by I.  Output is the aggregate throughput, calls per second:
 *   P K MEDIAN MIN MAX
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXCMD 16

struct cmd {
	char **argv;
	int argc;
};

static int devnull = -1;
static int want_status;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *msg)
{
	fprintf(stderr, "timeit: %s\n", msg);
	exit(2);
}

/* Resolve a bare command name along PATH once, so the driver itself
 * does no PATH search per call. */
static char *resolve(const char *name)
{
	if (strchr(name, '/'))
		return strdup(name);
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char *full = malloc(len + strlen(name) + 2);
		memcpy(full, path, len);
		full[len] = '/';
		strcpy(full + len + 1, name);
		if (access(full, X_OK) == 0)
			return full;
		free(full);
		path += len;
		if (*path == ':')
			path++;
	}
	fprintf(stderr, "timeit: %s: not found\n", name);
	exit(2);
}

static void run_once(char **argv)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		exit(2);
	}
	if (pid == 0) {
		dup2(devnull, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("timeit: waitpid");
			exit(2);
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != want_status) {
		fprintf(stderr, "timeit: '%s", argv[0]);
		for (int i = 1; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		if (WIFEXITED(status))
			fprintf(stderr, "' exited %d, expected %d\n", WEXITSTATUS(status), want_status);
		else
			fprintf(stderr, "' killed by signal %d\n", WTERMSIG(status));
		exit(1);
	}
}

static void prep(const char *cmd)
{
	if (!cmd)
		return;
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	int saved = want_status;
	want_status = 0;
	run_once(argv);
	want_status = saved;
}

/* A copy of ARGV with "%i" replaced by I. */
static char **subst(const struct cmd *c, int i)
{
	char **v = calloc((size_t)c->argc + 1, sizeof *v);
	char num[16];
	snprintf(num, sizeof num, "%d", i);
	for (int k = 0; k < c->argc; k++) {
		const char *a = c->argv[k];
		size_t n = 0;
		for (const char *p = a; (p = strstr(p, "%i")); p += 2)
			n++;
		char *out = malloc(strlen(a) + n * strlen(num) + 1), *o = out;
		while (*a) {
			if (a[0] == '%' && a[1] == 'i') {
				o = stpcpy(o, num);
				a += 2;
			} else {
				*o++ = *a++;
			}
		}
		*o = '\0';
		v[k] = out;
	}
	return v;
}

/* One parallel batch: WORKERS processes, CALLS calls each; returns
 * seconds of wall time from the start signal to the last worker's end. */
static double parallel_batch(const struct cmd *c, int workers, long calls)
{
	int go[2];
	if (pipe(go) < 0)
		die("pipe");
	pid_t *pids = calloc((size_t)workers, sizeof *pids);
	for (int i = 0; i < workers; i++) {
		char **v = subst(c, i);
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			char b;
			close(go[1]);
			if (read(go[0], &b, 1) < 0)
				_exit(2);
			for (long k = 0; k < calls; k++)
				run_once(v);
			_exit(0);
		}
		for (int k = 0; v[k]; k++)
			free(v[k]);
		free(v);
	}
	close(go[0]);
	double t0 = now();
	close(go[1]);   /* every worker's read returns: go */
	int failed = 0;
	for (int i = 0; i < workers; i++) {
		int status;
		while (waitpid(pids[i], &status, 0) < 0)
			if (errno != EINTR)
				die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	double t = now() - t0;
	free(pids);
	if (failed) {
		fprintf(stderr, "timeit: a parallel worker failed\n");
		exit(1);
	}
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double *s = malloc((size_t)n * sizeof *s);
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static void report(char tag, int k, double *v, int n)
{
	double lo = v[0], hi = v[0];
	for (int i = 1; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	printf("%c %d %.4f %.4f %.4f\n", tag, k, median(v, n), lo, hi);
}

static long number(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || v < 0)
		die("bad number");
	return v;
}

int main(int argc, char **argv)
{
	long calls = 100, batches = 5, warmup = 10, workers = 0;
	const char *prep_cmd = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "+n:b:w:p:x:P:")) != -1) {
		switch (opt) {
		case 'n': calls = number(optarg); break;
		case 'b': batches = number(optarg); break;
		case 'w': warmup = number(optarg); break;
		case 'p': prep_cmd = optarg; break;
		case 'x': want_status = (int)number(optarg); break;
		case 'P': workers = number(optarg); break;
		default:
			die("usage: timeit [-n CALLS] [-b BATCHES] [-w WARMUP] [-p PREP] "
			    "[-x STATUS] [-P WORKERS] -- CMD... [:: CMD...]");
		}
	}
	if (calls < 1 || batches < 1)
		die("-n and -b must be at least 1");
	if (optind >= argc)
		die("no command");

	struct cmd cmds[MAXCMD];
	int ncmd = 0;
	for (int i = optind; i < argc;) {
		if (ncmd == MAXCMD)
			die("too many commands");
		int j = i;
		while (j < argc && strcmp(argv[j], "::") != 0)
			j++;
		if (j == i)
			die("empty command");
		cmds[ncmd].argc = j - i;
		cmds[ncmd].argv = calloc((size_t)(j - i) + 1, sizeof(char *));
		for (int k = i; k < j; k++)
			cmds[ncmd].argv[k - i] = argv[k];
		cmds[ncmd].argv[0] = resolve(argv[i]);
		ncmd++;
		i = j + 1;
	}

	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		die("cannot open /dev/null");
	setvbuf(stdout, NULL, _IOLBF, 0);

	double *t[MAXCMD];
	for (int c = 0; c < ncmd; c++)
		t[c] = calloc((size_t)batches, sizeof(double));

	if (workers > 0) {
		for (int c = 0; c < ncmd; c++)
			if (warmup > 0) {
				prep(prep_cmd);
				parallel_batch(&cmds[c], (int)workers, warmup);
			}
		for (long b = 0; b < batches; b++)
			for (int c = 0; c < ncmd; c++) {
				prep(prep_cmd);
				double s = parallel_batch(&cmds[c], (int)workers, calls);
				t[c][b] = (double)(workers * calls) / s;
			}
		for (int c = 0; c < ncmd; c++)
			report('P', c, t[c], (int)batches);
		return 0;
	}

	for (int c = 0; c < ncmd; c++)
		for (long k = 0; k < warmup; k++) {
			if (k == 0)
				prep(prep_cmd);
			run_once(cmds[c].argv);
		}
	for (long b = 0; b < batches; b++) {
		if (prep_cmd || ncmd == 1) {
			for (int c = 0; c < ncmd; c++) {
				prep(prep_cmd);
				double t0 = now();
				for (long k = 0; k < calls; k++)
					run_once(cmds[c].argv);
				t[c][b] = (now() - t0) / (double)calls * 1e6;
			}
			continue;
		}
		/* Several commands: alternate call by call (A B A B ...), so
		 * that a load burst of a shared machine hits both sides of a
		 * ratio alike; each call is timed on its own. */
		double sum[MAXCMD] = {0};
		for (long k = 0; k < calls; k++)
			for (int c = 0; c < ncmd; c++) {
				double t0 = now();
				run_once(cmds[c].argv);
				sum[c] += now() - t0;
			}
		for (int c = 0; c < ncmd; c++)
			t[c][b] = sum[c] / (double)calls * 1e6;
	}
	for (int c = 0; c < ncmd; c++)
		report('T', c, t[c], (int)batches);
	double *r = calloc((size_t)batches, sizeof(double));
	for (int c = 1; c < ncmd; c++) {
		for (long b = 0; b < batches; b++)
			r[b] = t[0][b] / t[c][b];
		report('R', c, r, (int)batches);
	}
	return 0;
}
