/* registry: the directory of records (SPEC §1, §4, §6) — opening it,
 * names, reading a record, replacing or removing one.  Every entry must be
 * a regular file (else 77).  Functions return an exit status after
 * printing any error. */
#ifndef JOBREG_REGISTRY_H
#define JOBREG_REGISTRY_H

#include <stddef.h>
#include <sys/types.h>

#include "record/record.h"
#include "util/sys.h"

struct registry {
	int fd;             /* -1: it does not exist (read-only use) */
	char *path;
	dev_t dev;          /* of the directory fd is open on */
	ino_t ino;
	mode_t share_mode;  /* of the files we create (entry_share_mode()) */
};

/* The job lock, the run lock, the coalescing waiter's (SPEC §5a), and a
 * notifier's claim (§5c). */
enum lock_kind { JOB_LOCK, RUN_LOCK, COALESCE_LOCK, NOTIFY_LOCK };

/* Open PATH; with CREATE make it and its parents (mode 0777 & ~umask):
 * 73 when it cannot be made, 77 for permission. */
int reg_open(struct registry *reg, const char *path, int create);
void reg_close(struct registry *reg);
/* Does REG's path still name the directory REG has open (or, for a
 * registry that did not exist, still none)?  1 yes, 0 no. */
int reg_same(const struct registry *reg);
/* Follow the name (SPEC §5): when the path names another directory now,
 * or none, open what it names (CREATE as reg_open()).  An exit status. */
int reg_follow(struct registry *reg, int create);

/* ".JOB.lock", ".JOB.run", ".JOB.tmp": JOB's file SUFFIX, malloc'd. */
char *reg_dot_name(const char *job, const char *suffix);
char *reg_lock_name(const char *job, enum lock_kind kind);
/* The other way: JOB (malloc'd) when NAME is ".JOB" SUFFIX, with NUMBERED
 * followed by digits, and JOB a job id; else NULL. */
char *reg_dot_job(const char *name, const char *suffix, int numbered);

/* "not a regular file: DIR/NAME" for JOB; returns 77. */
int reg_not_regular(const struct registry *reg, const char *job, const char *name);
/* "cannot write to registry DIR: strerror(ERR)" for JOB, when a lock or
 * temp file could not be made: the user mends the registry, not a file
 * it never named.  Returns ERR's exit status. */
int reg_cannot_write(const struct registry *reg, const char *job, int err);

/* "DIR/NAME" for messages (static storage, valid until the next call). */
const char *reg_path(const struct registry *reg, const char *name);

/* Read JOB's file NAME (the record: JOB) into DATA, at most MAX + 1
 * bytes (a file over MAX shows as longer).  *found 0: none.  An entry
 * that is not a regular file is refused (77). */
int reg_read(const struct registry *reg, const char *job, const char *name, size_t max,
	     struct buf *data, int *found);
/* Read JOB's record into REC, to be freed: *found 0 when there is none,
 * or it does not parse (REC empty).  An exit status of the read. */
int reg_read_record(const struct registry *reg, const char *job, struct record *rec,
		    int *found);

/* Job lock held: replace JOB's file NAME (the record: NAME is JOB) with
 * DATA through DIR/.JOB.tmp (atomic.h).  A record over RECORD_MAX is
 * refused (74, EFBIG): it would read back as corrupt. */
int reg_replace(const struct registry *reg, const char *job, const char *name,
		const char *data, size_t len);
/* Job lock held: remove JOB's record; with SYNC, fsync the directory (a
 * sweep calls reg_sync() once after removing them all). */
int reg_remove(const struct registry *reg, const char *job, int sync);
int reg_sync(const struct registry *reg, const char *job);
/* Job lock held: unlink NAME, JOB's leftover (never opened or followed).
 * A failure is only warned of. */
void reg_remove_leftover(const struct registry *reg, const char *job, const char *name);

#endif
