#include "outfile.h"
#include "cli.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The exit status for a file that could not be made. */
static int create_exit(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return EXIT_PERM;
	case ENOENT:
	case ENOTDIR:
	case EISDIR:
	case EROFS:
	case ELOOP:
	case ENAMETOOLONG:
	case EEXIST:
		return EXIT_CANTCREAT;
	default:
		return EXIT_IO;
	}
}

/* ".BASE." plus six random alphanumerics; O_EXCL retries a collision, so
 * a generator seeded from the clock and the pid is enough. */
static void temp_name(struct buf *name, const char *base)
{
	static const char alnum[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned long long state;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	state ^= (unsigned long long)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		 (unsigned long long)ts.tv_sec ^ ((unsigned long long)getpid() << 32);
	buf_reset(name);
	buf_addf(name, ".%s.", base);
	for (int i = 0; i < 6; i++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		buf_addc(name, alnum[state % (sizeof alnum - 1)]);
	}
}

int outfile_write(const char *path, const char *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;   /* with the '/' */
	char *dir = slash ? xstrndup(path, dirlen) : xstrdup(".");
	struct buf tmp = {0}, shown = {0};
	int dfd = -1, fd = -1, rc = 0, err;

	if (!*base) {
		rc = fail(EXIT_CANTCREAT, NULL, "cannot write %s: %s", path, strerror(EISDIR));
		goto out;
	}
	do
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (dfd < 0 && errno == EINTR);
	if (dfd < 0) {
		err = errno;
		rc = fail(create_exit(err), NULL, "cannot write %s: open directory %s: %s",
			  path, dir, strerror(err));
		goto out;
	}
	/* Replace a file, never a directory, device or symlink (such as
	 * /dev/stdout: root could otherwise turn it into a file). */
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		rc = fail(EXIT_CANTCREAT, NULL, "cannot write %s: not a regular file", path);
		goto out;
	}
	for (int tries = 0; tries < 100; tries++) {
		temp_name(&tmp, base);
		do
			fd = openat(dfd, tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	buf_add(&shown, path, dirlen);
	buf_adds(&shown, tmp.data);
	if (fd < 0) {
		err = errno;
		rc = fail(create_exit(err), NULL, "cannot write %s: create %s: %s",
			  path, shown.data, strerror(err));
		goto out;
	}
	/* Any failure before the rename leaves PATH as it was. */
	if (write_full(fd, data, len) < 0) {
		rc = fail_errno(errno, NULL, "cannot write %s: write %s", path, shown.data);
		goto discard;
	}
	if (fsync_retry(fd) < 0) {
		rc = fail_errno(errno, NULL, "cannot write %s: fsync %s", path, shown.data);
		goto discard;
	}
	err = close_fd(fd) < 0 ? errno : 0;
	fd = -1;
	if (err) {
		rc = fail_errno(err, NULL, "cannot write %s: close %s", path, shown.data);
		goto discard;
	}
	if (renameat(dfd, tmp.data, dfd, base) < 0) {
		err = errno;
		rc = fail(create_exit(err), NULL, "cannot write %s: rename %s: %s",
			  path, shown.data, strerror(err));
		goto discard;
	}
	if (fsync_retry(dfd) < 0)
		rc = fail(EXIT_IO, NULL, "fsync %s: %s (%s is in place but may not be durable)",
			  dir, strerror(errno), path);
	goto out;
discard:
	if (fd >= 0)
		close_fd(fd);
	if (unlinkat(dfd, tmp.data, 0) < 0 && errno != ENOENT)
		warn(NULL, "cannot remove %s: %s", shown.data, strerror(errno));
out:
	if (dfd >= 0)
		close_fd(dfd);
	free(dir);
	buf_free(&tmp);
	buf_free(&shown);
	return rc;
}
