/* listing: reading the registry directory for reg_list() (see
 * registry.h): one readdir(3) pass, which on Linux is getdents64(2) and
 * gives each entry's d_type, so readers can skip the fstat of a listed
 * regular file (prefetch.h); then one sort by id, or for a reader that
 * starts on the records while the listing goes on, the order of that
 * sort. */
#include "registry.h"
#include "cli.h"
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DT_REG
#define ENTRY_IS_REG(e) ((e)->d_type == DT_REG)
#else
#define ENTRY_IS_REG(e) 0   /* not told: readers fstat */
#endif

/* The registry as a DIR stream, on a descriptor of its own (readdir
 * needs one); NULL with errno set after the error is printed. */
static DIR *open_listing(const struct registry *reg, const char *job)
{
	int fd = openat(reg->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		int err = errno;
		if (fd >= 0)
			close_fd(fd);
		fail_errno(err, job, "read registry %s", reg->path);
		errno = err;
	}
	return dir;
}

/* A job's id and its place in the listing. */
struct named {
	const char *name;
	size_t index;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static void push(char ***list, size_t *count, const char *name)
{
	/* Grow in powers of two. */
	if ((*count & (*count - 1)) == 0)
		*list = xrealloc(*list, (*count ? *count * 2 : 1) * sizeof **list);
	(*list)[(*count)++] = xstrdup(name);
}

/* Call VISIT for every entry of the registry; returns an exit status. */
static int scan_dir(const struct registry *reg, const char *job,
		    void (*visit)(const struct dirent *e, void *ctx), void *ctx)
{
	DIR *dir = open_listing(reg, job);
	if (!dir)
		return errno_exit(errno);
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(dir);
		if (!e)
			break;
		visit(e, ctx);
	}
	int err = errno;
	closedir(dir);
	if (err)
		return fail_errno(err, job, "read registry %s", reg->path);
	return 0;
}

/* The listing being made, and who is told of each job in it. */
struct scan {
	struct listing *l;
	listing_hook *added;
	void *ctx;
};

/* Temps: ".X.tmp", and 0.1's ".X.tmp.XXXXXX" (mkstemp) for sweeps. */
static void add_to_listing(const struct dirent *e, void *ctx)
{
	struct scan *scan = ctx;
	struct listing *l = scan->l;
	const char *name = e->d_name;
	size_t n = strlen(name);
	if (name[0] != '.' && valid_job_id(name)) {
		push(&l->jobs, &l->njobs, name);
		if ((l->njobs & (l->njobs - 1)) == 0)
			l->regular = xrealloc(l->regular, l->njobs * 2);
		l->regular[l->njobs - 1] = ENTRY_IS_REG(e);
		if (scan->added)
			scan->added(scan->ctx, l->jobs[l->njobs - 1], l->regular[l->njobs - 1]);
	} else if ((n > 5 && strcmp(name + n - 4, ".tmp") == 0) ||
		   (n > 12 && memcmp(name + n - 11, ".tmp.", 5) == 0)) {
		push(&l->temps, &l->ntemps, name);
	} else if (n > 5 && strcmp(name + n - 4, ".run") == 0) {
		push(&l->runs, &l->nruns, name);
	}
}

size_t *listing_order(const struct listing *l)
{
	struct named *v = xmalloc((l->njobs ? l->njobs : 1) * sizeof *v);
	for (size_t i = 0; i < l->njobs; i++)
		v[i] = (struct named){ l->jobs[i], i };
	qsort(v, l->njobs, sizeof *v, cmp_names);
	size_t *order = xmalloc((l->njobs ? l->njobs : 1) * sizeof *order);
	for (size_t i = 0; i < l->njobs; i++)
		order[i] = v[i].index;
	free(v);
	return order;
}

/* Sort the jobs by id, REGULAR beside them. */
static void sort_jobs(struct listing *l)
{
	size_t *order = listing_order(l);
	char **jobs = xmalloc(l->njobs * sizeof *jobs);
	unsigned char *regular = xmalloc(l->njobs);
	for (size_t i = 0; i < l->njobs; i++) {
		jobs[i] = l->jobs[order[i]];
		regular[i] = l->regular[order[i]];
	}
	free(order);
	free(l->jobs);
	free(l->regular);
	l->jobs = jobs;
	l->regular = regular;
}

int reg_list_unsorted(const struct registry *reg, struct listing *l, listing_hook *added,
		      void *ctx)
{
	memset(l, 0, sizeof *l);
	if (reg->fd < 0)
		return 0;
	struct scan scan = { l, added, ctx };
	return scan_dir(reg, NULL, add_to_listing, &scan);
}

int reg_list(const struct registry *reg, struct listing *l)
{
	int rc = reg_list_unsorted(reg, l, NULL, NULL);
	if (!rc && l->njobs > 1)
		sort_jobs(l);
	return rc;
}

void listing_free(struct listing *l)
{
	char **lists[] = { l->jobs, l->temps, l->runs };
	const size_t counts[] = { l->njobs, l->ntemps, l->nruns };
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < counts[k]; i++)
			free(lists[k][i]);
		free(lists[k]);
	}
	free(l->regular);
	memset(l, 0, sizeof *l);
}
