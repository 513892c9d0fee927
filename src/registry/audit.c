#include "registry/audit.h"
#include "registry/lock.h"
#include "registry/openat.h"
#include "util/msg.h"
#include "util/passwd.h"
#include "util/rfc3339.h"
#include "util/shquote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUDIT_LOCK ".-audit.lock"
/* The name messages give for the registry's own lines (no job can have
 * it), and that the lock file code checks for a planted entry. */
#define AUDIT_JOB "-audit"
/* SUDO_USER and an error are the caller's environment: bounded. */
#define WHO_MAX 256
#define ERROR_MAX 512

/* " KEY=VALUE", the value quoted as cmd= is (SPEC §3c). */
static void add_field(struct buf *b, const char *key, const char *value)
{
	buf_addf(b, "%s%s=", b->len ? " " : "", key);
	shquote_word(b, value);
}

/* add_field() of VALUE cut on a character boundary, so that the field
 * takes at most ROOM bytes (a quoted value may be longer than itself). */
static void add_cut(struct buf *b, const char *key, const char *value, size_t room)
{
	size_t len = strlen(value), start = b->len;
	for (;;) {
		char *v = xstrndup(value, len);
		add_field(b, key, v);
		free(v);
		if (b->len - start <= room || len == 0)
			return;
		size_t over = b->len - start - room;
		b->len = start;
		b->data[start] = '\0';
		len = over < len ? len - over : 0;
		while (len > 0 && ((unsigned char)value[len] & 0xc0) == 0x80)
			len--;
	}
}

/* Who makes the change: "user=… [sudo_user=…] uid=… host=… pid=…". */
static void add_who(struct buf *b)
{
	struct buf name = {0};
	char number[24], host[HOST_NAME_MAX + 1] = "";
	uid_t uid = getuid();
	snprintf(number, sizeof number, "%lu", (unsigned long)uid);
	add_field(b, "user", passwd_name(uid, &name) ? name.data : number);
	buf_free(&name);
	const char *sudo = getenv("SUDO_USER");
	if (sudo && *sudo)
		add_cut(b, "sudo_user", sudo, WHO_MAX);
	add_field(b, "uid", number);
	/* Truncation leaves no NUL by POSIX: keep one. */
	if (gethostname(host, sizeof host - 1) < 0 || !host[0])
		strcpy(host, "-");
	add_field(b, "host", host);
	buf_addf(b, " pid=%ld", (long)getpid());
}

/* A's line, with ERROR a result=failed one; newline-ended, at most
 * AUDIT_LINE_MAX bytes. */
static void format_line(struct buf *b, const struct audit_line *a, const char *error)
{
	char when[21];
	time_format(now_seconds(), when);
	add_field(b, "time", when);
	add_who(b);
	add_field(b, "command", prog_name);
	add_field(b, "action", a->action);
	add_field(b, "job", a->job ? a->job : "-");
	if (a->status)
		add_field(b, "status", a->status);
	if (a->run)
		buf_addf(b, " run=%llu", a->run);
	if (a->signal)
		add_field(b, "signal", a->signal);
	if (a->until)
		add_field(b, "until", a->until);
	struct buf tail = {0};
	if (error) {
		add_field(&tail, "result", "failed");
		add_cut(&tail, "error", error, ERROR_MAX);
	}
	if (a->note) {
		size_t used = b->len + 1 + tail.len + 1;   /* the spaces, the newline */
		add_cut(b, "note", a->note, used < AUDIT_LINE_MAX ? AUDIT_LINE_MAX - used : 0);
	}
	if (tail.len) {
		buf_addc(b, ' ');
		buf_add(b, tail.data, tail.len);
	}
	buf_free(&tail);
	buf_addc(b, '\n');
}

/* Open .-audit for appending into *FD: an existing one without O_CREAT
 * (fs.protected_regular), a missing one made O_CREAT|O_EXCL and shared
 * as the registry's files are (SPEC §1); then, as for locks (§4), the
 * name must still be the file opened.  *ST its status. */
static int open_log(const struct registry *reg, const char *job, int *fd, struct stat *st)
{
	for (int round = 0; round < 100; round++) {
		struct stat named;
		int rc = entry_open(reg->fd, AUDIT_FILE, O_WRONLY | O_APPEND, fd, st);
		if (rc < 0 && errno == ENOENT) {
			rc = entry_open(reg->fd, AUDIT_FILE, O_WRONLY | O_APPEND | O_CREAT | O_EXCL,
					fd, st);
			if (rc == 0 && entry_share(*fd, reg->share_mode) < 0) {
				int err = errno;
				(void)unlinkat(reg->fd, AUDIT_FILE, 0);
				close_fd(*fd);
				*fd = -1;
				return fail_errno(err, job, "chmod %s", reg_path(reg, AUDIT_FILE));
			}
			if (rc < 0 && errno == EEXIST)
				continue;
			/* (as for a lock file: the registry is what to mend) */
			if (rc < 0 && errno != ENOENT)
				return reg_cannot_write(reg, job, errno);
		}
		if (rc == ENTRY_NOT_REGULAR)
			return reg_not_regular(reg, job, AUDIT_FILE);
		if (rc < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
			return reg_cannot_write(reg, job, errno);
		if (rc < 0)
			return fail_errno(errno, job, "open %s", reg_path(reg, AUDIT_FILE));
		if (fstatat(reg->fd, AUDIT_FILE, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
		    named.st_dev == st->st_dev && named.st_ino == st->st_ino)
			return 0;
		close_fd(*fd);
		*fd = -1;
	}
	return fail(EXIT_IO, job, "%s keeps changing under its lock", reg_path(reg, AUDIT_FILE));
}

/* Audit lock held: LINE appended to .-audit in one write(2) and synced;
 * on failure cut back to what it was.  Then the rotation. */
static int append_locked(const struct registry *reg, const char *job, const struct buf *line)
{
	struct stat st;
	int fd = -1;
	int rc = open_log(reg, job, &fd, &st);
	if (rc)
		return rc;
	ssize_t n;
	do
		n = write(fd, line->data, line->len);
	while (n < 0 && errno == EINTR);
	/* (a short write is a full disk that let part in) */
	int err = n < 0 ? errno : (size_t)n < line->len ? ENOSPC : 0;
	const char *what = "write";
	if (!err && fsync_retry(fd) < 0) {
		err = errno;
		what = "fsync";
	}
	if (err) {
		while (ftruncate(fd, st.st_size) < 0 && errno == EINTR)
			;
		close_fd(fd);
		return fail_errno(err, job, "%s %s", what, reg_path(reg, AUDIT_FILE));
	}
	if (close_fd(fd) < 0)
		return fail_errno(errno, job, "close %s", reg_path(reg, AUDIT_FILE));
	if (st.st_size + (off_t)line->len <= AUDIT_ROTATE)
		return 0;
	/* The line is on the log: a failed rotation is only warned of, and
	 * the next writer tries again. */
	if (renameat(reg->fd, AUDIT_FILE, reg->fd, AUDIT_OLD) < 0)
		warn(job, "rename %s to %s: %s", reg_path(reg, AUDIT_FILE), AUDIT_OLD, strerror(errno));
	else if (reg_sync(reg, job) != 0)
		warn(job, "the audit log was rotated, perhaps not durably");
	return 0;
}

/* A's line (ERROR: its result=failed one) on the log. */
static int audit_append(const struct registry *reg, const struct audit_line *a, double lock_wait,
			const char *error)
{
	const char *job = a->job ? a->job : AUDIT_JOB;
	struct buf line = {0};
	int lock = -1;
	format_line(&line, a, error);
	int rc = reg_lock_entry(reg, job, AUDIT_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
	if (!rc)
		rc = append_locked(reg, job, &line);
	reg_unlock(&lock);
	buf_free(&line);
	return rc;
}

int audit_begin(const struct registry *reg, const struct audit_line *a, double lock_wait,
		int force, struct audit_change *c)
{
	*c = (struct audit_change){0};
	int rc = audit_append(reg, a, lock_wait, NULL);
	if (rc && !force)
		return rc;
	if (rc)
		warn(a->job, "--force: made, but not on the audit log");
	c->logged = !rc;
	c->was_held = message_hold(&c->held);
	return 0;
}

/* A's result=failed line with ERROR.  One that cannot be written either
 * goes unsaid: the change's own error is the one line of the call (and
 * the line before it says what was about to be made). */
static void failed_line(const struct registry *reg, const struct audit_line *a,
			double lock_wait, const char *error)
{
	struct buf dropped = {0};
	struct buf *was = message_hold(&dropped);
	(void)audit_append(reg, a, lock_wait, error);
	message_hold(was);
	message_release(&dropped, 0);
}

int audit_end(const struct registry *reg, const struct audit_line *a, double lock_wait,
	      struct audit_change *c, int rc)
{
	message_hold(c->was_held);
	if (rc && c->logged && c->held.len) {
		/* The last message, without its "PROGRAM: JOB: " and newline. */
		char *text = c->held.data;
		text[c->held.len - 1] = '\0';
		char *last = strrchr(text, '\n');
		text = last ? last + 1 : text;
		size_t skip = strlen(prog_name) + 2;
		if (strncmp(text, prog_name, skip - 2) == 0 && strncmp(text + skip - 2, ": ", 2) == 0)
			text += skip;
		if (a->job && strncmp(text, a->job, strlen(a->job)) == 0 &&
		    strncmp(text + strlen(a->job), ": ", 2) == 0)
			text += strlen(a->job) + 2;
		char *error = xstrdup(text);
		c->held.data[c->held.len - 1] = '\n';
		message_release(&c->held, 1);
		failed_line(reg, a, lock_wait, error);
		free(error);
	} else if (rc && c->logged) {
		failed_line(reg, a, lock_wait, "failed");
	}
	message_release(&c->held, 1);
	return rc;
}

/* Read NAME into OUT (appended), whole lines only; *ST its status (all
 * 0: none). */
static int read_file(const struct registry *reg, const char *name, struct buf *out,
		     struct stat *st)
{
	char chunk[65536];
	int fd;
	*st = (struct stat){0};
	int rc = entry_open(reg->fd, name, O_RDONLY, &fd, st);
	if (rc == ENTRY_NOT_REGULAR)
		return reg_not_regular(reg, NULL, name);
	if (rc < 0)
		return errno == ENOENT ? 0 : fail_errno(errno, NULL, "open %s", reg_path(reg, name));
	size_t start = out->len;
	ssize_t n;
	while ((n = read_full(fd, chunk, sizeof chunk)) > 0)
		buf_add(out, chunk, (size_t)n);
	int err = errno;
	close_fd(fd);
	if (n < 0)
		return fail_errno(err, NULL, "read %s", reg_path(reg, name));
	/* A line being written (or cut off by a crash) is no line. */
	while (out->len > start && out->data[out->len - 1] != '\n')
		out->len--;
	buf_add(out, "", 0);
	return 0;
}

int audit_read(const struct registry *reg, struct buf *log)
{
	if (reg->fd < 0)
		return 0;
	for (int round = 0; round < 10; round++) {
		struct stat old, cur, again;
		buf_reset(log);
		int rc = read_file(reg, AUDIT_OLD, log, &old);
		if (!rc)
			rc = read_file(reg, AUDIT_FILE, log, &cur);
		if (rc)
			return rc;
		/* A rotation between the two reads moved lines we did not see
		 * into .-audit.1: read both again. */
		if (fstatat(reg->fd, AUDIT_OLD, &again, AT_SYMLINK_NOFOLLOW) < 0)
			again = (struct stat){0};
		if (again.st_ino == old.st_ino && again.st_dev == old.st_dev)
			break;
	}
	return 0;
}

int audit_field(const char **p, const char *end, struct buf *key, struct buf *value)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	if (s >= end || *s == '\n')
		return 0;
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	const char *stop = nl ? nl : end;
	const char *eq = memchr(s, '=', (size_t)(stop - s));
	const char *sp = memchr(s, ' ', (size_t)(stop - s));
	buf_reset(key);
	buf_reset(value);
	if (!eq || (sp && sp < eq)) {
		/* Not key=value: the word as a value of no key. */
		buf_add(key, "", 0);
		*p = shquote_unquote(s, stop, value);
		return 1;
	}
	buf_add(key, s, (size_t)(eq - s));
	*p = shquote_unquote(eq + 1, stop, value);
	return 1;
}

int audit_last(const char *log, size_t len, const char *job, const char *action,
	       struct buf *when, struct buf *who)
{
	struct buf key = {0}, value = {0}, user = {0}, sudo = {0};
	int found = 0;
	const char *end = log + len;
	/* The last line wins: read them all, oldest first. */
	for (const char *line = log; line && line < end;) {
		const char *p = line, *nl = memchr(line, '\n', (size_t)(end - line));
		int job_ok = 0, action_ok = 0, failed = 0;
		struct buf t = {0};
		buf_reset(&user);
		buf_reset(&sudo);
		while (audit_field(&p, end, &key, &value)) {
			if (strcmp(key.data, "job") == 0)
				job_ok = strcmp(value.data, job ? job : "-") == 0;
			else if (strcmp(key.data, "action") == 0)
				action_ok = strcmp(value.data, action) == 0;
			else if (strcmp(key.data, "result") == 0)
				failed = 1;
			else if (strcmp(key.data, "time") == 0)
				buf_adds(&t, value.data);
			else if (strcmp(key.data, "user") == 0)
				buf_adds(&user, value.data);
			else if (strcmp(key.data, "sudo_user") == 0)
				buf_adds(&sudo, value.data);
		}
		if (job_ok && action_ok && !failed && t.len) {
			found = 1;
			buf_reset(when);
			buf_adds(when, t.data);
			buf_reset(who);
			if (sudo.len)
				buf_addf(who, "%s as %s", sudo.data, user.len ? user.data : "?");
			else
				buf_adds(who, user.len ? user.data : "?");
		}
		buf_free(&t);
		line = nl ? nl + 1 : NULL;
	}
	buf_free(&key);
	buf_free(&value);
	buf_free(&user);
	buf_free(&sudo);
	return found;
}
