/* listfloor: the floor of reading every record of a registry, for
 * tests/bench/run — what `jobreg-get -a` cannot beat.  Lists the directory
 * with getdents64(2) (one large buffer), keeps the names that do not begin
 * with '.', takes the regular-file check from d_type (fstat only for
 * DT_UNKNOWN), and reads each file once: no sort, no parse, no output but
 * a count.
 *
 *   listfloor MODE DIR       MODE: 1 | 2 | 2b | uring
 *
 *   1      openat/read/close per file, one thread
 *   2      the same, the names split between 2 threads
 *   2b     2 threads, each with a descriptor table of its own
 *          (close_range(2) with CLOSE_RANGE_UNSHARE), closing its files
 *          32 at a time with one close_range(2), as jobreg-get -a does
 *   uring  io_uring, batches of linked OPENAT -> READ -> CLOSE on direct
 *          (fixed) descriptors, one io_uring_enter(2) per batch
 *
 * Prints "FILES BYTES" on stdout; exits 1 with a message if MODE cannot
 * run here (io_uring missing or disabled), 74 on an I/O error.
 * Linux only (a benchmark helper, not part of jobreg). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUFSZ (65536 + 1)

struct linux_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int dir;
static char **names;
static size_t count;

static void die(const char *what)
{
	perror(what);
	exit(74);
}

static void list(void)
{
	static char buf[1 << 20];
	size_t cap = 0;
	for (;;) {
		long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
		if (n < 0)
			die("getdents64");
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *e = (void *)(buf + off);
			off += e->d_reclen;
			if (e->d_name[0] == '.')
				continue;
			if (e->d_type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				    !S_ISREG(st.st_mode))
					continue;
			} else if (e->d_type != DT_REG) {
				continue;
			}
			if (count == cap) {
				cap = cap ? cap * 2 : 1024;
				names = realloc(names, cap * sizeof *names);
				if (!names)
					die("realloc");
			}
			names[count++] = strdup(e->d_name);
		}
	}
}

struct part {
	size_t from, to;
	int batched;
	unsigned long long bytes;
};

#define CLOSE_BATCH 32

static void *read_part(void *arg)
{
	struct part *p = arg;
	char *buf = malloc(BUFSZ);
	if (!buf)
		die("malloc");
	/* 2b: a table of our own, holding only 0-2 and the directory (the
	 * one-thread run's table is its own already) */
	if (p->batched && syscall(SYS_close_range, (unsigned)dir + 1, ~0u, CLOSE_RANGE_UNSHARE) < 0)
		die("close_range");
	int first = -1, held = 0;
	for (size_t i = p->from; i < p->to; i++) {
		int fd = openat(dir, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			die(names[i]);
		ssize_t n = read(fd, buf, BUFSZ);
		if (n < 0)
			die(names[i]);
		p->bytes += (unsigned long long)n;
		if (!p->batched) {
			close(fd);
			continue;
		}
		/* lowest-first allocation in a private table: consecutive */
		if (first < 0)
			first = fd;
		if (++held == CLOSE_BATCH || i + 1 == p->to) {
			if (syscall(SYS_close_range, (unsigned)first, (unsigned)fd, 0u) < 0)
				die("close_range");
			first = -1;
			held = 0;
		}
	}
	free(buf);
	return NULL;
}

static unsigned long long threads(int n, int batched)
{
	struct part p[2];
	pthread_t t[2];
	unsigned long long bytes = 0;
	for (int i = 0; i < n; i++) {
		p[i].from = count * (size_t)i / (size_t)n;
		p[i].to = count * (size_t)(i + 1) / (size_t)n;
		p[i].batched = batched;
		p[i].bytes = 0;
	}
	for (int i = 1; i < n; i++)
		if (pthread_create(&t[i], NULL, read_part, &p[i]) != 0)
			die("pthread_create");
	read_part(&p[0]);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++)
		bytes += p[i].bytes;
	return bytes;
}

/* --- io_uring, raw ------------------------------------------------------ */
#define BATCH 256   /* files per io_uring_enter; 3 SQEs each */

static int ring_fd;
static unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;

static int uring_init(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	ring_fd = (int)syscall(__NR_io_uring_setup, BATCH * 3, &p);
	if (ring_fd < 0)
		return -1;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			ring_fd, IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			ring_fd, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return -1;
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	cq_head = (unsigned *)(cq + p.cq_off.head);
	cq_tail = (unsigned *)(cq + p.cq_off.tail);
	cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	/* A sparse table of direct descriptors, one slot per file of a batch. */
	struct io_uring_rsrc_register reg;
	memset(&reg, 0, sizeof reg);
	reg.nr = BATCH;
	reg.flags = IORING_RSRC_REGISTER_SPARSE;
	if (syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_FILES2, &reg, sizeof reg) < 0)
		return -1;
	return 0;
}

static struct io_uring_sqe *sqe_next(void)
{
	unsigned tail = *sq_tail;
	unsigned idx = tail & *sq_mask;
	struct io_uring_sqe *s = &sqes[idx];
	memset(s, 0, sizeof *s);
	sq_array[idx] = idx;
	__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
	return s;
}

static unsigned long long uring(void)
{
	static char bufs[BATCH][BUFSZ];
	unsigned long long bytes = 0;
	for (size_t at = 0; at < count; at += BATCH) {
		unsigned n = count - at < BATCH ? (unsigned)(count - at) : BATCH;
		for (unsigned j = 0; j < n; j++) {
			struct io_uring_sqe *s = sqe_next();
			s->opcode = IORING_OP_OPENAT;
			s->fd = dir;
			s->addr = (unsigned long)names[at + j];
			s->open_flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;   /* direct: no O_CLOEXEC */
			s->file_index = j + 1;
			s->flags = IOSQE_IO_LINK;
			s->user_data = 0;
			s = sqe_next();
			s->opcode = IORING_OP_READ;
			s->fd = (int)j;
			s->addr = (unsigned long)bufs[j];
			s->len = BUFSZ;
			s->flags = IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;   /* a short read must not cancel the close */
			s->user_data = 1;
			s = sqe_next();
			s->opcode = IORING_OP_CLOSE;
			s->file_index = j + 1;
			s->user_data = 2;
		}
		unsigned want = n * 3, seen = 0;
		if (syscall(__NR_io_uring_enter, ring_fd, want, want, IORING_ENTER_GETEVENTS,
			    NULL, 0) < 0)
			die("io_uring_enter");
		while (seen < want) {
			unsigned head = *cq_head;
			unsigned tail = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);
			if (head == tail) {
				if (syscall(__NR_io_uring_enter, ring_fd, 0, 1,
					    IORING_ENTER_GETEVENTS, NULL, 0) < 0)
					die("io_uring_enter");
				continue;
			}
			for (; head != tail; head++, seen++) {
				struct io_uring_cqe *c = &cqes[head & *cq_mask];
				if (c->res < 0) {
					errno = -c->res;
					die(c->user_data == 0 ? "uring openat" :
					    c->user_data == 1 ? "uring read" : "uring close");
				}
				if (c->user_data == 1)
					bytes += (unsigned long long)c->res;
			}
			__atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
		}
	}
	return bytes;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: listfloor 1|2|2b|uring DIR\n");
		return 64;
	}
	dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		die(argv[2]);
	unsigned long long bytes;
	if (strcmp(argv[1], "uring") == 0) {
		if (uring_init() < 0) {
			fprintf(stderr, "listfloor: io_uring unavailable: %s\n", strerror(errno));
			return 1;
		}
		list();
		bytes = uring();
	} else {
		list();
		int batched = strcmp(argv[1], "2b") == 0;
		bytes = threads(batched || strcmp(argv[1], "2") == 0 ? 2 : 1, batched);
	}
	printf("%zu %llu\n", count, bytes);
	return 0;
}
