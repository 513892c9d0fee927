/* sys: the thin layer over libc: complete reads and writes that retry
 * EINTR, checked allocation, strings, a growable buffer, the clock. */
#ifndef JOBREG_SYS_H
#define JOBREG_SYS_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* A growable byte string, always NUL-terminated once anything was added. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void *xmalloc(size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t len);
/* Are A and B equal strings, or both NULL? */
int same_string(const char *a, const char *b);

void buf_add(struct buf *b, const char *data, size_t len);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void buf_reset(struct buf *b);
void buf_free(struct buf *b);

/* Read until LEN bytes or end of file; returns the count, or -1. */
ssize_t read_full(int fd, void *data, size_t len);
/* Write all LEN bytes, waiting on a non-blocking FD; returns 0, or -1. */
int write_full(int fd, const void *data, size_t len);
/* Write all LEN bytes at offset AT (pwrite(2)); returns 0, or -1. */
int pwrite_full(int fd, const void *data, size_t len, off_t at);
/* FD's content made DATA in place: written over from offset 0, then cut
 * to LEN (never empty between the two); returns 0, or -1. */
int rewrite_full(int fd, const void *data, size_t len);
/* fsync(2), retried after EINTR; returns 0, or -1. */
int fsync_retry(int fd);
/* close(2) that treats EINTR as done (Linux always releases the fd). */
int close_fd(int fd);

/* The N > 0 bytes at S, all digits, as a number at most MAX: 0 with
 * *VALUE; else -1.  Every decimal field of jobreg's input is read here. */
int parse_digits(const char *s, size_t n, unsigned long long max, unsigned long long *value);

/* Wall-clock now, in whole seconds and as a double. */
time_t now_seconds(void);
double now_real(void);
/* Monotonic seconds, for deadlines. */
double now_mono(void);
/* The earlier of two times, either < 0 meaning none (then the other). */
double earliest(double a, double b);

/* PATH made absolute, "." and empty components dropped; ".." and symlinks
 * kept, so the name is the user's.  Malloc'd; NULL with errno if the
 * working directory cannot be found. */
char *path_absolute(const char *path);

#endif
