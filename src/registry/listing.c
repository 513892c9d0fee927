#include "registry/listing.h"
#include "registry/slots.h"
#include "util/msg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef DT_REG
#define ENTRY_IS_REG(e) ((e)->d_type == DT_REG)
#else
#define ENTRY_IS_REG(e) 0   /* not told */
#endif

static void push(char ***list, size_t *count, const char *name, size_t len)
{
	if ((*count & (*count - 1)) == 0)
		*list = xrealloc(*list, (*count ? *count * 2 : 1) * sizeof **list);
	(*list)[(*count)++] = xstrndup(name, len);
}

static void push_job(struct listing *l, const char *name, int regular)
{
	push(&l->jobs, &l->njobs, name, strlen(name));
	if (!regular && !l->jobs_only)
		push(&l->unsure, &l->nunsure, name, strlen(name));
}

static int ends_with(const char *name, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n > k + 1 && memcmp(name + n - k, suffix, k) == 0;
}

char *listing_place_job(const char *name)
{
	char *job = reg_dot_job(name, ".coalesce", 0);
	return job ? job : reg_dot_job(name, ".wait.", 1);
}

static void add_entry(struct listing *l, const struct dirent *e)
{
	const char *name = e->d_name;
	size_t n = strlen(name);
	/* The suffixes first: a job id may hold ".tmp." itself. */
	if (name[0] != '.') {
		if (valid_job_id(name))
			push_job(l, name, ENTRY_IS_REG(e));
	} else if (ends_with(name, n, ".lock")) {
		push(&l->locks, &l->nlocks, name, n);
	} else if (slot_file_parse(name, NULL, NULL)) {
		push(&l->slots, &l->nslots, name, n);   /* (get --slots, -P) */
	} else if (l->jobs_only) {
		return;   /* get -a looks at nothing else */
	} else if (ends_with(name, n, ".run")) {
		push(&l->runs, &l->nruns, name, n);
	} else if (ends_with(name, n, ".history") || ends_with(name, n, ".log") ||
		   ends_with(name, n, ".faillog") || ends_with(name, n, ".newlog")) {
		push(&l->runfiles, &l->nrunfiles, name, n);
	} else if (ends_with(name, n, ".coalesce") || (n > 7 && strstr(name, ".wait."))) {
		char *job = listing_place_job(name);
		if (job)
			push(&l->places, &l->nplaces, name, n);
		free(job);
	} else if (ends_with(name, n, ".tmp") ||
		   (n > 12 && memcmp(name + n - 11, ".tmp.", 5) == 0)) {
		push(&l->temps, &l->ntemps, name, n);   /* and 0.1's ".X.tmp.XXXXXX" */
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_names(char **names, size_t n)
{
	if (n > 1)   /* an empty list is NULL, which qsort must not get */
		qsort(names, n, sizeof *names, cmp_names);
}

size_t listing_lower_bound(char *const *names, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(names[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int listing_has(char *const *names, size_t n, const char *name)
{
	/* (an empty list is NULL, which bsearch must not get) */
	return n > 0 && bsearch(&name, names, n, sizeof *names, cmp_names) != NULL;
}

/* The jobs whose lock was listed but whose existing record was not
 * (listing.h). */
static void add_missed(const struct registry *reg, struct listing *l)
{
	size_t listed = l->njobs;
	for (size_t i = 0; i < l->nlocks; i++) {
		char *job = reg_dot_job(l->locks[i], ".lock", 0);
		struct stat st;
		if (job && !listing_has(l->jobs, listed, job) &&
		    fstatat(reg->fd, job, &st, AT_SYMLINK_NOFOLLOW) == 0)
			push_job(l, job, S_ISREG(st.st_mode));
		free(job);
	}
	if (l->njobs > listed)
		sort_names(l->jobs, l->njobs);
}

int reg_list(const struct registry *reg, enum list_what what, struct listing *l)
{
	memset(l, 0, sizeof *l);
	l->jobs_only = what == LIST_JOBS;
	if (reg->fd < 0)
		return 0;
	/* readdir needs a descriptor of its own. */
	int fd = openat(reg->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		int err = errno;
		if (fd >= 0)
			close_fd(fd);
		return fail_errno(err, NULL, "read registry %s", reg->path);
	}
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(dir);
		if (!e)
			break;
		add_entry(l, e);
	}
	int err = errno;
	closedir(dir);
	if (err)
		return fail_errno(err, NULL, "read registry %s", reg->path);
	sort_names(l->jobs, l->njobs);
	sort_names(l->locks, l->nlocks);
	add_missed(reg, l);
	sort_names(l->unsure, l->nunsure);
	sort_names(l->temps, l->ntemps);
	sort_names(l->runs, l->nruns);
	sort_names(l->runfiles, l->nrunfiles);
	sort_names(l->places, l->nplaces);
	return 0;
}

void listing_free(struct listing *l)
{
	char **lists[] = { l->jobs, l->unsure, l->temps, l->runs, l->locks, l->runfiles,
			   l->places, l->slots };
	const size_t counts[] = { l->njobs, l->nunsure, l->ntemps, l->nruns, l->nlocks,
				  l->nrunfiles, l->nplaces, l->nslots };
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		for (size_t i = 0; i < counts[k]; i++)
			free(lists[k][i]);
		free(lists[k]);
	}
	memset(l, 0, sizeof *l);
}
