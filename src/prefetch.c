#include "prefetch.h"
#include "entry.h"
#include "record.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define CHUNK (1u << 20)   /* the helper's storage, never moved */
#define WANT (RECORD_MAX + 1)

struct slot {
	const char *data;
	size_t len;
};

struct prefetch {
	int dir;
	char *const *names;
	const unsigned char *regular;
	size_t n;
	struct slot *slots;
	atomic_uchar *ready;      /* slots[i] is set (data may be NULL) */
	atomic_size_t next;       /* the first index nobody has claimed */
	int thread;               /* the helper runs */
	pthread_t helper;
	struct arena {            /* where one thread keeps what it read */
		char **chunks;    /* each CHUNK bytes, never moved */
		size_t nchunks;
		size_t used;      /* in the last chunk */
	} arena[2];               /* the caller's, the helper's */
};

/* One read of NAME into BUF (WANT + 1 bytes): its length, or 0 when it is
 * not a plain record to hand out. */
static size_t read_one(int dir, const char *name, char *buf)
{
	int fd;
	do
		fd = openat(dir, name, O_RDONLY | ENTRY_FLAGS);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return 0;
	ssize_t n;
	do
		n = read(fd, buf, WANT);
	while (n < 0 && errno == EINTR);
	close_fd(fd);
	/* A short read of a regular file is its end; WANT bytes is over
	 * the limit, left to reg_read() to report. */
	if (n <= 0 || n == WANT)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

static char *space(struct arena *a)
{
	if (!a->nchunks || CHUNK - a->used < WANT + 1) {
		if ((a->nchunks & (a->nchunks - 1)) == 0)
			a->chunks = xrealloc(a->chunks, (a->nchunks ? a->nchunks * 2 : 1) *
					     sizeof *a->chunks);
		a->chunks[a->nchunks++] = xmalloc(CHUNK);
		a->used = 0;
	}
	return a->chunks[a->nchunks - 1] + a->used;
}

/* Claim the next record nobody has and read it into A; 0 when none is left. */
static int work(struct prefetch *p, struct arena *a)
{
	size_t i = atomic_fetch_add(&p->next, 1);
	if (i >= p->n)
		return 0;
	if (p->regular[i]) {
		char *buf = space(a);
		size_t len = read_one(p->dir, p->names[i], buf);
		if (len) {
			p->slots[i].data = buf;
			p->slots[i].len = len;
			a->used += len + 1;
		}
	}
	atomic_store_explicit(&p->ready[i], 1, memory_order_release);
	return 1;
}

static void *helper(void *arg)
{
	struct prefetch *p = arg;
	while (work(p, &p->arena[1]))
		;
	return NULL;
}

struct prefetch *prefetch_start(int dirfd, char *const *names, const unsigned char *regular,
				size_t n)
{
	struct prefetch *p = xmalloc(sizeof *p);
	p->dir = dirfd;
	p->names = names;
	p->regular = regular;
	p->n = n;
	p->slots = xmalloc((n ? n : 1) * sizeof *p->slots);
	p->ready = xmalloc((n ? n : 1) * sizeof *p->ready);
	for (size_t i = 0; i < n; i++) {
		p->slots[i].data = NULL;
		p->slots[i].len = 0;
		atomic_init(&p->ready[i], 0);
	}
	atomic_init(&p->next, 0);
	for (int k = 0; k < 2; k++)
		p->arena[k] = (struct arena){ NULL, 0, 0 };
	/* Signals (the lock waits' SIGALRM) are for the caller's thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->thread = n > 1 && pthread_create(&p->helper, NULL, helper, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p;
}

const char *prefetch_get(struct prefetch *p, size_t i, size_t *len)
{
	/* Until record I is in, read the next ones here as well: the system
	 * calls are most of the cost, so both threads make them. */
	while (!atomic_load_explicit(&p->ready[i], memory_order_acquire))
		if (!work(p, &p->arena[0]))
			sched_yield();   /* the helper is reading I */
	*len = p->slots[i].len;
	return p->slots[i].data;
}

void prefetch_end(struct prefetch *p)
{
	if (!p)
		return;
	atomic_store(&p->next, p->n);
	if (p->thread)
		pthread_join(p->helper, NULL);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < p->arena[k].nchunks; i++)
			free(p->arena[k].chunks[i]);
		free(p->arena[k].chunks);
	}
	free(p->ready);
	free(p->slots);
	free(p);
}
