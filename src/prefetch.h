/* prefetch: the first read of many records at once, for `jobreg-get -a`.
 * A helper thread reads two of every three listed records ahead of the
 * caller (openat, one read(2) of RECORD_MAX + 1 bytes, close: no fstat, the
 * listing's d_type said regular), and prefetch_get() reads the others
 * itself, so the two cores share the system calls while the caller parses
 * and prints in order.  Only a plain result is handed out: anything else
 * (an error, ESTALE included, a vanished file, 0 bytes, a record over the
 * limit, a listed entry not known to be regular) gives NULL, and the
 * caller reads that record the ordinary way, through reg_read(), with its
 * fstat, retries and messages.  Whatever is handed out is only a first
 * read: liveness and its confirming re-reads stay the caller's.  No
 * messages; if no thread can be started, every record is read inline. */
#ifndef JOBREG_PREFETCH_H
#define JOBREG_PREFETCH_H

#include <stddef.h>

struct prefetch;

/* Start reading NAMES[0..N) of the directory DIRFD; REGULAR[i] not 0 when
 * the listing says NAMES[i] is a regular file. */
struct prefetch *prefetch_start(int dirfd, char *const *names, const unsigned char *regular,
				size_t n);
/* The bytes of record I (NUL-terminated, valid until prefetch_end()) and
 * their length in *len, or NULL.  Ask for each I once, in increasing order. */
const char *prefetch_get(struct prefetch *p, size_t i, size_t *len);
void prefetch_end(struct prefetch *p);

#endif
