#include "liveness/wait.h"
#include "liveness/proc.h"
#include "record/transition.h"
#include "registry/lock.h"
#include "util/msg.h"

#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/inotify.h>
#include <sys/vfs.h>

/* Seconds: */
#define POLL_EVERY 0.1   /* the slowest notice SPEC §5 allows */
#define FOLLOW_EVERY 1.0 /* how soon DIR naming another directory is noticed */
#define CLOCK_EVERY 1.0  /* how soon expires and late are judged again (clock steps, suspend) */

/* What the last look found out about one job. */
struct wjob {
	int lock_run;       /* RUNNING, judged by its run lock */
	int pidfd;          /* watches PID's exit, or -1 */
	long pid;
	long exited;        /* a pid whose pidfd fired: not watched again */
	char *run_name;     /* ".JOB.run" */
};

struct waiter {
	struct registry *reg;  /* the caller's, kept naming what DIR names */
	int ino;               /* inotify descriptor, or -1 */
	int dir_wd, parent_wd; /* watches of DIR and of its parent, or -1 */
	int polling;           /* DIR cannot be watched: poll it */
	char *parent, *base;   /* DIR split for the parent watch (NULL: none) */
	char *const *jobs;
	size_t njobs;
	const char *file;      /* --follow's log, whose writes count, or NULL */
	struct wjob *w;
	struct job_state *states;   /* what the last look found */
	struct pollfd *fds;    /* inotify's, then each job's pidfd (-1: none) */
	double check_at;       /* when to look next (-1: on an event) */
	double last_check;
	double followup;       /* a look after a run lock's close, or -1 */
};

static void want(struct waiter *w, double when)
{
	if (w->check_at < 0 || when < w->check_at)
		w->check_at = when;
}

/* ---- The Linux facilities: inotify, the filesystem type. ---- */

#define DIR_EVENTS (IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | \
		    IN_CLOSE_NOWRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define PARENT_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* A record's own events; a reader's open and close of it are not. */
#define RECORD_EVENTS (IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_ATTRIB)
/* The file's: written (and cut), made, renamed, removed. */
#define FILE_EVENTS (IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_CLOSE_WRITE)

/* A filesystem whose changes made on other hosts inotify never sees. */
static int remote_fs(int fd)
{
	static const unsigned long magic[] = {
		0x6969,       /* NFS */       0x517B,       /* SMB */
		0xFF534D42,   /* CIFS */      0xFE534D42,   /* SMB2 */
		0x00C36400,   /* Ceph */      0x65735546,   /* FUSE: GlusterFS, sshfs */
		0x5346414F,   /* AFS */       0x01021997,   /* 9P */
		0x7461636F,   /* OCFS2 */     0x01161970,   /* GFS2 */
		0x0BD00BD0,   /* Lustre */    0x73757245,   /* Coda */
	};
	struct statfs s;
	if (fstatfs(fd, &s) < 0)
		return 0;
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if (((unsigned long)s.f_type & 0xFFFFFFFFul) == magic[i])
			return 1;
	return 0;
}

/* ---- The registry directory: open it, watch it, or its parent. ---- */

/* Follow DIR by name (SPEC §5): if it names another directory (or none, or
 * one again), drop the old watch and open what it names.  Then watch DIR
 * if it exists, else its parent to see it made, before any look reads it. */
static int attach(struct waiter *w)
{
	if (!reg_same(w->reg)) {
		if (w->dir_wd >= 0)
			inotify_rm_watch(w->ino, w->dir_wd);
		w->dir_wd = -1;
		w->polling = w->ino < 0;
		int rc = reg_follow(w->reg, 0);
		if (rc)
			return rc;
	}
	if (w->reg->fd < 0 && w->ino >= 0 && w->parent_wd < 0 && w->parent)
		w->parent_wd = inotify_add_watch(w->ino, w->parent, PARENT_EVENTS);
	if (w->reg->fd < 0 || w->dir_wd >= 0 || w->polling)
		return 0;
	if (w->ino < 0 || remote_fs(w->reg->fd) ||
	    (w->dir_wd = inotify_add_watch(w->ino, w->reg->path,
					   DIR_EVENTS | (w->file ? FILE_EVENTS : 0u))) < 0)
		w->polling = 1;
	if (w->parent_wd >= 0)
		inotify_rm_watch(w->ino, w->parent_wd);
	w->parent_wd = -1;
	return 0;
}

/* ---- One look: every job's state, and what to watch for each. ---- */

static void unwatch_pid(struct wjob *j)
{
	if (j->pidfd >= 0)
		close_fd(j->pidfd);
	j->pidfd = -1;
}

/* The now_mono() time of the realtime REAL (expires, late), a little
 * after it but no later than CLOCK_EVERY from NOW. */
static double mono_at(double real, double now)
{
	double at = now + (real - now_real()) + 0.01;
	return at < now + CLOCK_EVERY ? at : now + CLOCK_EVERY;
}

/* Arm what tells of a change of a job; returns 1 when something new was
 * armed (so the caller looks once more: no lost wake-up). */
static int arm(struct waiter *w, struct wjob *j, const struct job_state *st, double now)
{
	const struct record *r = &st->rec;
	const char *owner = record_get(r, "owner");
	long pid = (long)record_count(r, "pid");
	int running = st->status == ST_RUNNING;
	time_t until;

	j->lock_run = running && owner && strcmp(owner, "lock") == 0;
	if (st->late_at >= 0 && !st->late)
		want(w, mono_at(st->late_at, now));   /* LATE is a time (SPEC §2) */
	if (st->overdue_at >= 0 && !st->overdue)
		want(w, mono_at(st->overdue_at, now));   /* so is OVERDUE */
	if (running && !j->lock_run && record_time(r, "expires", &until) == 0) {
		/* STALE once past it (a lock-owned record: by its lock alone);
		 * if not yet, look again no sooner than a poll would. */
		double at = mono_at((double)until, now);
		want(w, at > now ? at : now + POLL_EVERY);
	}
	if (!running || !owner || (j->lock_run && st->by_lock)) {
		/* Only a file change can change it, or the run lock's close. */
		unwatch_pid(j);
		return 0;
	}
	if (j->pidfd >= 0 && j->pid == pid)
		return 0;
	unwatch_pid(j);
	if (pid > 0 && pid != j->exited && (j->pidfd = pid_fd(pid)) >= 0) {
		j->pid = pid;
		return 1;
	}
	want(w, now + POLL_EVERY);   /* nothing tells of this pid's death */
	return 0;
}

/* ---- Events. ---- */

static void on_event(struct waiter *w, const struct inotify_event *e, int ours, double now)
{
	if (e->mask & IN_Q_OVERFLOW) {
		want(w, now);
		return;
	}
	if (e->wd == w->parent_wd) {
		if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
			w->parent_wd = -1;   /* then poll */
			want(w, now);
		} else if (e->len && strcmp(e->name, w->base) == 0) {
			want(w, now);   /* DIR made */
		}
		return;
	}
	if (e->wd != w->dir_wd)
		return;
	if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) {
		want(w, now);   /* attach() follows the name */
		return;
	}
	if (!e->len)
		return;
	if (w->file && strcmp(e->name, w->file) == 0) {
		if (e->mask & FILE_EVENTS)
			want(w, now);
		return;
	}
	for (size_t i = 0; i < w->njobs; i++) {
		struct wjob *j = &w->w[i];
		if (strcmp(e->name, w->jobs[i]) == 0) {
			if (e->mask & RECORD_EVENTS)
				want(w, now);
		} else if (j->lock_run && strcmp(e->name, j->run_name) == 0) {
			if (e->mask & ~(unsigned)(IN_CLOSE_NOWRITE | IN_ISDIR)) {
				/* A read-write holder's last close (a run's end or death),
				 * or the lock file replaced.  The kernel queues the close
				 * just before it drops the lock: look again soon. */
				want(w, now);
				w->followup = now + POLL_EVERY;
			} else if (!ours) {
				/* A read-only holder's last close, or a reader's probe:
				 * no more often than a poll would, and soon again. */
				double at = w->last_check + POLL_EVERY;
				want(w, at > now ? at : now);
				w->followup = (at > now ? at : now) + POLL_EVERY;
			}
		}
	}
}

/* Take every queued event.  OURS: they came while we looked, so a
 * read-only close of a run lock is our own probe's. */
static void read_events(struct waiter *w, int ours)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	double now = now_mono();
	for (;;) {
		ssize_t n = read(w->ino, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				/* Cannot happen; if it does, polling still works. */
				close_fd(w->ino);
				w->ino = w->dir_wd = w->parent_wd = -1;
				w->polling = 1;
				want(w, now);
			}
			return;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)(void *)p;
			on_event(w, e, ours, now);
			p += sizeof *e + e->len;
		}
	}
}

/* ---- The loop. ---- */

static int timeout_ms(double next, double now)
{
	if (next < 0)
		return -1;
	double ms = (next - now) * 1000.0;
	if (ms <= 0)
		return 0;
	if (ms > 3600e3)
		return 3600 * 1000;   /* wake up now and then; nothing to do */
	return (int)ms + 1;
}

struct waiter *wait_jobs_open(struct registry *reg, char *const *jobs, size_t njobs,
			      const char *file)
{
	struct waiter *w = xmalloc(sizeof *w);
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	*w = (struct waiter){
		.reg = reg, .ino = ino, .polling = ino < 0, .dir_wd = -1, .parent_wd = -1,
		.jobs = jobs, .njobs = njobs, .file = file, .check_at = -1, .followup = -1,
		.w = xmalloc(njobs * sizeof *w->w),
		.states = xmalloc(njobs * sizeof *w->states),
		.fds = xmalloc((njobs + 1) * sizeof *w->fds),
	};
	for (size_t i = 0; i < njobs; i++) {
		w->w[i] = (struct wjob){ .pidfd = -1, .run_name = reg_lock_name(jobs[i], RUN_LOCK) };
		record_init(&w->states[i].rec);
	}
	/* "a/b/reg/" -> "a/b" and "reg"; none for "/", "." or "..". */
	char *dir = xstrdup(reg->path), *name = xstrdup(reg->path);
	const char *base = basename(name);
	if (strcmp(base, "/") != 0 && strcmp(base, ".") != 0 && strcmp(base, "..") != 0) {
		w->base = xstrdup(base);
		w->parent = xstrdup(dirname(dir));
	}
	free(dir);
	free(name);
	return w;
}

int wait_jobs_look(struct waiter *w, const struct job_state **states)
{
	double now = now_mono();
	int armed = 0;

	*states = w->states;
	w->check_at = -1;
	int rc = attach(w);
	for (size_t i = 0; !rc && i < w->njobs; i++) {
		jobstate_free(&w->states[i]);
		if ((rc = jobstate_read(w->reg, w->jobs[i], &w->states[i])) == 0)
			armed |= arm(w, &w->w[i], &w->states[i], now);
	}
	if (rc)
		return rc;
	if (armed)
		want(w, now);
	if (w->polling || (w->reg->fd < 0 && w->parent_wd < 0))
		want(w, now + POLL_EVERY);
	/* A symlink DIR re-pointed tells inotify nothing. */
	want(w, now + FOLLOW_EVERY);
	w->last_check = now_mono();
	if (w->ino >= 0)
		read_events(w, 1);
	return 0;
}

int wait_jobs_sleep(struct waiter *w, double deadline)
{
	for (;;) {
		double now = now_mono();
		if (w->followup >= 0 && now >= w->followup) {
			w->followup = -1;
			want(w, now);
		}
		if (w->check_at >= 0 && now >= w->check_at)
			return 0;
		if (deadline >= 0 && now >= deadline)
			return EXIT_BUSY;

		/* (poll() passes over a descriptor -1) */
		w->fds[0] = (struct pollfd){ .fd = w->ino, .events = POLLIN };
		for (size_t i = 0; i < w->njobs; i++)
			w->fds[i + 1] = (struct pollfd){ .fd = w->w[i].pidfd, .events = POLLIN };
		double next = earliest(earliest(w->check_at, w->followup), deadline);
		int n = poll(w->fds, (nfds_t)(w->njobs + 1), timeout_ms(next, now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_errno(errno, NULL, "poll");
		if (w->fds[0].revents)
			read_events(w, 0);
		for (size_t i = 0; i < w->njobs; i++)
			if (w->fds[i + 1].revents) {
				/* The pid ended (or the pidfd failed): look, once. */
				struct wjob *j = &w->w[i];
				j->exited = j->pid;
				unwatch_pid(j);
				want(w, now_mono());
			}
	}
}

void wait_jobs_close(struct waiter *w)
{
	for (size_t i = 0; i < w->njobs; i++) {
		unwatch_pid(&w->w[i]);
		free(w->w[i].run_name);
		jobstate_free(&w->states[i]);
	}
	if (w->ino >= 0)
		close_fd(w->ino);
	free(w->w);
	free(w->states);
	free(w->parent);
	free(w->base);
	free(w->fds);
	free(w);
}

void wait_watch_open(struct entry_watch *w, const struct registry *reg)
{
	w->followup = -1;
	w->ino = reg->fd < 0 || remote_fs(reg->fd) ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino >= 0 && inotify_add_watch(w->ino, reg->path, IN_CLOSE_WRITE | IN_DELETE |
					     IN_MOVED_FROM | IN_ONLYDIR) < 0)
		wait_watch_close(w);
}

void wait_watch(struct entry_watch *w, const char *prefix, double until)
{
	size_t n = strlen(prefix);
	double now = now_mono();
	if (w->ino < 0)
		until = earliest(until, now + POLL_EVERY);
	for (;;) {
		double next = earliest(until, w->followup);
		struct pollfd p = { .fd = w->ino, .events = POLLIN };
		if (now >= next || poll(&p, w->ino >= 0, timeout_ms(next, now)) <= 0) {
			if (w->followup >= 0 && now_mono() >= w->followup)
				w->followup = -1;
			return;   /* (EINTR too: the caller looks again) */
		}
		/* Other files' events are passed over in the same sleep: a
		 * busy registry costs a read each, never a look. */
		char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t got;
		int woke = 0;
		while ((got = read(w->ino, events, sizeof events)) > 0)
			for (char *at = events; at < events + got;) {
				const struct inotify_event *e = (const struct inotify_event *)(void *)at;
				woke |= (e->mask & IN_Q_OVERFLOW) ||
					(e->len && strncmp(e->name, prefix, n) == 0);
				at += sizeof *e + e->len;
			}
		now = now_mono();
		if (woke) {
			w->followup = now + POLL_EVERY;
			return;
		}
	}
}

void wait_watch_close(struct entry_watch *w)
{
	if (w->ino >= 0)
		close_fd(w->ino);
	w->ino = -1;
}

int wait_lock(int fd, int op, double until)
{
	double left = until < 0 ? 1 : until - now_mono();
	if (flock_wait(fd, op, left > 1 ? 1 : left > 0 ? left : 0) == 0)
		return 0;
	return errno == EWOULDBLOCK ? EXIT_BUSY : -1;
}
