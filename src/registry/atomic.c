#include "registry/atomic.h"
#include "util/sys.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* A failure before the rename: NAME is as it was; the temp file goes. */
static int undo(int dirfd, int fd, const char *tmp, struct atomic_failure *f)
{
	f->err = errno;
	if (fd >= 0)
		close_fd(fd);
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		f->tmp_err = errno;
	errno = f->err;
	return -1;
}

int atomic_commit(int dirfd, int fd, const char *tmp, const char *name,
		  struct atomic_failure *f)
{
	f->tmp_err = 0;
	f->step = "fsync";
	if (fsync_retry(fd) == 0) {
		f->step = "close";
		int rc = close_fd(fd);
		fd = -1;
		f->step = "rename";
		if (rc == 0 && renameat(dirfd, tmp, dirfd, name) == 0) {
			f->step = "fsync directory";
			if (fsync_retry(dirfd) == 0)
				return 0;
			f->err = errno;
			return -1;
		}
		if (rc < 0)
			f->step = "close";
	}
	return undo(dirfd, fd, tmp, f);
}

int atomic_replace(int dirfd, int fd, const char *tmp, const char *name,
		   const char *data, size_t len, struct atomic_failure *f)
{
	if (write_full(fd, data, len) == 0)
		return atomic_commit(dirfd, fd, tmp, name, f);
	f->step = "write";
	f->tmp_err = 0;
	return undo(dirfd, fd, tmp, f);
}
