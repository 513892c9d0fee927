#include "outfile.h"
#include "atomic.h"
#include "msg.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* ".BASE." plus six random alphanumerics, BASE cut so the name fits
 * NAME_MAX; O_EXCL retries a collision, so a generator seeded from the
 * clock and the pid is enough. */
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
	buf_addc(name, '.');
	buf_add(name, base, strnlen(base, NAME_MAX - 8));
	buf_addc(name, '.');
	for (int i = 0; i < 6; i++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		buf_addc(name, alnum[state % (sizeof alnum - 1)]);
	}
}

/* The new file keeps what the old one had: its mode, and its group where
 * we may give it (a member of that group, or root). */
static int keep_mode(int fd, const struct stat *old)
{
	int rc;
	do
		rc = fchmod(fd, old->st_mode & 07777);
	while (rc < 0 && errno == EINTR);
	if (rc == 0 && fchown(fd, (uid_t)-1, old->st_gid) < 0 && errno != EPERM)
		rc = -1;
	return rc;
}

int outfile_write(const char *path, const char *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;   /* with the '/' */
	char *dir = slash ? xstrndup(path, dirlen) : xstrdup(".");
	struct buf tmp = {0}, shown = {0};
	struct stat old;
	int dfd = -1, fd = -1, rc = 0, err, exists;

	if (!*base) {
		rc = fail(EXIT_CANTCREAT, NULL, "cannot write %s: %s", path, strerror(EISDIR));
		goto out;
	}
	do
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (dfd < 0 && errno == EINTR);
	if (dfd < 0) {
		err = errno;
		rc = fail(exit_for_create(err), NULL, "cannot write %s: open directory %s: %s",
			  path, dir, strerror(err));
		goto out;
	}
	/* Replace a file, never a directory, device or symlink (such as
	 * /dev/stdout: root could otherwise turn it into a file). */
	exists = fstatat(dfd, base, &old, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && !S_ISREG(old.st_mode)) {
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
		rc = fail(exit_for_create(err), NULL, "cannot write %s: create %s: %s",
			  path, shown.data, strerror(err));
		goto out;
	}
	if (exists && keep_mode(fd, &old) < 0) {
		rc = fail_errno(errno, NULL, "cannot write %s: chmod %s", path, shown.data);
		close_fd(fd);
		if (unlinkat(dfd, tmp.data, 0) < 0 && errno != ENOENT)
			warn(NULL, "cannot remove %s: %s", shown.data, strerror(errno));
		goto out;
	}
	struct atomic_failure f;
	if (atomic_replace(dfd, fd, tmp.data, base, data, len, &f) == 0)
		goto out;
	if (f.tmp_err)
		warn(NULL, "cannot remove %s: %s", shown.data, strerror(f.tmp_err));
	if (strcmp(f.step, "fsync directory") == 0)
		rc = fail(EXIT_IO, NULL, "fsync %s: %s (%s is in place but may not be durable)",
			  dir, strerror(f.err), path);
	else if (strcmp(f.step, "rename") == 0)
		rc = fail(exit_for_create(f.err), NULL, "cannot write %s: rename %s: %s",
			  path, shown.data, strerror(f.err));
	else
		rc = fail_errno(f.err, NULL, "cannot write %s: %s %s", path, f.step, shown.data);
out:
	if (dfd >= 0)
		close_fd(dfd);
	free(dir);
	buf_free(&tmp);
	buf_free(&shown);
	return rc;
}
