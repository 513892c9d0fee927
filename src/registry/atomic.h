/* atomic: replace a file in one step (SPEC §4) — records, histories
 * (registry.c) and -o files (outfile.c): write a temp file, fsync it,
 * rename it onto the name, fsync the directory.  A reader sees the old
 * file or the new one, whole; a crash at any instant leaves one of them.
 * The caller names and makes the temp file (a record's under its job
 * lock, an -o file's with a random name: nothing locks it).  No messages. */
#ifndef JOBREG_ATOMIC_H
#define JOBREG_ATOMIC_H

#include <stddef.h>

struct atomic_failure {
	const char *step;   /* "write", "fsync", "close", "rename", or
			     * "fsync directory" (after the rename) */
	int err;            /* its errno */
	int tmp_err;        /* TMP could not be removed after the failure:
			     * why (else 0) */
};

/* FD is open for writing on TMP, a new file in the directory DIRFD.  Write
 * LEN bytes of DATA to it, fsync and close it, rename TMP onto NAME, and
 * fsync the directory.  Returns 0, or -1 with *F filled in: a failure
 * before the rename has removed TMP (unless F->tmp_err) and left NAME as
 * it was; a failed fsync of the directory leaves NAME the new file, which
 * may not be durable.  FD is closed in every case. */
int atomic_replace(int dirfd, int fd, const char *tmp, const char *name,
		   const char *data, size_t len, struct atomic_failure *f);
/* The same for a temp file FD already holds what it should: fsync, close,
 * rename, fsync of the directory. */
int atomic_commit(int dirfd, int fd, const char *tmp, const char *name,
		  struct atomic_failure *f);

#endif
