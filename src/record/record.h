/* record: one job's record (SPEC §3), parsed and formatted.  Memory only,
 * no I/O; jobreg-get's output formats are format.h's. */
#ifndef JOBREG_RECORD_H
#define JOBREG_RECORD_H

#include <stddef.h>
#include <time.h>

#include "util/rfc3339.h"
#include "record/status.h"
#include "util/sys.h"

#define RECORD_MAX 65536   /* a larger file is corrupt */
/* A counter is at most 2^63-1: larger is corrupt, and none counts past it
 * (SPEC §5a). */
#define COUNTER_MAX 9223372036854775807ULL

/* A job id (SPEC §1): 1-128 bytes of [A-Za-z0-9._@+-], no leading . or -.
 * Here, below the registry, so that a record's lists of jobs (after=) are
 * checked where the record is. */
#define JOB_ID_MAX 128
int valid_job_id(const char *id);
/* The ASCII letters and digits (a set for strspn(3)). */
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

struct field {
	char *key;
	char *value;
	unsigned char owned;    /* OWN_KEY | OWN_VALUE: malloc'd, not in text */
	unsigned char rank;     /* place in the SPEC §3 key order (record.c) */
};
enum { OWN_KEY = 1, OWN_VALUE = 2 };

struct record {
	struct field *fields;
	size_t count;
	size_t cap;
	char *text;             /* the parsed bytes, split in place */
};

void record_init(struct record *r);
void record_free(struct record *r);

/* Parse LEN bytes.  Returns 0, or -1 with *why set to a static reason
 * (the record is then corrupt and R holds nothing). */
int record_parse(struct record *r, const char *data, size_t len, const char **why);
/* The same with no status needed (the registry's pause, pause.h). */
int record_parse_settings(struct record *r, const char *data, size_t len, const char **why);

const char *record_get(const struct record *r, const char *key);
/* The time KEY of R (NULL: none) into *T: 0, or -1 when it has none. */
int record_time(const struct record *r, const char *key, time_t *t);
/* A copy of SRC that owns all its strings. */
void record_copy(struct record *dst, const struct record *src);
void record_put(struct record *r, const char *key, const char *value);
/* 1 when R had KEY. */
int record_drop(struct record *r, const char *key);

/* The written status of R; PENDING for one with none yet (being built). */
enum status record_status(const struct record *r);

/* The canonical text: keys in SPEC order, unknown keys after them.
 * Returns -1 when larger than RECORD_MAX (it must not be written: it would
 * read back as corrupt), else 0. */
int record_format(const struct record *r, struct buf *out);
/* That order as indices into r->fields, into IDX (r->count entries). */
void record_order(const struct record *r, size_t *idx);

#endif
