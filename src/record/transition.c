/* transition: what each write does to a record (SPEC §3).  Past 450
 * lines: each transition, the corrections of a run's result (a failure,
 * a warning and a success counted once), and the settings of §2 and §5,
 * which all move the same keys. */
#include "record/transition.h"
#include "record/outcome.h"
#include "util/signame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 when R had any of KEYS. */
static int drop_keys(struct record *r, const char *const *keys)
{
	int had = 0;
	for (; *keys; keys++)
		had |= record_drop(r, *keys);
	return had;
}

/* The owner's keys.  DONE drops those after the first two: who ran it
 * (host, pid) is kept. */
static const char *const owner_keys[] = {
	"host", "pid", "owner", "pid_start", "boot_id", "pid_ns", "time_ns", "run_lock", "expires",
	NULL,
};
static const char *const result_keys[] = { "ended", "exit", "signal", "timed_out", "outcome",
					    "cancelled", "cancelled_by", "retries_cancelled_by", NULL };
/* What only a run has; PENDING drops them with the owner and the result. */
static const char *const run_keys[] = { "started", "timeout", "attempt", "retry_at", "slots",
					 "cmd", NULL };
/* A cancel asked of one run (SPEC §5a): only that run's DONE, or a new
 * run, drops it. */
static const char *const cancel_keys[] = { "cancel_run", "cancel_signal", "cancel_kill_after",
					   "cancel_by", "cancel_at", "cancel_seen", "cancel_missed", NULL };

static void put_time(struct record *r, const char *key, time_t t)
{
	char when[21];
	time_format(t, when);
	record_put(r, key, when);
}

void record_put_number(struct record *r, const char *key, unsigned long long v)
{
	struct buf b = {0};
	buf_addf(&b, "%llu", v);
	record_put(r, key, b.data);
	buf_free(&b);
}

static void put_if(struct record *r, const char *key, unsigned long long v)
{
	if (v)
		record_put_number(r, key, v);
}

/* Seconds as plain decimals, as the parser wants them (%g would write
 * 3.2e+09 for a century); trailing zeros of the fraction go. */
static void put_seconds(struct record *r, const char *key, double seconds)
{
	struct buf b = {0};
	buf_addf(&b, "%.9f", seconds);
	while (b.len > 1 && b.data[b.len - 1] == '0')
		b.data[--b.len] = '\0';
	if (b.data[b.len - 1] == '.')
		b.data[--b.len] = '\0';
	record_put(r, key, b.data);
	buf_free(&b);
}

/* (The parser checked the counter: a malformed one cannot reach here.) */
void record_count_up(struct record *r, const char *key)
{
	unsigned long long n = record_count(r, key);
	if (n < COUNTER_MAX)
		record_put_number(r, key, n + 1);
}

/* ST since NOW (a RENEWAL keeps its since). */
static void begin(struct record *r, enum status st, time_t now, const char *note, int renewal)
{
	if (!record_get(r, "version"))
		record_put(r, "version", "1");
	record_put(r, "status", status_word(st));
	if (!renewal || !record_get(r, "since"))
		put_time(r, "since", now);
	if (note)
		record_put(r, "note", note);
}

void record_to_pending(struct record *r, time_t now, const char *note)
{
	begin(r, ST_PENDING, now, note, 0);
	drop_keys(r, owner_keys);
	drop_keys(r, result_keys);
	drop_keys(r, run_keys);
	drop_keys(r, cancel_keys);
}

int record_owned_by(const struct record *r, const struct owner *o)
{
	const char *owner = record_get(r, "owner"), *host = record_get(r, "host");
	const char *boot = record_get(r, "boot_id");
	if (record_status(r) != ST_RUNNING)
		return 0;
	if (o->kind == OWNER_NONE)
		return owner == NULL;
	if (!owner || strcmp(owner, o->kind == OWNER_LOCK ? "lock" : "pid") != 0)
		return 0;
	if (!host || !record_get(r, "pid") || strcmp(host, o->host) != 0 ||
	    (long)record_count(r, "pid") != o->pid)
		return 0;
	/* (no pid_start, 0, when /proc hid it from the writer) */
	return o->kind != OWNER_PID || (record_count(r, "pid_start") == o->pid_start && boot &&
					o->boot_id && strcmp(boot, o->boot_id) == 0);
}

void record_to_running(struct record *r, time_t now, const struct run_start *how,
		       const char *note)
{
	const struct owner *o = how->owner;
	/* A dispatch always begins a new run, even over a dead dispatcher's
	 * record that names the same host and pid (a reused pid, as pid 1 in
	 * containers): only jobreg-set renews. */
	int renewal = o->kind != OWNER_LOCK && record_owned_by(r, o);
	begin(r, ST_RUNNING, now, note, renewal);
	if (!renewal || !record_get(r, "started"))
		put_time(r, "started", now);
	if (!renewal)
		record_count_up(r, "runs");
	drop_keys(r, owner_keys);
	drop_keys(r, result_keys);
	record_drop(r, "timeout");
	record_drop(r, "retry_at");
	if (!renewal) {
		record_drop(r, "attempt");
		record_drop(r, "slots");
		record_drop(r, "cmd");
		drop_keys(r, cancel_keys);
	}
	put_if(r, "attempt", how->attempt);
	if (o->kind != OWNER_NONE) {
		record_put(r, "owner", o->kind == OWNER_LOCK ? "lock" : "pid");
		record_put(r, "host", o->host);
		record_put_number(r, "pid", (unsigned long long)o->pid);
		put_if(r, "pid_start", o->pid_start);
		if (o->boot_id)
			record_put(r, "boot_id", o->boot_id);
		put_if(r, "pid_ns", o->pid_ns);
		put_if(r, "time_ns", o->time_ns);
		if (o->kind == OWNER_LOCK)
			put_if(r, "run_lock", o->run_lock);
	}
	if (how->expires)
		put_time(r, "expires", how->expires);
	if (how->timeout > 0)
		put_seconds(r, "timeout", how->timeout);
}

void record_to_retry(struct record *r, time_t now, time_t retry_at)
{
	put_time(r, "since", now);
	put_time(r, "retry_at", retry_at);
	record_count_up(r, "failures");
	record_count_up(r, "consecutive_failures");
}

int record_to_done_counted(struct record *r, time_t now, const struct run_result *end,
			   const char *note)
{
	/* No result over a DONE record (a note, a setting) keeps its result
	 * and counts nothing: a failed run must not become one of unknown
	 * result, which dispatch --once would replay as done. */
	int keep = record_status(r) == ST_DONE && end->exit_status < 0 && !end->signal_name &&
		   !end->timed_out;
	begin(r, ST_DONE, now, note, 0);
	drop_keys(r, owner_keys + 2);
	drop_keys(r, cancel_keys);
	record_drop(r, "retry_at");
	record_drop(r, "slots");
	if (keep)
		return 1;
	drop_keys(r, result_keys);
	put_time(r, "ended", now);
	if (end->signal_name)
		record_put(r, "signal", end->signal_name);
	else if (end->exit_status >= 0)
		record_put_number(r, "exit", (unsigned long long)end->exit_status);
	if (end->timed_out)
		record_put(r, "timed_out", "1");
	if (end->cancelled_by) {
		record_put(r, "cancelled", "1");
		record_put(r, "cancelled_by", end->cancelled_by);
	}
	/* jobreg-set --exit N is judged by the lists the job's dispatcher
	 * left (SPEC §2 Warnings); min_duration by dispatch only. */
	enum outcome o = end->outcome;
	if (o == OUTCOME_UNKNOWN) {
		struct outcome_policy p;
		struct outcome_facts f = { .exit_status = end->exit_status,
					   .signalled = end->signal_name != NULL,
					   .timed_out = end->timed_out,
					   .cancelled = end->cancelled_by != NULL, .duration = -1 };
		outcome_policy_of(r, &p);
		o = outcome_judge(&p, &f, NULL);
	}
	if (o != OUTCOME_UNKNOWN)
		record_put(r, "outcome", outcome_word(o));
	return 0;
}

/* A history counter - 1, for a failure taken back; not below 0, and one
 * at its maximum stays (it may stand for more). */
static void count_down(struct record *r, const char *key)
{
	unsigned long long n = record_count(r, key);
	if (n == 1)
		record_drop(r, key);
	else if (n && n < COUNTER_MAX)
		record_put_number(r, key, n - 1);
}

/* KEY = VALUE, or no KEY when VALUE is NULL or "". */
static void put_or_drop(struct record *r, const char *key, const char *value)
{
	if (value && *value)
		record_put(r, key, value);
	else
		record_drop(r, key);
}

void record_to_done_after(struct record *r, time_t now, const struct run_result *end,
			  const char *note, const struct before_run *before)
{
	/* The result this write corrects: a DONE record's, or that of the
	 * failed attempt that waits for its retry (counted when it ended). */
	enum outcome was = record_get(r, "retry_at") ? OUTCOME_FAILED
			 : record_status(r) == ST_DONE ? record_outcome(r) : OUTCOME_UNKNOWN;
	if (record_to_done_counted(r, now, end, note))
		return;
	/* A correction of a cancelled run takes its count back; the run's
	 * new result counts as any other. */
	if (was == OUTCOME_CANCELLED) {
		count_down(r, "cancelled_runs");
		was = OUTCOME_UNKNOWN;
	}
	/* A warning counts once too, whatever the corrections. */
	if (was == OUTCOME_WARNING && record_outcome(r) != OUTCOME_WARNING)
		count_down(r, "warnings");
	switch (record_outcome(r)) {
	case OUTCOME_CANCELLED:
		record_count_up(r, "cancelled_runs");
		break;
	case OUTCOME_FAILED:
		if (was == OUTCOME_FAILED)
			break;
		record_count_up(r, "failures");
		if (was == OUTCOME_OK || was == OUTCOME_WARNING) {
			/* The run was not the last success after all. */
			put_or_drop(r, "last_success", before->last_success);
			put_or_drop(r, "last_success_started", before->last_success_started);
			record_drop(r, "last_success_run");
			put_if(r, "last_success_run", before->last_success_run);
			put_or_drop(r, "last_success_warning", before->last_success_warning ? "1" : NULL);
			record_drop(r, "consecutive_failures");
			put_if(r, "consecutive_failures", before->consecutive_failures);
		}
		record_count_up(r, "consecutive_failures");
		break;
	case OUTCOME_OK:
	case OUTCOME_WARNING:
		if (was == OUTCOME_FAILED)
			count_down(r, "failures");
		if (record_outcome(r) == OUTCOME_WARNING) {
			record_put(r, "last_success_warning", "1");
			if (was != OUTCOME_WARNING)
				record_count_up(r, "warnings");
		} else {
			record_drop(r, "last_success_warning");
		}
		record_put(r, "last_success", record_get(r, "ended"));
		put_or_drop(r, "last_success_started", record_get(r, "started"));
		/* The run's number (SPEC §5d): --after compares these, never
		 * clocks. */
		record_put_number(r, "last_success_run", record_count(r, "runs"));
		record_drop(r, "consecutive_failures");
		break;
	case OUTCOME_UNKNOWN:
		break;
	}
}

void record_to_done(struct record *r, time_t now, const struct run_result *end,
		    const char *note)
{
	static const struct before_run none;
	record_to_done_after(r, now, end, note, &none);
}

void record_count_lost(struct record *r)
{
	record_count_up(r, "failures");
	record_count_up(r, "lost");
	record_count_up(r, "consecutive_failures");
}

void record_set_late(struct record *r, double late_after, time_t now)
{
	if (late_after < 0) {
		record_drop(r, "late_after");
		record_drop(r, "late_from");
		return;
	}
	put_seconds(r, "late_after", late_after);
	if (!record_get(r, "late_from"))
		put_time(r, "late_from", now);
}

double record_overdue_at(const struct record *r)
{
	const char *after = record_get(r, "overdue_after");
	time_t started;
	if (!after || record_status(r) != ST_RUNNING || record_get(r, "retry_at") ||
	    record_time(r, "started", &started) < 0)
		return -1;
	/* started is kept to the second: + 1 s, so no run is overdue early. */
	return (double)started + strtod(after, NULL) + 1;
}

void record_set_overdue(struct record *r, double seconds)
{
	if (seconds < 0)
		record_drop(r, "overdue_after");
	else
		put_seconds(r, "overdue_after", seconds);
}

void record_set_exit_list(struct record *r, const char *key, const char *list)
{
	if (*list)
		record_put(r, key, list);
	else
		record_drop(r, key);
}

void record_set_min_duration(struct record *r, double seconds)
{
	if (seconds > 0)
		put_seconds(r, "min_duration", seconds);
	else
		record_drop(r, "min_duration");
}

void record_set_notify_after(struct record *r, unsigned long long n)
{
	if (n <= 1)
		record_drop(r, "notify_after");
	else
		record_put_number(r, "notify_after", n);
}

void record_set_keep_runs(struct record *r, unsigned long keep)
{
	if (keep == KEEP_RUNS_DEFAULT)
		record_drop(r, "keep_runs");
	else
		record_put_number(r, "keep_runs", keep);
}

unsigned long record_keep_runs(const struct record *r)
{
	const char *v = record_get(r, "keep_runs");
	return v ? strtoul(v, NULL, 10) : KEEP_RUNS_DEFAULT;
}

unsigned long long record_count(const struct record *r, const char *key)
{
	const char *v = record_get(r, key);
	return v ? strtoull(v, NULL, 10) : 0;
}

void record_count_skip(struct record *r, time_t now, const char *reason)
{
	record_count_up(r, "skipped");
	put_time(r, "last_skipped", now);
	record_put(r, "skip_reason", reason);
}

void record_set_every(struct record *r, double every)
{
	put_seconds(r, "every", every);
}

void record_ask_cancel(struct record *r, const char *signal, double kill_after, const char *by,
		       time_t now)
{
	record_put_number(r, "cancel_run", record_count(r, "runs"));
	record_put(r, "cancel_signal", signal);
	put_seconds(r, "cancel_kill_after", kill_after);
	record_put(r, "cancel_by", by);
	put_time(r, "cancel_at", now);
	record_drop(r, "cancel_seen");
	record_drop(r, "cancel_missed");
}

static const char *const pause_keys[] = { "paused_until", "paused_by", "paused_note", NULL };

void record_pause(struct record *r, double until, const char *by, const char *note)
{
	drop_keys(r, pause_keys);
	if (isinf(until)) {
		record_put(r, "paused_until", "inf");
	} else {
		/* Rounded up, so the pause never ends early. */
		time_t t = (time_t)until;
		put_time(r, "paused_until", (double)t < until ? t + 1 : t);
	}
	record_put(r, "paused_by", by);
	if (note)
		record_put(r, "paused_note", note);
}

int record_resume(struct record *r)
{
	return drop_keys(r, pause_keys);
}

void record_pause_copy(struct record *r, const struct record *src)
{
	for (const char *const *k = pause_keys; *k; k++)
		if (record_get(src, *k))
			record_put(r, *k, record_get(src, *k));
}

int record_paused(const struct record *r, double now)
{
	const char *v = record_get(r, "paused_until");
	time_t t;
	if (v && strcmp(v, "inf") == 0)
		return 1;
	return record_time(r, "paused_until", &t) == 0 && (double)t > now;
}

void record_pause_describe(const struct record *r, struct buf *out)
{
	const char *until = record_get(r, "paused_until"), *by = record_get(r, "paused_by");
	const char *note = record_get(r, "paused_note");
	if (until && strcmp(until, "inf") == 0)
		buf_adds(out, "until resumed");
	else
		buf_addf(out, "until %s", until ? until : "?");
	if (by || note)
		buf_addf(out, " (%s%s%s%s)", by ? "by " : "", by ? by : "", by && note ? ": " : "",
			 note ? note : "");
}

int record_duration(const struct record *r, long long *seconds)
{
	time_t from, to;
	if (record_time(r, "started", &from) < 0 || record_time(r, "ended", &to) < 0)
		return -1;
	*seconds = (long long)to - (long long)from;
	return 0;
}

enum outcome record_outcome(const struct record *r)
{
	/* (0.5 writes it; a record made by hand or by 0.4 is judged by its
	 * result keys) */
	const char *o = record_get(r, "outcome");
	if (o)
		return outcome_from_word(o);
	if (record_count(r, "cancelled"))
		return OUTCOME_CANCELLED;
	if (record_get(r, "signal") || record_count(r, "timed_out"))
		return OUTCOME_FAILED;
	if (!record_get(r, "exit"))
		return OUTCOME_UNKNOWN;
	return record_count(r, "exit") == 0 ? OUTCOME_OK : OUTCOME_FAILED;
}

struct run_result record_run_result(const struct record *r)
{
	struct run_result end = { .exit_status = -1 };
	if (record_get(r, "exit")) {
		unsigned long long n = record_count(r, "exit");
		/* Beyond what exit(3) can return: a failure all the same. */
		end.exit_status = n <= 255 ? (int)n : 1;
	}
	end.signal_name = record_get(r, "signal");
	end.timed_out = record_count(r, "timed_out") != 0;
	end.outcome = record_outcome(r);
	/* Cancelled also when a hand-written record does not say by whom. */
	if (record_outcome(r) == OUTCOME_CANCELLED) {
		end.cancelled_by = record_get(r, "cancelled_by");
		if (!end.cancelled_by)
			end.cancelled_by = "?";
	}
	return end;
}

int run_result_status(const struct run_result *e)
{
	/* The record keeps the command's status; the caller sees success. */
	if (e->outcome == OUTCOME_OK || e->outcome == OUTCOME_WARNING)
		return 0;
	if ((e->cancelled_by || e->outcome == OUTCOME_FAILED) && !e->timed_out && !e->signal_name &&
	    e->exit_status <= 0)
		return 1;
	if (e->timed_out)
		return 124;
	if (e->signal_name) {
		int sig = signal_number(e->signal_name);
		return sig > 0 ? 128 + sig : 1;
	}
	return e->exit_status > 0 ? e->exit_status : 0;
}
