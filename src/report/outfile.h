/* outfile: a command's whole output to FILE atomically (-o), so a reader
 * such as node_exporter's textfile collector sees the old file or the new
 * one, never a part (atomic.h).  The temp file ".NAME.XXXXXX" is made
 * O_EXCL in FILE's directory (NAME cut to fit NAME_MAX; not ending in
 * ".prom", so the collector skips it).  A new FILE gets 0666 & ~umask; a
 * replaced one keeps its mode, and its group where we may give it.  An
 * existing FILE must be a regular file: a symlink, directory or device
 * (/dev/stdout) is refused.  On any failure the temp file goes, FILE as it was.
 *
 * Returns 0, or an exit status after printing one line: 73 cannot create
 * there (no such directory, not a regular file, a read-only file system),
 * 77 permission denied, 74 an I/O error. */
#ifndef JOBREG_OUTFILE_H
#define JOBREG_OUTFILE_H

#include <stddef.h>

#include "util/sys.h"

struct outfile {
	const char *path, *base;
	char *dir;
	int dfd, fd;          /* FILE's directory, the temp file */
	struct buf tmp, shown; /* the temp file's name, and its path */
	int err;              /* the first failure of a write, and its step */
	const char *step;
};

/* Make the temp file for PATH (with the mode and group of a PATH it will
 * replace).  Returns an exit status; either way call outfile_close(). */
int outfile_open(struct outfile *o, const char *path);
/* Append LEN bytes (a failure is kept for outfile_close()). */
void outfile_add(struct outfile *o, const char *data, size_t len);
/* Rename the temp file onto PATH (fsync, rename, fsync of the directory),
 * or with FAILED (or after a failed write) remove it, PATH as it was.
 * Returns an exit status. */
int outfile_close(struct outfile *o, int failed);

#endif
