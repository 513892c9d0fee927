/* prefetch: the first read of many records at once, for `jobreg-get -a`.
 * The caller adds the records as the listing finds them; once there are
 * a few dozen, a helper thread reads them (openat, one read(2) of
 * RECORD_MAX + 1 bytes, close: no fstat, the listing's d_type said
 * regular) while the caller goes on listing and sorting.  Then the caller
 * gives the order it will ask in, and prefetch_get() reads ahead in that
 * order itself while the record it wants is not in, so the two cores
 * share the system calls while the caller parses and prints in order.
 * Only a plain result is handed out: anything else (an error, ESTALE
 * included, a vanished file, 0 bytes, a record over the limit, a listed
 * entry not known to be regular) gives NULL, and the caller reads that
 * record the ordinary way, through reg_read(), with its fstat, retries
 * and messages.  Whatever is handed out is only a first read: liveness
 * and its confirming re-reads stay the caller's.  No messages; if no
 * thread can be started, every record is read inline. */
#ifndef JOBREG_PREFETCH_H
#define JOBREG_PREFETCH_H

#include <stddef.h>

struct prefetch;

/* Read records of the directory DIRFD, as they are added. */
struct prefetch *prefetch_start(int dirfd);
/* Add record NAME (kept by the caller until prefetch_end()); REGULAR not
 * 0 when the listing says it is a regular file.  Returns its index: 0,
 * 1, 2, ... */
size_t prefetch_add(struct prefetch *p, const char *name, int regular);
/* No more are added; ORDER (one index of each added record, kept by the
 * caller until prefetch_end()) is the order they will be asked for in. */
void prefetch_order(struct prefetch *p, const size_t *order);
/* The bytes of record I (NUL-terminated, valid until prefetch_end()) and
 * their length in *len, or NULL.  After prefetch_order(); each I once. */
const char *prefetch_get(struct prefetch *p, size_t i, size_t *len);
void prefetch_end(struct prefetch *p);

#endif
