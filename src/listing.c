/* listing: reading the registry directory for reg_list() (see
 * registry.h): one readdir(3) pass, which on Linux is getdents64(2) and
 * gives each entry's d_type, so readers can skip the fstat of a listed
 * regular file (prefetch.h); then one sort by id. */
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

/* A job and whether its directory entry says it is a regular file. */
struct named {
	char *name;
	int regular;
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

/* Temps: ".X.tmp", and 0.1's ".X.tmp.XXXXXX" (mkstemp) for sweeps. */
static void add_to_listing(const struct dirent *e, void *ctx)
{
	struct listing *l = ctx;
	const char *name = e->d_name;
	size_t n = strlen(name);
	if (name[0] != '.' && valid_job_id(name)) {
		push(&l->jobs, &l->njobs, name);
		if ((l->njobs & (l->njobs - 1)) == 0)
			l->regular = xrealloc(l->regular, l->njobs * 2);
		l->regular[l->njobs - 1] = ENTRY_IS_REG(e);
	} else if (n > 5 && strcmp(name + n - 4, ".tmp") == 0) {
		push(&l->temps, &l->ntemps, name);
	} else if (n > 12 && memcmp(name + n - 11, ".tmp.", 5) == 0) {
		push(&l->temps, &l->ntemps, name);
	} else if (n > 5 && strcmp(name + n - 4, ".run") == 0) {
		push(&l->runs, &l->nruns, name);
	}
}

/* Sort the jobs by id, REGULAR beside them. */
static void sort_jobs(struct listing *l)
{
	struct named *v = xmalloc(l->njobs * sizeof *v);
	for (size_t i = 0; i < l->njobs; i++)
		v[i] = (struct named){ l->jobs[i], l->regular[i] };
	qsort(v, l->njobs, sizeof *v, cmp_names);
	for (size_t i = 0; i < l->njobs; i++) {
		l->jobs[i] = v[i].name;
		l->regular[i] = (unsigned char)v[i].regular;
	}
	free(v);
}

int reg_list(const struct registry *reg, struct listing *l)
{
	memset(l, 0, sizeof *l);
	if (reg->fd < 0)
		return 0;
	int rc = scan_dir(reg, NULL, add_to_listing, l);
	if (!rc && l->njobs > 1)
		sort_jobs(l);
	return rc;
}

void listing_free(struct listing *l)
{
	char **lists[] = { l->jobs, l->temps, l->runs };
	size_t counts[] = { l->njobs, l->ntemps, l->nruns };
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < counts[k]; i++)
			free(lists[k][i]);
		free(lists[k]);
	}
	free(l->regular);
	memset(l, 0, sizeof *l);
}
