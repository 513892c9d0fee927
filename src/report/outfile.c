#include "report/outfile.h"
#include "registry/atomic.h"
#include "util/msg.h"
#include "util/sys.h"

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

int outfile_open(struct outfile *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;   /* with the '/' */
	struct stat old;
	int exists, err;

	memset(o, 0, sizeof *o);
	o->dfd = o->fd = -1;
	o->path = path;
	o->base = base;
	o->dir = slash ? xstrndup(path, dirlen) : xstrdup(".");
	if (!*base)
		return fail(EXIT_CANTCREAT, NULL, "cannot write %s: %s", path, strerror(EISDIR));
	do
		o->dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (o->dfd < 0 && errno == EINTR);
	if (o->dfd < 0) {
		err = errno;
		return fail(exit_for_create(err), NULL, "cannot write %s: open directory %s: %s",
			    path, o->dir, strerror(err));
	}
	/* Replace a file, never a directory, device or symlink (such as
	 * /dev/stdout: root could otherwise turn it into a file). */
	exists = fstatat(o->dfd, base, &old, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && !S_ISREG(old.st_mode))
		return fail(EXIT_CANTCREAT, NULL, "cannot write %s: not a regular file", path);
	for (int tries = 0; tries < 100; tries++) {
		temp_name(&o->tmp, base);
		do
			o->fd = openat(o->dfd, o->tmp.data,
				       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		while (o->fd < 0 && errno == EINTR);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	buf_add(&o->shown, path, dirlen);
	buf_adds(&o->shown, o->tmp.data);
	if (o->fd < 0) {
		err = errno;
		return fail(exit_for_create(err), NULL, "cannot write %s: create %s: %s",
			    path, o->shown.data, strerror(err));
	}
	if (exists && keep_mode(o->fd, &old) < 0) {
		o->err = errno;
		o->step = "chmod";
	}
	return 0;
}

void outfile_add(struct outfile *o, const char *data, size_t len)
{
	if (!o->err && o->fd >= 0 && write_full(o->fd, data, len) < 0) {
		o->err = errno;
		o->step = "write";
	}
}

int outfile_close(struct outfile *o, int failed)
{
	int rc = 0;
	if (o->fd >= 0 && (failed || o->err)) {
		if (o->err)
			rc = fail_errno(o->err, NULL, "cannot write %s: %s %s", o->path, o->step,
					o->shown.data);
		/* The temp file goes: FILE stays as it was. */
		close_fd(o->fd);
		if (unlinkat(o->dfd, o->tmp.data, 0) < 0 && errno != ENOENT)
			warn(NULL, "cannot remove %s: %s", o->shown.data, strerror(errno));
	} else if (o->fd >= 0) {
		struct atomic_failure f;
		int fd = o->fd;
		o->fd = -1;
		if (atomic_commit(o->dfd, fd, o->tmp.data, o->base, &f) < 0) {
			if (f.tmp_err)
				warn(NULL, "cannot remove %s: %s", o->shown.data, strerror(f.tmp_err));
			if (strcmp(f.step, "fsync directory") == 0)
				rc = fail(EXIT_IO, NULL, "fsync %s: %s (%s is in place but may not be durable)",
					  o->dir, strerror(f.err), o->path);
			else if (strcmp(f.step, "rename") == 0)
				rc = fail(exit_for_create(f.err), NULL, "cannot write %s: rename %s: %s",
					  o->path, o->shown.data, strerror(f.err));
			else
				rc = fail_errno(f.err, NULL, "cannot write %s: %s %s", o->path, f.step,
						o->shown.data);
		}
	}
	if (o->dfd >= 0)
		close_fd(o->dfd);
	free(o->dir);
	buf_free(&o->tmp);
	buf_free(&o->shown);
	memset(o, 0, sizeof *o);
	o->dfd = o->fd = -1;
	return rc;
}
