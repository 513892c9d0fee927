#include "util/sys.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void out_of_memory(void)
{
	static const char msg[] = "jobreg: out of memory\n";
	(void)!write(2, msg, sizeof msg - 1);
	_exit(74);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrndup(const char *s, size_t len)
{
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

int same_string(const char *a, const char *b)
{
	return a ? b && strcmp(a, b) == 0 : !b;
}

static void buf_grow(struct buf *b, size_t more)
{
	if (more >= (size_t)-1 - b->len)
		out_of_memory();
	if (b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1) {
		if (cap > (size_t)-1 / 2)
			out_of_memory();
		cap *= 2;
	}
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_add(struct buf *b, const char *data, size_t len)
{
	buf_grow(b, len);
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	char small[256];
	va_list copy;
	va_copy(copy, ap);
	/* clang-analyzer 14 misreads the va_copy just above as missing. */
	int n = vsnprintf(small, sizeof small, fmt, copy); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(copy);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		buf_add(b, small, (size_t)n);
		return;
	}
	buf_grow(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	*b = (struct buf){0};
}

ssize_t read_full(int fd, void *data, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)data + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* With pwrite(2) at offset AT when AT >= 0. */
static int write_all(int fd, const char *data, size_t len, off_t at)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	size_t done = 0;
	while (done < len) {
		ssize_t n = at < 0 ? write(fd, data + done, len - done)
				   : pwrite(fd, data + done, len - done, at + (off_t)done);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* a non-blocking descriptor (one we were given): wait */
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return -1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

int write_full(int fd, const void *data, size_t len)
{
	return write_all(fd, data, len, -1);
}

int pwrite_full(int fd, const void *data, size_t len, off_t at)
{
	return write_all(fd, data, len, at);
}

int rewrite_full(int fd, const void *data, size_t len)
{
	int rc;
	if (write_all(fd, data, len, 0) < 0)
		return -1;
	do
		rc = ftruncate(fd, (off_t)len);
	while (rc < 0 && errno == EINTR);
	return rc;
}

int fsync_retry(int fd)
{
	int rc;
	do
		rc = fsync(fd);
	while (rc < 0 && errno == EINTR);
	return rc;
}

int close_fd(int fd)
{
	if (close(fd) < 0 && errno != EINTR)
		return -1;
	return 0;
}

int parse_digits(const char *s, size_t n, unsigned long long max, unsigned long long *value)
{
	unsigned long long v = 0;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (s[i] < '0' || s[i] > '9' || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*value = v;
	return 0;
}

time_t now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

double now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double earliest(double a, double b)
{
	return a < 0 ? b : b < 0 || a < b ? a : b;
}

double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *path_absolute(const char *path)
{
	struct buf abs = {0};
	if (path[0] != '/') {
		size_t size = 256;
		char *cwd = NULL;
		for (;;) {
			cwd = xrealloc(cwd, size);
			if (getcwd(cwd, size))
				break;
			if (errno != ERANGE) {
				free(cwd);
				return NULL;
			}
			size *= 2;
		}
		if (strcmp(cwd, "/") != 0)   /* the root: "/x", not "//x" */
			buf_adds(&abs, cwd);
		free(cwd);
	}
	/* Join the components, dropping "." and empty ones. */
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n && !(n == 1 && p[0] == '.')) {
			buf_addc(&abs, '/');
			buf_add(&abs, p, n);
		}
		p += n;
		p += strspn(p, "/");
	}
	if (!abs.len)
		buf_addc(&abs, '/');
	return abs.data;
}
