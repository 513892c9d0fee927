#include "registry/openat.h"
#include "util/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int estale_again(int *tries)
{
	return errno == ESTALE && ++*tries < STALE_TRIES;
}

int entry_open(int dir, const char *name, int flags, int *fd, struct stat *st)
{
	int tries = 0;
	for (;;) {
		*fd = openat(dir, name, flags | ENTRY_FLAGS, 0666);
		if (*fd < 0) {
			if (errno == EINTR || estale_again(&tries))
				continue;
			/* ELOOP is O_NOFOLLOW refusing a symlink; a directory
			 * opened for writing or O_CREAT is EISDIR, a socket
			 * ENXIO. */
			if (errno == ELOOP || errno == EISDIR || errno == ENXIO)
				return ENTRY_NOT_REGULAR;
			return -1;
		}
		if (fstat(*fd, st) < 0) {
			int err = errno;
			close_fd(*fd);
			*fd = -1;
			errno = err;
			if (estale_again(&tries))
				continue;
			return -1;
		}
		if (S_ISREG(st->st_mode))
			return 0;
		close_fd(*fd);
		*fd = -1;
		return ENTRY_NOT_REGULAR;
	}
}

mode_t entry_share_mode(mode_t dir_mode)
{
	if (!(dir_mode & S_IWGRP))
		return 0;
	mode_t mask = umask(0);
	umask(mask);
	mode_t plain = 0666 & ~mask;
	mode_t shared = plain | S_IRGRP | S_IWGRP;
	return shared != plain ? shared : 0;
}

int entry_share(int fd, mode_t mode)
{
	int rc = 0;
	if (mode)
		do
			rc = fchmod(fd, mode);
		while (rc < 0 && errno == EINTR);
	return rc;
}
