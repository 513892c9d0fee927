#include "registry/registry.h"
#include "registry/atomic.h"
#include "registry/openat.h"
#include "util/msg.h"
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *reg_path(const struct registry *reg, const char *name)
{
	static struct buf path;
	buf_reset(&path);
	buf_adds(&path, reg->path);
	if (name) {
		buf_addc(&path, '/');
		buf_adds(&path, name);
	}
	return path.data;
}

char *reg_dot_name(const char *job, const char *suffix)
{
	struct buf name = {0};
	buf_addf(&name, ".%s%s", job, suffix);
	return name.data;
}

char *reg_lock_name(const char *job, enum lock_kind kind)
{
	static const char *const suffix[] = { [JOB_LOCK] = ".lock", [RUN_LOCK] = ".run",
					      [COALESCE_LOCK] = ".coalesce",
					      [NOTIFY_LOCK] = ".notify" };
	return reg_dot_name(job, suffix[kind]);
}

char *reg_dot_job(const char *name, const char *suffix, int numbered)
{
	size_t n = strlen(name), k = strlen(suffix);
	while (numbered && n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	if (name[0] != '.' || (numbered && !name[n]) || n < k + 1 ||
	    memcmp(name + n - k, suffix, k) != 0)
		return NULL;
	char *job = xstrndup(name + 1, n - k - 1);
	if (valid_job_id(job))
		return job;
	free(job);
	return NULL;
}

static int open_dir(const char *path)
{
	int fd, tries = 0;
	do
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && (errno == EINTR || estale_again(&tries)));
	return fd;
}

/* mkdir -p: make PATH and any missing parents. */
static int make_dirs(char *path)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	char *slash = strrchr(path, '/');
	while (slash && slash > path && slash[-1] == '/')
		slash--;
	if (!slash || slash == path)
		return -1;
	*slash = '\0';
	int rc = make_dirs(path);
	*slash = '/';
	if (rc == 0 && (mkdir(path, 0777) == 0 || errno == EEXIST))
		return 0;
	return -1;
}

/* Why a writer could not make or open the registry PATH: 73 when it
 * cannot name a directory we could create (exit_for_create(), a dangling
 * symlink in the way), 77 for permission, 74 for the rest. */
static int cannot_create(const char *path, int err)
{
	struct stat st;
	if (err == ENOENT && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return fail(EXIT_CANTCREAT, NULL,
			    "cannot create registry %s: it is a symbolic link to a missing directory",
			    path);
	if (exit_for_create(err) == EXIT_CANTCREAT)
		return fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s", path, strerror(err));
	return fail_errno(err, NULL, "open registry %s", path);
}

int reg_open(struct registry *reg, const char *path, int create)
{
	struct stat st;
	int rc;
	reg->path = xstrdup(path);
	reg->share_mode = 0;
	reg->fd = open_dir(path);
	if (reg->fd < 0 && errno == ENOENT && create) {
		if (make_dirs(reg->path) < 0) {
			rc = fail(EXIT_CANTCREAT, NULL, "cannot create registry %s: %s",
				  path, strerror(errno));
			goto failed;
		}
		reg->fd = open_dir(path);
	}
	if (reg->fd >= 0) {
		if (fstat(reg->fd, &st) == 0) {
			reg->share_mode = entry_share_mode(st.st_mode);
			reg->dev = st.st_dev;
			reg->ino = st.st_ino;
			return 0;
		}
		rc = fail_errno(errno, NULL, "stat registry %s", reg->path);
	} else if (errno == ENOENT && !create) {
		return 0;
	} else {
		rc = create ? cannot_create(path, errno) : fail_errno(errno, NULL, "open registry %s", path);
	}
failed:
	reg_close(reg);
	return rc;
}

void reg_close(struct registry *reg)
{
	if (reg->fd >= 0)
		close_fd(reg->fd);
	reg->fd = -1;
	free(reg->path);
	reg->path = NULL;
}

int reg_same(const struct registry *reg)
{
	struct stat st;
	if (stat(reg->path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? reg->fd < 0 : 1;
	return reg->fd >= 0 && st.st_dev == reg->dev && st.st_ino == reg->ino;
}

int reg_follow(struct registry *reg, int create)
{
	/* A writer makes the registry that is missing now. */
	if (reg_same(reg) && (reg->fd >= 0 || !create))
		return 0;
	char *path = xstrdup(reg->path);
	reg_close(reg);
	int rc = reg_open(reg, path, create);
	free(path);
	return rc;
}

int reg_not_regular(const struct registry *reg, const char *job, const char *name)
{
	return fail(EXIT_PERM, job, "not a regular file: %s", reg_path(reg, name));
}

int reg_cannot_write(const struct registry *reg, const char *job, int err)
{
	return fail_errno(err, job, "cannot write to registry %s", reg->path);
}

/* Read the file on FD, SIZE bytes by fstat, into DATA: at most MAX + 1
 * bytes (enough to tell it is too big).  Asked for one byte more than
 * fstat saw, a file that returns less is at its end: one read(2) usually
 * does.  -1 with errno on failure. */
static int read_entry(int fd, off_t size, size_t max, struct buf *data)
{
	size_t want = (size_t)size < max ? (size_t)size + 1 : max + 1;
	data->len = 0;
	for (;;) {
		if (data->cap < data->len + want + 1) {
			data->data = xrealloc(data->data, data->len + want + 1);
			data->cap = data->len + want + 1;
		}
		ssize_t n;
		do
			n = read(fd, data->data + data->len, want);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		data->len += (size_t)n;
		if ((size_t)n < want || data->len > max)
			break;
		/* It grew since fstat: read on, a little more each time. */
		want = data->len < max ? (max + 1 - data->len < 65536 ? max + 1 - data->len : 65536) : 1;
	}
	data->data[data->len] = '\0';
	return 0;
}

int reg_read(const struct registry *reg, const char *job, const char *name, size_t max,
	     struct buf *data, int *found)
{
	int fd = -1, tries = 0;
	*found = 0;
	buf_reset(data);
	if (reg->fd < 0)
		return 0;
	for (;;) {
		struct stat st;
		int rc = entry_open(reg->fd, name, O_RDONLY, &fd, &st);
		if (rc == ENTRY_NOT_REGULAR)
			return reg_not_regular(reg, job, name);
		if (rc < 0)
			return errno == ENOENT ? 0 : fail_errno(errno, job, "open %s", reg_path(reg, name));
		rc = read_entry(fd, st.st_size, max, data);
		int err = errno;
		close_fd(fd);
		if (rc == 0)
			break;
		errno = err;
		if (!estale_again(&tries))
			return fail_errno(err, job, "read %s", reg_path(reg, name));
	}
	*found = 1;
	return 0;
}

int reg_read_record(const struct registry *reg, const char *job, struct record *rec,
		    int *found)
{
	struct buf data = {0};
	const char *why;
	int rc = reg_read(reg, job, job, RECORD_MAX, &data, found);
	if (rc || !*found || record_parse(rec, data.data, data.len, &why) < 0) {
		record_init(rec);
		*found = 0;
	}
	buf_free(&data);
	return rc;
}

void reg_remove_leftover(const struct registry *reg, const char *job, const char *name)
{
	if (unlinkat(reg->fd, name, 0) < 0 && errno != ENOENT)
		warn(job, "cannot remove leftover %s: %s", reg_path(reg, name), strerror(errno));
}

/* Create JOB's temp file TMP afresh into *fd.  Every writer holds the job
 * lock, so an existing TMP is a crashed writer's: unlinked, never opened
 * or followed, and the create tried again. */
static int create_temp(const struct registry *reg, const char *job, const char *tmp, int *fd)
{
	struct stat st;
	for (int round = 0; round < 2; round++) {
		/* An ESTALE create is tried again already, as every open. */
		int rc = entry_open(reg->fd, tmp, O_WRONLY | O_CREAT | O_EXCL, fd, &st);
		if (rc == ENTRY_NOT_REGULAR)
			return reg_not_regular(reg, job, tmp);
		if (rc == 0)
			return 0;
		if (errno != EEXIST)
			return reg_cannot_write(reg, job, errno);
		if (unlinkat(reg->fd, tmp, 0) < 0 && errno != ENOENT)
			return errno == EISDIR ? reg_not_regular(reg, job, tmp)
					       : fail_errno(errno, job, "remove leftover %s", reg_path(reg, tmp));
	}
	/* EEXIST again: someone writes without the lock. */
	return fail_errno(EEXIST, job, "create %s", reg_path(reg, tmp));
}

int reg_replace(const struct registry *reg, const char *job, const char *name,
		const char *data, size_t len)
{
	int is_record = strcmp(name, job) == 0, rc, fd, tries = 0;
	if (is_record && len > RECORD_MAX)
		return fail(EXIT_IO, job, "the new record would be %zu bytes, over the %d-byte limit: %s",
			    len, RECORD_MAX, strerror(EFBIG));
	char *tmp = reg_dot_name(job, ".tmp");
	for (;;) {
		if ((rc = create_temp(reg, job, tmp, &fd)) != 0)
			break;
		if (entry_share(fd, reg->share_mode) < 0) {
			int err = errno;
			close_fd(fd);
			rc = fail_errno(err, job, "chmod %s", reg_path(reg, tmp));
			reg_remove_leftover(reg, job, tmp);
			break;
		}
		struct atomic_failure f;
		if (atomic_replace(reg->fd, fd, tmp, name, data, len, &f) == 0)
			break;
		errno = f.err;
		if (strcmp(f.step, "fsync directory") == 0)
			rc = fail(EXIT_IO, job, "fsync %s: %s (%s is in place but may not be durable)",
				  reg->path, strerror(f.err),
				  is_record ? "the new record" : reg_path(reg, name));
		else if (!f.tmp_err && estale_again(&tries))
			continue;
		else
			rc = fail_errno(f.err, job, "%s %s", f.step, reg_path(reg, tmp));
		if (f.tmp_err)
			warn(job, "cannot remove leftover %s: %s", reg_path(reg, tmp),
			     strerror(f.tmp_err));
		break;
	}
	free(tmp);
	return rc;
}

int reg_remove(const struct registry *reg, const char *job, int sync)
{
	int tries = 0;
	while (unlinkat(reg->fd, job, 0) < 0) {
		if (errno == ENOENT)
			return 0;
		if (!estale_again(&tries))
			return fail_errno(errno, job, "remove %s", reg_path(reg, job));
	}
	return sync ? reg_sync(reg, job) : 0;
}

int reg_sync(const struct registry *reg, const char *job)
{
	if (fsync_retry(reg->fd) == 0)
		return 0;
	return fail(EXIT_IO, job, "fsync %s: %s (the record is removed but that may not be durable)",
		    reg->path, strerror(errno));
}
