/* notify: the one notifier (see notify.h). */
#include "report/notify.h"
#include "report/report.h"
#include "run/logview.h"
#include "run/runrecord.h"
#include "run/supervise.h"
#include "liveness/facts.h"
#include "liveness/jobstate.h"
#include "registry/lock.h"
#include "registry/pause.h"
#include "registry/write.h"
#include "record/transition.h"
#include "util/msg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define CLAIM_SECONDS 75      /* notifier_until = now + this (SPEC §5c) */
#define CMD_SECONDS 60.0      /* CMD's limit, then TERM ... */
#define CMD_KILL_AFTER 5.0    /* ... and KILL this much later */
#define LOG_TAIL 65536        /* the failed run's log CMD reads */
#define RETRY_FIRST 60        /* the back-off: 1 min × 2^(failures−1) ... */
#define RETRY_MAX 3600        /* ... at most an hour */
#define START_OVERS 3

/* The claim's keys (SPEC §3): not owner fields, every transition keeps them. */
static const char *const claim_keys[] = {
	"notifying", "notifier_host", "notifier_pid", "notifier_until",
};

/* The health a notifier judges: notify_after lowers FAILED (SPEC §5c). */
static enum health health_of(const struct job_state *st)
{
	return jobstate_health(st, record_count(&st->rec, "notify_after"));
}

/* The health last announced: notified, OK when absent. */
static enum health announced(const struct job_state *st)
{
	const char *w = record_get(&st->rec, "notified");
	int h = w ? health_from_word(w) : -1;
	return h < 0 ? HEALTH_OK : (enum health)h;
}

/* A change to announce, and no retry put off past NOW?  (A live claim is
 * found only under the job lock.) */
static int due(const struct job_state *st, double now)
{
	time_t at;
	if (!st->found || health_of(st) == announced(st))
		return 0;
	return record_time(&st->rec, "notify_retry_at", &at) < 0 || (double)at <= now;
}

/* A claim this notifier wrote. */
struct claim {
	enum health health;   /* the health it announces */
	int lock;             /* .JOB.notify, locked */
	int in_fd;            /* CMD's standard input */
	char host[256], pid[24], until[21];
	char signame[SIGNAME_MAX];   /* CMD's end, when a signal ended it */
	struct job_state st;  /* the record it was written over */
};

/* Is R's claim C's? */
static int claim_ours(const struct record *r, const struct claim *c)
{
	return same_string(record_get(r, "notifying"), health_word(c->health)) &&
	       same_string(record_get(r, "notifier_host"), c->host) &&
	       same_string(record_get(r, "notifier_pid"), c->pid) &&
	       same_string(record_get(r, "notifier_until"), c->until);
}

/* --notify-after N of the sweep: the setting, written when it differs. */
static int put_notify_after(const struct registry *reg, const char *job, const struct notifier *n,
			    struct job_state *st)
{
	struct record rec;
	if (!n->notify_after || record_count(&st->rec, "notify_after") ==
					(n->notify_after > 1 ? n->notify_after : 0))
		return 0;
	record_copy(&rec, &st->rec);
	record_set_notify_after(&rec, n->notify_after);
	int rc = commit_record(reg, job, &st->rec, st->status, &rec, NULL);
	/* (what was written is what the claim goes by) */
	record_free(&st->rec);
	st->rec = rec;
	return rc;
}

/* Step 1: under the job lock, the claim; *TAKEN 0: nothing to do, or
 * a live claim.  An exit status. */
static int take_claim(const struct registry *reg, const char *job, const struct notifier *n,
		      struct claim *c, int *taken)
{
	int job_lock = -1;
	*taken = 0;
	c->lock = c->in_fd = -1;
	int rc = reg_lock(reg, job, JOB_LOCK, LOCK_EX, n->lock_wait, LOCK_CREATE, &job_lock);
	if (!rc)
		rc = jobstate_read(reg, job, &c->st);
	if (!rc && c->st.found)
		rc = put_notify_after(reg, job, n, &c->st);
	if (!rc && due(&c->st, now_real()) &&
	    (rc = reg_lock(reg, job, NOTIFY_LOCK, LOCK_EX, 0, LOCK_CREATE | LOCK_QUIET_BUSY,
			   &c->lock)) == 0) {
		struct record rec;
		c->health = health_of(&c->st);
		time_format(now_seconds() + CLAIM_SECONDS, c->until);
		record_copy(&rec, &c->st.rec);
		record_put(&rec, "notifying", health_word(c->health));
		record_put(&rec, "notifier_host", c->host);
		record_put(&rec, "notifier_pid", c->pid);
		record_put(&rec, "notifier_until", c->until);
		rc = commit_record(reg, job, &c->st.rec, c->st.status, &rec, NULL);
		record_free(&rec);
		if (!rc && c->health == HEALTH_FAILED)
			rc = logview_failed_tail(reg, job, &c->st, LOG_TAIL, &c->in_fd);
		if (rc)
			reg_unlock(&c->lock);
		*taken = !rc;
	}
	if (rc == EXIT_BUSY && job_lock >= 0)
		rc = 0;   /* .JOB.notify busy: a live claim, the job its holder's */
	reg_unlock(&job_lock);
	return rc;
}

static void put_env(const char *name, const char *value, int *rc)
{
	if (*rc)
		return;
	if ((value ? setenv(name, value, 1) : unsetenv(name)) < 0)
		*rc = errno;
}

/* CMD's environment (SPEC §5c), from the record the claim was written over. */
static int set_env(const struct registry *reg, const char *job, const struct claim *c)
{
	static const char *const dispatch_only[] = { "JOBREG_ATTEMPT", "JOBREG_SLOTS" };
	const struct record *r = &c->st.rec;
	struct record dir_pause;
	int dir_paused = 0;
	char event[16], failures[24], *dir = path_absolute(reg->path);
	struct buf summary = {0};
	enum outcome o = c->st.status == ST_DONE ? record_outcome(r) : OUTCOME_UNKNOWN;
	int rc = 0;
	size_t i;

	/* Paused by its record, else by the registry's .-pause (SPEC §2). */
	record_init(&dir_pause);
	if (!c->st.paused)
		(void)registry_pause_read(reg, now_real(), &dir_pause, &dir_paused);
	const struct record *pause = c->st.paused ? &c->st.rec : dir_paused ? &dir_pause : NULL;
	for (i = 0; health_word(c->health)[i] && i + 1 < sizeof event; i++)
		event[i] = (char)tolower((unsigned char)health_word(c->health)[i]);
	event[i] = '\0';
	snprintf(failures, sizeof failures, "%llu", record_count(r, "consecutive_failures"));
	(void)report_line(reg, job, &c->st, &summary);
	put_env("JOBREG_JOB", job, &rc);
	put_env("JOBREG_DIR", dir ? dir : reg->path, &rc);
	put_env("JOBREG_EVENT", c->health == HEALTH_OK ? "recovered" : event, &rc);
	put_env("JOBREG_HEALTH", health_word(c->health), &rc);
	put_env("JOBREG_PREVIOUS_HEALTH", health_word(announced(&c->st)), &rc);
	put_env("JOBREG_STATUS", status_word(c->st.status), &rc);
	put_env("JOBREG_RUN", record_get(r, "runs"), &rc);
	put_env("JOBREG_OUTCOME", outcome_word(o), &rc);
	put_env("JOBREG_EXIT", record_get(r, "exit"), &rc);
	put_env("JOBREG_SIGNAL", record_get(r, "signal"), &rc);
	put_env("JOBREG_CONSECUTIVE_FAILURES", failures, &rc);
	put_env("JOBREG_LAST_SUCCESS", record_get(r, "last_success") ? record_get(r, "last_success") : "", &rc);
	put_env("JOBREG_HOST", record_get(r, "host"), &rc);
	put_env("JOBREG_PAUSED_UNTIL", pause ? record_get(pause, "paused_until") : NULL, &rc);
	put_env("JOBREG_SUMMARY", summary.data ? summary.data : "", &rc);
	for (i = 0; i < sizeof dispatch_only / sizeof *dispatch_only; i++)
		put_env(dispatch_only[i], NULL, &rc);
	free(dir);
	buf_free(&summary);
	record_free(&dir_pause);
	return rc ? fail_errno(rc, job, "setenv") : 0;
}

/* Step 2: CMD, its standard output and error ours, at most a minute. */
static int run_cmd(const char *job, const struct notifier *n, int in_fd,
		   struct run_result *res, char signame[SIGNAME_MAX])
{
	char *argv[] = { "/bin/sh", "-c", (char *)n->cmd, NULL };
	struct supervise s = { .command = argv, .keep_fd = -1, .timeout = CMD_SECONDS,
			       .kill_after = CMD_KILL_AFTER, .signal = SIGTERM,
			       .out_fd = 2, .err_fd = -1, .in_fd = in_fd, .job = job, .run = "" };
	struct supervise_end end;
	sigset_t held, none, prev;
	supervise_signals(&held, &prev);
	sigemptyset(&none);   /* CMD starts with no signal blocked */
	sigprocmask(SIG_BLOCK, &held, &prev);
	supervise_start(&s, &held, &none, &end);
	while (supervise_step(&s, &held, &end) != SV_ENDED)
		;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	if (end.start_errno)
		fail_errno(end.start_errno, job, "cannot run the notify command");
	return supervise_outcome(&end, res, signame);
}

/* Step 3: the confirm, or the back-off, if the claim is still ours;
 * *AGAIN when the health changed meanwhile.  An exit status. */
static int confirm(const struct registry *reg, const char *job, const struct notifier *n,
		   struct claim *c, int ok, const struct run_result *res, int *again)
{
	struct job_state st;
	int job_lock = -1;
	*again = 0;
	int rc = reg_lock(reg, job, JOB_LOCK, LOCK_EX, n->lock_wait, LOCK_CREATE, &job_lock);
	if (!rc)
		rc = jobstate_read(reg, job, &st);
	else
		record_init(&st.rec);
	if (!rc && st.found && claim_ours(&st.rec, c)) {
		struct record rec;
		char now[21], at[21];
		record_copy(&rec, &st.rec);
		for (size_t i = 0; i < sizeof claim_keys / sizeof *claim_keys; i++)
			record_drop(&rec, claim_keys[i]);
		time_format(now_seconds(), now);
		if (ok) {
			record_put(&rec, "notified", health_word(c->health));
			record_put(&rec, "notified_at", now);
			record_drop(&rec, "notify_failures");
			record_drop(&rec, "notify_retry_at");
		} else {
			unsigned long long f = record_count(&st.rec, "notify_failures") + 1;
			long delay = RETRY_FIRST;
			for (unsigned long long k = 1; k < f && delay < RETRY_MAX; k++)
				delay *= 2;
			time_format(now_seconds() + (delay < RETRY_MAX ? delay : RETRY_MAX), at);
			record_put_number(&rec, "notify_failures", f);
			record_put(&rec, "notify_retry_at", at);
		}
		rc = commit_record(reg, job, &st.rec, st.status, &rec, NULL);
		record_free(&rec);
		*again = !rc && ok && health_of(&st) != c->health;
		if (!ok) {
			struct buf how = {0};
			run_describe_result(&how, res);
			warn(job, "notify failed (%s): tried again after %s", how.data, at);
			buf_free(&how);
		}
	} else if (!ok) {
		struct buf how = {0};
		run_describe_result(&how, res);
		warn(job, "notify failed (%s)", how.data);
		buf_free(&how);
	}
	reg_unlock(&c->lock);   /* (under the job lock, as it was taken) */
	reg_unlock(&job_lock);
	jobstate_free(&st);
	return rc;
}

int notify_job(const struct registry *reg, const char *job, const struct notifier *n)
{
	struct claim c;
	struct reader me;
	int rc = 0;
	for (int round = 0; round <= START_OVERS; round++) {
		struct job_state st;
		int taken, again, go;
		/* A look without a lock: most jobs have nothing to announce. */
		rc = jobstate_read(reg, job, &st);
		go = !rc && (due(&st, now_real()) ||
			     (n->notify_after && st.found &&
			      record_count(&st.rec, "notify_after") !=
				      (n->notify_after > 1 ? n->notify_after : 0)));
		jobstate_free(&st);
		if (!go)
			return rc;
		/* Who claims (for people), once there is something to claim. */
		if (probe_reader(&me) < 0)
			return fail_errno(errno, job, "cannot read this process's identity from /proc");
		snprintf(c.host, sizeof c.host, "%s", me.host ? me.host : "");
		snprintf(c.pid, sizeof c.pid, "%ld", (long)getpid());
		record_init(&c.st.rec);
		rc = take_claim(reg, job, n, &c, &taken);
		if (!rc && taken) {
			struct run_result res;
			int status = -1;
			if (c.in_fd < 0)
				c.in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (c.in_fd < 0)
				rc = fail_errno(errno, job, "open /dev/null");
			if (!rc)
				rc = set_env(reg, job, &c);
			if (!rc)
				status = run_cmd(job, n, c.in_fd, &res, c.signame);
			if (c.in_fd >= 0)
				close_fd(c.in_fd);
			if (rc) {
				res = (struct run_result){ .exit_status = -1 };
				status = 1;
			}
			int crc = confirm(reg, job, n, &c, status == 0, &res, &again);
			keep_first(&rc, crc);
			if (!rc && status)
				rc = EXIT_FALSE;
		}
		jobstate_free(&c.st);
		if (rc || !taken || !again)
			return rc;
	}
	return rc;
}
