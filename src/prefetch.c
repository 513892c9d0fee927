/* unshare(2) and CLONE_FILES, close_range(2): Linux, with fallbacks */
#define _GNU_SOURCE
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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK (1u << 20)   /* a thread's storage, never moved */
#define WANT (RECORD_MAX + 1)
#define BASE 1024          /* slots in block 0; block b has BASE << b */
#define BLOCKS 40          /* 2^50 slots: more than any memory holds */
#define START_AT 64        /* records listed before the helper is worth it */
#define BATCH 32           /* descriptors a thread closes at once, at most */
#define ROOMY 256          /* descriptors allowed before the caller's thread
			    * keeps a batch open: others it opens (a lock
			    * probe, a read again) must not run out */
#define GRAB 16            /* records a thread claims at once */

struct slot {
	const char *name;
	unsigned char regular;
	atomic_uchar claimed;     /* somebody reads it */
	atomic_uchar ready;       /* data and len are set (data may be NULL) */
	const char *data;
	size_t len;
};

struct prefetch {
	int dir;
	/* Slot i lives in a block that never moves, so the caller can add
	 * records while the helper reads the earlier ones. */
	struct slot *blocks[BLOCKS];
	int nblocks;
	size_t cap;               /* slots in those blocks */
	atomic_size_t added;      /* slots [0, added) are filled in */
	atomic_int closed;        /* no more will be added */
	/* Claims go in the listed order until the caller's order is known,
	 * then in that order, past the records already claimed. */
	atomic_size_t next_listed;
	_Atomic(const size_t *) order;
	_Alignas(64) atomic_size_t next_ordered;   /* a cache line apart */
	/* The helper sleeps here when it has read all that was added. */
	pthread_mutex_t lock;
	pthread_cond_t more;
	atomic_int waiting;
	int thread;               /* the helper runs */
	pthread_t helper;
	struct arena {            /* where one thread keeps what it read */
		_Alignas(64)      /* each thread's on its own cache lines */
		char **chunks;    /* each CHUNK bytes, never moved */
		size_t nchunks;
		size_t used;      /* in the last chunk */
		int fds[BATCH];   /* read, not closed yet */
		int nfds;
		int batch;        /* closed when there are this many */
		const size_t *order;  /* the places claimed: [next, end) of */
		size_t next, end;     /* the order, or listed if it is NULL */
	} arena[2];               /* the caller's, the helper's */
};

static struct slot *slot_at(struct prefetch *p, size_t i)
{
	size_t q = i / BASE + 1;
	int b = 0;
	while (q >>= 1)
		b++;
	return &p->blocks[b][i - BASE * (((size_t)1 << b) - 1)];
}

/* Close the descriptors [LO, HI]: one close_range(2) for a run of them. */
static void close_run(int lo, int hi)
{
#ifdef SYS_close_range
	if (lo < hi && syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0u) == 0)
		return;
#endif
	for (int fd = lo; fd <= hi; fd++)
		close_fd(fd);
}

/* Close A's descriptors, each run of consecutive numbers at once: every
 * number in such a run is one of ours, so nobody else's is closed.  Each
 * close(2) is a system call, a third of what a record costs. */
static void close_batch(struct arena *a)
{
	int *fd = a->fds, n = a->nfds;
	for (int k = 1; k < n; k++)   /* mostly in order already */
		for (int j = k; j > 0 && fd[j - 1] > fd[j]; j--) {
			int t = fd[j];
			fd[j] = fd[j - 1];
			fd[j - 1] = t;
		}
	for (int k = 0; k < n;) {
		int j = k;
		while (j + 1 < n && fd[j + 1] == fd[j] + 1)
			j++;
		close_run(fd[k], fd[j]);
		k = j + 1;
	}
	a->nfds = 0;
}

/* One read of NAME into BUF (WANT + 1 bytes): its length, or 0 when it is
 * not a plain record to hand out.  The descriptor joins A's batch. */
static size_t read_one(int dir, const char *name, char *buf, struct arena *a)
{
	int fd;
	for (;;) {
		fd = openat(dir, name, O_RDONLY | ENTRY_FLAGS);
		if (fd >= 0)
			break;
		if ((errno == EMFILE || errno == ENFILE) && a->nfds)
			close_batch(a);   /* the batch is too many, not the record */
		else if (errno != EINTR)
			return 0;
	}
	ssize_t n;
	do
		n = read(fd, buf, WANT);
	while (n < 0 && errno == EINTR);
	a->fds[a->nfds++] = fd;
	if (a->nfds == a->batch)
		close_batch(a);
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

enum { CLAIMED, NONE_YET, NONE_LEFT };

/* Claim the next record nobody has into *I.  A thread takes GRAB places
 * at a time, so that the shared counters, and the slots, are not handed
 * between the two cores' caches for every record. */
static int claim(struct prefetch *p, struct arena *a, size_t *i)
{
	for (;;) {
		if (a->next < a->end) {
			size_t j = a->next++;
			*i = a->order ? a->order[j] : j;
			if (!atomic_exchange(&slot_at(p, *i)->claimed, 1))
				return CLAIMED;
			continue;
		}
		const size_t *order = atomic_load(&p->order);
		size_t n = atomic_load_explicit(&p->added, memory_order_acquire);
		size_t j;
		if (order) {
			j = atomic_fetch_add(&p->next_ordered, GRAB);
			if (j >= n)
				return NONE_LEFT;   /* the order comes after the last add */
		} else {
			j = atomic_load(&p->next_listed);
			if (j >= n)
				return atomic_load(&p->closed) ? NONE_LEFT : NONE_YET;
			if (!atomic_compare_exchange_weak(&p->next_listed, &j,
							  j + GRAB < n ? j + GRAB : n))
				continue;
		}
		a->order = order;
		a->next = j;
		a->end = j + GRAB < n ? j + GRAB : n;
	}
}

/* Claim a record and read it into A. */
static int work(struct prefetch *p, struct arena *a)
{
	size_t i;
	int got = claim(p, a, &i);
	if (got != CLAIMED)
		return got;
	struct slot *s = slot_at(p, i);
	if (s->regular) {
		char *buf = space(a);
		size_t len = read_one(p->dir, s->name, buf, a);
		if (len) {
			s->data = buf;
			s->len = len;
			a->used += len + 1;
		}
	}
	atomic_store_explicit(&s->ready, 1, memory_order_release);
	return CLAIMED;
}

/* Give the helper a descriptor table of its own: then neither thread's
 * openat, read or close takes the shared table's lock or a reference on
 * the file, and its batches cannot cross the caller's.  Only the directory
 * (and 0-2) stay open in it: a descriptor the caller has, or a lock, must
 * not live on here after the caller closes it. */
static void own_table(int dir)
{
#if defined(SYS_close_range) && defined(CLOSE_RANGE_UNSHARE)
	if (syscall(SYS_close_range, (unsigned)dir + 1, ~0u, CLOSE_RANGE_UNSHARE) == 0 &&
	    dir > 3)
		(void)syscall(SYS_close_range, 3u, (unsigned)dir - 1, 0u);
#else
	(void)dir;
#endif
}

static void *helper(void *arg)
{
	struct prefetch *p = arg;
	int got;

	own_table(p->dir);
	while ((got = work(p, &p->arena[1])) != NONE_LEFT) {
		if (got != NONE_YET)
			continue;
		/* Read all that was added: wait for more, or the end. */
		pthread_mutex_lock(&p->lock);
		atomic_store(&p->waiting, 1);
		while (atomic_load(&p->next_listed) >= atomic_load(&p->added) &&
		       !atomic_load(&p->closed) && !atomic_load(&p->order))
			pthread_cond_wait(&p->more, &p->lock);
		atomic_store(&p->waiting, 0);
		pthread_mutex_unlock(&p->lock);
	}
	if (p->arena[1].nfds)
		close_batch(&p->arena[1]);
	return NULL;
}

static void wake(struct prefetch *p)
{
	if (!p->thread || !atomic_load(&p->waiting))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->lock);
}

struct prefetch *prefetch_start(int dirfd)
{
	struct prefetch *p = xmalloc_aligned(_Alignof(struct prefetch), sizeof *p);
	p->dir = dirfd;
	p->nblocks = 0;
	p->cap = 0;
	atomic_init(&p->added, 0);
	atomic_init(&p->closed, 0);
	atomic_init(&p->next_listed, 0);
	atomic_init(&p->order, NULL);
	atomic_init(&p->next_ordered, 0);
	atomic_init(&p->waiting, 0);
	for (int k = 0; k < 2; k++)
		p->arena[k] = (struct arena){ .chunks = NULL, .nfds = 0, .next = 0, .end = 0 };
	/* The helper's table holds nothing else, and it closes its batch
	 * when it runs out; the caller's thread opens other files too. */
	struct rlimit nofile;
	int roomy = getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
		    (nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur >= ROOMY);
	p->arena[0].batch = roomy ? BATCH : 1;
	p->arena[1].batch = BATCH;
	p->thread = 0;
	return p;
}

/* p->thread: 1 when the helper runs, -1 when it cannot be started (then
 * every record is read inline). */
static void start_helper(struct prefetch *p)
{
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return;
	if (pthread_cond_init(&p->more, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		return;
	}
	/* Signals (the lock waits' SIGALRM) are for the caller's thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->thread = pthread_create(&p->helper, NULL, helper, p) == 0 ? 1 : -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

size_t prefetch_add(struct prefetch *p, const char *name, int regular)
{
	size_t i = atomic_load(&p->added);
	if (i == p->cap) {
		if (p->nblocks == BLOCKS)
			abort();   /* xmalloc() ran out of memory long before */
		size_t size = (size_t)BASE << p->nblocks;
		p->blocks[p->nblocks++] = xmalloc(size * sizeof(struct slot));
		p->cap += size;
	}
	struct slot *s = slot_at(p, i);
	s->name = name;
	s->regular = (unsigned char)(regular != 0);
	atomic_init(&s->claimed, 0);
	atomic_init(&s->ready, 0);
	s->data = NULL;
	s->len = 0;
	/* Sequentially consistent, like the helper's store of waiting, so
	 * that one of the two sees the other: no wake-up is lost. */
	atomic_store(&p->added, i + 1);
	if (i + 1 == START_AT)
		start_helper(p);
	else if (i % 64 == 0)
		wake(p);
	return i;
}

void prefetch_order(struct prefetch *p, const size_t *order)
{
	atomic_store(&p->closed, 1);
	atomic_store(&p->order, order);
	wake(p);
}

const char *prefetch_get(struct prefetch *p, size_t i, size_t *len)
{
	/* Until record I is in, read the next ones here as well: the system
	 * calls are most of the cost, so both threads make them. */
	struct slot *s = slot_at(p, i);
	while (!atomic_load_explicit(&s->ready, memory_order_acquire))
		if (work(p, &p->arena[0]) != CLAIMED)
			sched_yield();   /* the helper is reading I */
	*len = s->len;
	return s->data;
}

void prefetch_end(struct prefetch *p)
{
	if (!p)
		return;
	size_t n = atomic_load(&p->added);
	atomic_store(&p->next_listed, n);
	atomic_store(&p->next_ordered, n);
	atomic_store(&p->closed, 1);
	if (p->thread == 1) {
		wake(p);
		pthread_join(p->helper, NULL);
	}
	if (p->thread) {
		pthread_cond_destroy(&p->more);
		pthread_mutex_destroy(&p->lock);
	}
	if (p->arena[0].nfds)
		close_batch(&p->arena[0]);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < p->arena[k].nchunks; i++)
			free(p->arena[k].chunks[i]);
		free(p->arena[k].chunks);
	}
	for (int b = 0; b < p->nblocks; b++)
		free(p->blocks[b]);
	free(p);
}
