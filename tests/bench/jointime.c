/* jointime: how long a dispatcher takes to join a job's line, for
 * tests/bench/run.
 *
 *   jointime [-n CALLS] [-b BATCHES] [-w WARMUP] -- DIR JOB CMD [ARG...]
 *            [:: DIR JOB CMD [ARG...]]...
 *
 * CMD is a dispatcher that will wait in JOB's line in DIR (e.g.
 * jobreg-dispatch -d DIR --wait inf JOB -- true while JOB runs).  A call
 * is timed from just before its fork to the rename of the record that
 * holds its place (wait_next one up: SPEC §5a, "takes a place in the
 * job's line ... the record is rewritten"), seen through inotify on DIR.
 * Then the dispatcher is killed, its place file removed and the record
 * put back as it was before the call (under the job lock), so that every
 * call finds the same line: no pile of places left by the calls before,
 * live or given up, for it to pass over.
 *
 * The commands alternate call by call (A B A B ...), as in timeit.c.
 * Output, as timeit's, in microseconds per call:
 *   T K MEDIAN MIN MAX      and for K >= 1:   R K MEDIAN MIN MAX
 * (R: the per-batch ratio of command 0 to command K).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXCMD 4

struct cmd {
	const char *dir, *job;
	char **argv;
};

static int devnull = -1;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *msg)
{
	fprintf(stderr, "jointime: %s\n", msg);
	exit(2);
}

/* The record's text (a record is at most 64 KiB); its length in *LEN. */
static char *slurp(const struct cmd *c, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", c->dir, c->job);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot read the record (is the job running?)");
	char *text = malloc(65537);
	size_t n = 0;
	ssize_t r;
	while (n < 65536 && (r = read(fd, text + n, 65536 - n)) != 0) {
		if (r < 0 && errno != EINTR)
			die("read the record");
		if (r > 0)
			n += (size_t)r;
	}
	close(fd);
	text[n] = '\0';
	*len = n;
	return text;
}

/* The record's wait_next (0: none). */
static unsigned long long wait_next(const char *text)
{
	const char *p = strstr(text, "\nwait_next=");
	return p ? strtoull(p + 11, NULL, 10) : 0;
}

/* Put back the record's TEXT, under the job lock, as jobreg writes one:
 * a temp file renamed over it. */
static void put_back(const struct cmd *c, const char *text, size_t len)
{
	char lock[4096], tmp[4096], path[4096];
	snprintf(lock, sizeof lock, "%s/.%s.lock", c->dir, c->job);
	snprintf(tmp, sizeof tmp, "%s/.%s.jointime", c->dir, c->job);
	snprintf(path, sizeof path, "%s/%s", c->dir, c->job);
	int lfd = open(lock, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
		die("cannot take the job lock");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0 ||
	    rename(tmp, path) < 0)
		die("cannot put the record back");
	close(lfd);
}

/* One call: seconds from the fork to the record's rename. */
static double one_call(const struct cmd *c)
{
	int ino = inotify_init1(IN_CLOEXEC);
	if (ino < 0 || inotify_add_watch(ino, c->dir, IN_MOVED_TO) < 0)
		die("inotify");
	size_t was_len;
	char *was = slurp(c, &was_len);
	unsigned long long before = wait_next(was);
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(devnull, 1);
		execv(c->argv[0], c->argv);
		_exit(127);
	}
	double t1 = -1;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	while (t1 < 0) {
		struct pollfd pfd = { .fd = ino, .events = POLLIN };
		int rc = poll(&pfd, 1, 10000);
		if (rc == 0) {
			kill(pid, SIGKILL);
			die("no record written within 10 s (is the job running?)");
		}
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		ssize_t len = read(ino, buf, sizeof buf);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			die("read inotify");
		}
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->len && strcmp(ev->name, c->job) == 0 && t1 < 0)
				t1 = now();
			p += sizeof *ev + ev->len;
		}
	}
	kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	close(ino);
	size_t now_len;
	char *is = slurp(c, &now_len);
	unsigned long long after = wait_next(is);
	free(is);
	if (after != (before ? before : 1) + 1) {
		fprintf(stderr, "jointime: %s/%s: wait_next %llu before the call, %llu after\n",
			c->dir, c->job, before, after);
		exit(1);
	}
	char place[4096];
	snprintf(place, sizeof place, "%s/.%s.wait.%llu", c->dir, c->job, after - 1);
	if (unlink(place) < 0)
		die("cannot remove the place file of a killed call");
	put_back(c, was, was_len);
	free(was);
	return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(char tag, int k, double *v, int n)
{
	double *s = malloc((size_t)n * sizeof *s);
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	printf("%c %d %.4f %.4f %.4f\n", tag, k, m, s[0], s[n - 1]);
	free(s);
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
	long calls = 10, batches = 5, warmup = 2;
	int opt;
	while ((opt = getopt(argc, argv, "+n:b:w:")) != -1) {
		switch (opt) {
		case 'n': calls = number(optarg); break;
		case 'b': batches = number(optarg); break;
		case 'w': warmup = number(optarg); break;
		default:
			die("usage: jointime [-n CALLS] [-b BATCHES] [-w WARMUP] -- DIR JOB CMD... [:: ...]");
		}
	}
	if (calls < 1 || batches < 1)
		die("-n and -b must be at least 1");

	struct cmd cmds[MAXCMD];
	int ncmd = 0;
	for (int i = optind; i < argc;) {
		int j = i;
		while (j < argc && strcmp(argv[j], "::") != 0)
			j++;
		if (j - i < 3)
			die("each command needs DIR JOB CMD");
		if (ncmd == MAXCMD)
			die("too many commands");
		argv[j] = NULL;   /* ends this command's argv */
		cmds[ncmd].dir = argv[i];
		cmds[ncmd].job = argv[i + 1];
		cmds[ncmd].argv = argv + i + 2;
		if (!strchr(argv[i + 2], '/'))
			die("CMD must be a path");
		ncmd++;
		i = j + 1;
	}
	if (ncmd == 0)
		die("no command");
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		die("cannot open /dev/null");
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (long k = 0; k < warmup; k++)
		for (int c = 0; c < ncmd; c++)
			one_call(&cmds[c]);
	double *t[MAXCMD];
	for (int c = 0; c < ncmd; c++)
		t[c] = calloc((size_t)batches, sizeof(double));
	for (long b = 0; b < batches; b++) {
		double sum[MAXCMD] = {0};
		for (long k = 0; k < calls; k++)
			for (int c = 0; c < ncmd; c++)
				sum[c] += one_call(&cmds[c]);
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
