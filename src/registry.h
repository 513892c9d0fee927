/* registry: the directory of records (SPEC §1, §4, §6) — paths, locks with
 * bounded waits, and the atomic, durable replace.  Every entry is opened
 * relative to the directory with O_NOFOLLOW and must be a regular file
 * (else 77).  In a group-writable directory every file created is made
 * group-readable and -writable; existing lock files are opened without
 * O_CREAT (fs.protected_regular); exclusive locks are taken on read-write
 * descriptors where allowed (NFS).  Operations that meet ESTALE are tried
 * again a few times.  Functions return an exit status (0 on success)
 * after printing any error.  Opening one entry safely lives in entry.c,
 * reading the directory in listing.c. */
#ifndef JOBREG_REGISTRY_H
#define JOBREG_REGISTRY_H

#include <stddef.h>
#include <sys/types.h>

#include "sys.h"

struct registry {
	int fd;             /* -1: it does not exist (read-only use) */
	char *path;
	mode_t share_mode;  /* mode of the files we create in a group-writable
			     * registry, or 0: as created (0666 & ~umask) */
};

enum lock_kind { JOB_LOCK, RUN_LOCK };

/* Flags of reg_lock(). */
enum {
	LOCK_CREATE = 1,      /* create the lock file if missing */
	LOCK_QUIET_BUSY = 2,  /* a busy lock returns 75 without a message */
	LOCK_NO_RECHECK = 4   /* no re-check of the name: the run lock taken
			       * holding the job lock by a clear (see tidy.c),
			       * or a reader's probe (see state.c) */
};

/* Open PATH; with CREATE make it and its parents (mode 0777 & ~umask).
 * A writer that cannot make it exits 73; permission is 77. */
int reg_open(struct registry *reg, const char *path, int create);
void reg_close(struct registry *reg);
/* The directory PATH as a registry descriptor (EINTR and ESTALE retried),
 * printing nothing; -1 with errno. */
int reg_open_dir(const char *path);

/* ".JOB.lock" or ".JOB.run", malloc'd. */
char *reg_lock_name(const char *job, enum lock_kind kind);

/* "DIR/NAME" for messages (static storage, valid until the next call). */
const char *reg_path(const struct registry *reg, const char *name);

/* Read the record of JOB into DATA.  *found is 0 when there is none. */
int reg_read(const struct registry *reg, const char *job, struct buf *data, int *found);

/* Lock JOB's job or run lock with OP (LOCK_EX or LOCK_SH), waiting at most
 * WAIT seconds (< 0: no limit).  *fd is the locked descriptor, or -1 when
 * the file does not exist and LOCK_CREATE was not given.  A lock file is
 * not created for a record that is not a regular file (77).  Once locked,
 * the path is re-checked to name the inode held; a lock on a removed file
 * is dropped and taken again. */
int reg_lock(const struct registry *reg, const char *job, enum lock_kind kind,
	     int op, double wait, int flags, int *fd);
/* reg_lock(), and the inode locked in *ino: for a busy lock (75), the
 * inode found busy; 0 when the file does not exist. */
int reg_lock_ino(const struct registry *reg, const char *job, enum lock_kind kind,
		 int op, double wait, int flags, int *fd, unsigned long long *ino);
void reg_unlock(int *fd);

/* Replace JOB's record with DATA: DIR/.JOB.tmp (a leftover of that name
 * is unlinked first), fsync, renameat, fsync of the directory.  Call with
 * the job lock held.  DATA over RECORD_MAX is
 * refused (74, EFBIG): it would read back as corrupt. */
int reg_replace(const struct registry *reg, const char *job, const char *data, size_t len);
/* Remove JOB's record and, with SYNC, fsync the directory.  Job lock
 * held.  A sweep of many records removes them all, then calls reg_sync()
 * once. */
int reg_remove(const struct registry *reg, const char *job, int sync);
int reg_sync(const struct registry *reg, const char *job);
/* The entries of the directory: jobs with a record (sorted), whether the
 * directory entry of each says it is a regular file (regular[i]; d_type,
 * 0 also when it does not tell), names of temp files (".X.tmp", and 0.1's
 * ".X.tmp.XXXXXX") and of run locks (".X.run").  Only jobs is sorted. */
struct listing {
	char **jobs;
	size_t njobs;
	unsigned char *regular;
	char **temps;
	size_t ntemps;
	char **runs;
	size_t nruns;
};
int reg_list(const struct registry *reg, struct listing *l);
/* The same, with jobs in the directory's order, ADDED (if not NULL) told
 * of each job as it is found (NAME is l->jobs[i], in order); then the
 * order by id as indices into jobs (malloc'd), so that a reader can start
 * on the records before the listing and the sort are done. */
typedef void listing_hook(void *ctx, const char *name, int regular);
int reg_list_unsorted(const struct registry *reg, struct listing *l, listing_hook *added,
		      void *ctx);
size_t *listing_order(const struct listing *l);
void listing_free(struct listing *l);

/* Unlink NAME, a leftover temp file of JOB (never opened or followed).
 * Job lock held.  A failure is only warned of. */
void reg_remove_leftover(const struct registry *reg, const char *job, const char *name);
/* Remove JOB's leftover temp file, exactly ".JOB.tmp", whether there is
 * one or not (no directory is read).  Job lock held.  reg_replace()
 * removes a leftover itself: writers need not call this first. */
int reg_sweep(const struct registry *reg, const char *job);

#endif
