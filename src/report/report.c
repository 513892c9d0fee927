/* report: jobreg-get --report (see report.h).  Past 450 lines: the
 * report's lines, their order and sums, and the slot waiters they name
 * share the one view built here. */
#include "report/report.h"
#include "registry/audit.h"
#include "record/transition.h"
#include "registry/chain.h"
#include "registry/history.h"
#include "registry/line.h"
#include "registry/listing.h"
#include "registry/openat.h"
#include "registry/slots.h"
#include "report/format.h"
#include "util/msg.h"
#include "util/utf8.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAIL 4096   /* bytes of a log read to find its last line */
#define LOG_SHOWN 120   /* bytes of that line shown, at most */

/* What a job's line says besides its state. */
struct report_facts {
	char *log_line;         /* the last line of its log (NULL: none) */
	int last_lost;          /* its last run was lost, by its history */
	unsigned long long waiting;          /* live waiters in its line */
	const struct slot_wait *slot_wait;   /* its call waiting for a slot */
	char *after;            /* ", after b" (--after, SPEC §5d), or NULL */
	struct buf pause_set;   /* "set 2h ago by bob as root", from the audit log */
};

void report_init(struct report *rp, double now, int colour)
{
	*rp = (struct report){ .now = now, .colour = colour };
}

/* BEFORE, SECONDS as a person reads it in the two largest units ("45s",
 * "5m3s", "2h10m", "3d4h"), then AFTER. */
static void report_duration(struct buf *out, const char *before, double seconds,
			    const char *after)
{
	static const struct { long long size; char unit; } units[] = {
		{ 86400, 'd' }, { 3600, 'h' }, { 60, 'm' }, { 1, 's' },
	};
	long long s = seconds > 0 ? (long long)seconds : 0;
	size_t i = 0;
	buf_adds(out, before);
	while (i + 1 < 4 && s < units[i].size)
		i++;
	buf_addf(out, "%lld%c", s / units[i].size, units[i].unit);
	long long rest = i + 1 < 4 ? s % units[i].size / units[i + 1].size : 0;
	if (rest)
		buf_addf(out, "%lld%c", rest, units[i + 1].unit);
	buf_adds(out, after);
}

/* Seconds from the record's time KEY to NOW into *AGE; -1 without it. */
static int age_of(const struct record *r, const char *key, double now, double *age)
{
	time_t t;
	if (record_time(r, key, &t) < 0)
		return -1;
	*age = now - (double)t;
	return 0;
}

/* How a FAILED run ended: "FAILED exit 3", "killed by SIGTERM", "timed out after 1h". */
static void why_failed(struct buf *why, const struct record *r)
{
	struct run_result end = record_run_result(r);
	if (end.timed_out) {
		buf_adds(why, "timed out");
		const char *limit = record_get(r, "timeout");
		if (limit) {
			/* A limit under a second, or not whole, as given (0.5s). */
			double t = strtod(limit, NULL);
			if (t >= 1 && t == (double)(long long)t)
				report_duration(why, " after ", t, "");
			else
				buf_addf(why, " after %gs", t);
		}
	} else if (end.signal_name) {
		buf_addf(why, "killed by SIG%s", end.signal_name);
	} else {
		buf_addf(why, "FAILED exit %d", end.exit_status);
	}
}

/* How a WARNING run ended: "warning: exit 24", or under its
 * min_duration (SPEC §2 Warnings) "warning: took 0s, under 5s". */
static void why_warned(struct buf *why, const struct record *r)
{
	struct run_result end = record_run_result(r);
	long long seconds;
	const char *min = record_get(r, "min_duration");
	buf_adds(why, "warning");
	if (min && record_duration(r, &seconds) == 0 && (double)seconds < strtod(min, NULL)) {
		report_duration(why, ": took ", (double)seconds, "");
		report_duration(why, ", under ", strtod(min, NULL), "");
	} else if (end.exit_status >= 0) {
		buf_addf(why, ": exit %d", end.exit_status);
	}
}

/* Why the job is in its state, but for LATE and a pause; *RESULT 1 when
 * it says how the job's last run ended (else a FAILED or WARNING health
 * is said after it). */
static void why_state(const struct job_state *st, const struct report_facts *f, double now,
		      struct buf *why, int *result)
{
	const struct record *r = st->found ? &st->rec : NULL;
	const char *host = r ? record_get(r, "host") : NULL;
	double age;

	*result = 1;
	switch (st->status) {
	case ST_CORRUPT:
		buf_adds(why, "corrupt record");
		return;
	case ST_UNREADABLE:
		buf_adds(why, "cannot be read");
		return;
	case ST_STALE: {
		const char *since = record_get(r, "since");
		buf_addf(why, "STALE since %s", since ? since : "?");
		if (host)
			buf_addf(why, " on %s", host);
		return;
	}
	case ST_RUNNING:
		buf_adds(why, st->overdue ? "overdue: running" : "running");
		if (age_of(r, "started", now, &age) == 0)
			report_duration(why, " for ", age, "");
		if (host)
			buf_addf(why, " on %s", host);
		*result = 0;
		return;
	case ST_DONE:
		switch (record_outcome(r)) {
		case OUTCOME_OK:
			buf_adds(why, "OK");
			return;
		case OUTCOME_WARNING:
			why_warned(why, r);
			return;
		case OUTCOME_FAILED:
			why_failed(why, r);
			return;
		case OUTCOME_CANCELLED: {
			/* (a cancelled run changes no health: the one before says it) */
			const char *by = record_get(r, "cancelled_by");
			buf_adds(why, "cancelled");
			if (by)
				buf_addf(why, " by %s", by);
			*result = 0;
			return;
		}
		default:
			break;
		}
		break;
	default:
		break;
	}
	/* PENDING, or DONE with no result: after a failure (a lost run
	 * reset, or a failed one), the job's last run failed. */
	if (r && record_count(r, "consecutive_failures") > 0) {
		buf_adds(why, f->last_lost ? "lost" : "failed");
		return;
	}
	buf_adds(why, st->status == ST_DONE ? "no result recorded" : "pending");
	*result = 0;
}

/* The log line as a terminal may show it: at most LOG_SHOWN bytes, cut
 * on a character boundary, escaped (text_escape()). */
static char *shown_line(const char *line)
{
	size_t len = strlen(line);
	struct buf s = {0};
	if (len > LOG_SHOWN) {
		int utf8 = utf8_valid(line, len);
		len = LOG_SHOWN;
		while (utf8 && len > 0 && ((unsigned char)line[len] & 0xC0) == 0x80)
			len--;
	}
	text_escape(&s, line, len, ESCAPE_TEXT);
	return s.data ? s.data : xstrdup("");
}

/* N as "1st", "2nd", "3rd", "4th", "11th", "21st". */
static void ordinal(struct buf *out, size_t n)
{
	static const char *const ends[] = { "th", "st", "nd", "rd" };
	size_t last = n % 10;
	buf_addf(out, "%zu%s", n, n % 100 / 10 == 1 || last > 3 ? "th" : ends[last]);
}

/* Who waits, the last skip, the next due time: ", 3 waiting", ", waiting
 * for slot heavy, 2nd in line", ", skipped 5m ago: no-slot", ", next due
 * T".  Of a pending job they say more than "pending": they replace it. */
static void why_waits(struct buf *why, const struct record *r, const struct report_facts *f,
		      enum status status, double now)
{
	struct buf more = {0};
	double skipped, since;
	char due[21];
	if (f->waiting)
		buf_addf(&more, ", %llu waiting", f->waiting);
	if (f->slot_wait) {
		buf_addf(&more, ", waiting for slot %s, ", f->slot_wait->group);
		ordinal(&more, f->slot_wait->position);
		buf_adds(&more, " in line");
	}
	/* A call refused since the job's last transition. */
	if (age_of(r, "last_skipped", now, &skipped) == 0 &&
	    (age_of(r, "since", now, &since) < 0 || skipped <= since)) {
		const char *reason = record_get(r, "skip_reason");
		report_duration(&more, ", skipped ", skipped, " ago");
		if (reason && *reason)
			buf_addf(&more, ": %s", reason);
	}
	if (f->after)
		buf_adds(&more, f->after);
	int due_known = format_next_due(r, due);
	if (due_known == 1)
		buf_addf(&more, ", next due %s", due);
	else if (due_known == 0 && status != ST_RUNNING)
		buf_adds(&more, ", due now");
	if (more.len && strcmp(why->data, "pending") == 0) {
		buf_reset(why);
		buf_adds(why, more.data + 2);
	} else if (more.len) {
		buf_adds(why, more.data);
	}
	buf_free(&more);
}

/* The kind of each health (enum health, best first). */
static const enum report_kind health_kinds[HEALTH_COUNT] = {
	[HEALTH_OK] = RK_OK, [HEALTH_WARNING] = RK_WARNING, [HEALTH_LATE] = RK_LATE,
	[HEALTH_FAILED] = RK_FAILED, [HEALTH_OVERDUE] = RK_OVERDUE, [HEALTH_STALE] = RK_STALE,
};

static void report_add(struct report *rp, const char *job, const struct job_state *st,
		       const struct report_facts *facts)
{
	int usable = st->status != ST_CORRUPT && st->status != ST_UNREADABLE;
	const struct record *r = st->found && usable ? &st->rec : NULL;
	struct buf why = {0}, part = {0}, success = {0}, took = {0};
	enum report_kind kind = st->status == ST_CORRUPT ? RK_CORRUPT
		: st->status == ST_UNREADABLE ? RK_UNREADABLE
		: health_kinds[jobstate_health(st, 0)];
	int result;
	double age;

	why_state(st, facts, rp->now, &part, &result);
	/* Late is no status: said first when it is the job's health. */
	if (kind == RK_LATE) {
		report_duration(&why, "LATE by ", rp->now - st->late_at, "");
		if (strcmp(part.data, "pending") != 0)
			buf_addf(&why, ", %s", part.data);
	} else {
		buf_adds(&why, part.data);
		if (st->late)
			report_duration(&why, ", LATE by ", rp->now - st->late_at, "");
	}
	/* The health that a running or cancelled run leaves as it was. */
	if (!result && kind == RK_FAILED)
		buf_adds(&why, ", last run failed");
	else if (!result && kind == RK_WARNING)
		buf_adds(&why, ", last run a warning");
	/* So is a pause, the job's own or the registry's, in dispatch's
	 * words; it says more than "pending". */
	if (st->paused && usable) {
		if (strcmp(why.data, "pending") == 0)
			buf_reset(&why);
		else
			buf_adds(&why, ", ");
		buf_adds(&why, st->registry_pause ? "registry paused " : "paused ");
		record_pause_describe(jobstate_pause(st), &why);
		if (facts->pause_set.len)
			buf_addf(&why, ", %s", facts->pause_set.data);
	}
	why_waits(&why, r, facts, st->status, rp->now);
	if (age_of(r, "last_success", rp->now, &age) == 0)
		report_duration(&success, "last ok ", age, " ago");
	else
		buf_adds(&success, r ? "never ok" : "-");   /* no record: never seen */
	long long seconds;
	if (st->status == ST_DONE && record_duration(r, &seconds) == 0)
		report_duration(&took, "took ", (double)seconds, "");
	else
		buf_adds(&took, "-");

	if (rp->n == rp->cap) {
		rp->cap = rp->cap ? 2 * rp->cap : 32;
		rp->lines = xrealloc(rp->lines, rp->cap * sizeof *rp->lines);
	}
	/* The record's text in it (a host, a note, a user@host) escaped. */
	buf_reset(&part);
	text_escape(&part, why.data, why.len, ESCAPE_TEXT);
	buf_free(&why);
	rp->lines[rp->n++] = (struct report_line){
		.col = { xstrdup(job), xstrdup(status_word(st->status)), part.data, success.data,
			 took.data, facts->log_line ? shown_line(facts->log_line) : NULL },
		.kind = kind, .running = st->status == ST_RUNNING, .paused = st->paused && usable,
	};
}

static int by_severity(const void *a, const void *b)
{
	const struct report_line *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->col[RC_JOB], y->col[RC_JOB]);
}

static const char *const colours[RK_KINDS] = {
	[RK_CORRUPT] = "\033[1;31m", [RK_UNREADABLE] = "\033[1;31m", [RK_STALE] = "\033[1;31m",
	[RK_OVERDUE] = "\033[1;31m", [RK_FAILED] = "\033[1;31m", [RK_LATE] = "\033[33m",
	[RK_WARNING] = "\033[35m", [RK_OK] = "\033[32m",
};

/* The summary's words, in the order of the kinds. */
static const char *const summary[RK_KINDS] = {
	[RK_CORRUPT] = "corrupt", [RK_UNREADABLE] = "unreadable", [RK_STALE] = "stale",
	[RK_OVERDUE] = "overdue", [RK_FAILED] = "failed", [RK_LATE] = "late",
	[RK_WARNING] = "warning", [RK_OK] = "ok",
};

void report_finish(struct report *rp, struct buf *out)
{
	size_t width[RC_LOG] = {0}, count[RK_KINDS] = {0}, running = 0, paused = 0;
	if (rp->n > 1)
		qsort(rp->lines, rp->n, sizeof *rp->lines, by_severity);
	for (size_t i = 0; i < rp->n; i++) {
		for (int c = 0; c < RC_LOG; c++)
			if (strlen(rp->lines[i].col[c]) > width[c])
				width[c] = strlen(rp->lines[i].col[c]);
		count[rp->lines[i].kind]++;
		running += rp->lines[i].running;
		paused += rp->lines[i].paused;
	}
	for (size_t i = 0; i < rp->n; i++) {
		const struct report_line *l = &rp->lines[i];
		size_t start = out->len;
		/* Each column padded to its width and two spaces; the log's is last. */
		for (int c = 0; c < RC_LOG; c++) {
			if (c == RC_WHY && rp->colour && colours[l->kind])
				buf_addf(out, "%s%s\033[0m", colours[l->kind], l->col[c]);
			else
				buf_adds(out, l->col[c]);
			for (size_t n = strlen(l->col[c]); n < width[c] + 2; n++)
				buf_addc(out, ' ');
		}
		if (l->col[RC_LOG])
			buf_adds(out, l->col[RC_LOG]);
		while (out->len > start && out->data[out->len - 1] == ' ')
			out->data[--out->len] = '\0';
		buf_addc(out, '\n');
	}
	buf_addf(out, "%zu job%s", rp->n, rp->n == 1 ? "" : "s");
	const char *sep = ": ";
	for (int k = 0; k < RK_KINDS; k++)
		if (count[k]) {
			/* (the one noun among the adjectives: "2 warnings") */
			buf_addf(out, "%s%zu %s%s", sep, count[k], summary[k],
				 k == RK_WARNING && count[k] > 1 ? "s" : "");
			sep = ", ";
		}
	if (running)
		buf_addf(out, "; %zu running", running);
	if (paused)
		buf_addf(out, "%s%zu paused", running ? ", " : "; ", paused);
	buf_addc(out, '\n');
}

void report_free(struct report *rp)
{
	buf_free(&rp->audit);
	for (size_t i = 0; i < rp->n; i++)
		for (int c = 0; c < RC_COLUMNS; c++)
			free(rp->lines[i].col[c]);
	free(rp->lines);
	for (size_t i = 0; i < rp->nwaits; i++) {
		free(rp->waits[i].job);
		free(rp->waits[i].group);
	}
	free(rp->waits);
	*rp = (struct report){0};
}

/* The last line of JOB's latest log, from its last LOG_TAIL bytes
 * (NULL: no log, an empty one, or one that cannot be read). */
static char *log_last_line(const struct registry *reg, const char *job)
{
	char *name = reg_dot_name(job, ".log");
	struct stat sb;
	int fd = -1;
	int got = reg->fd < 0 ? -1 : entry_open(reg->fd, name, O_RDONLY, &fd, &sb);
	free(name);
	if (got != 0)
		return NULL;
	off_t from = sb.st_size > LOG_TAIL ? sb.st_size - LOG_TAIL : 0;
	char *tail = xmalloc(LOG_TAIL + 1);
	ssize_t n = lseek(fd, from, SEEK_SET) < 0 ? -1 : read_full(fd, tail, LOG_TAIL);
	size_t len = n > 0 ? (size_t)n : 0;
	close_fd(fd);
	while (len > 0 && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
		len--;
	tail[len] = '\0';
	size_t start = len;
	while (start > 0 && tail[start - 1] != '\n')
		start--;
	/* A line longer than the tail: its end, from a character's start. */
	while (start == 0 && from > 0 && start < len && ((unsigned char)tail[start] & 0xC0) == 0x80)
		start++;
	char *line = len > start ? xstrdup(tail + start) : NULL;
	free(tail);
	return line;
}

/* Was JOB's last run lost (its history's last line)?  Into *LOST; an exit status. */
static int last_run_lost(const struct registry *reg, const char *job, int *lost)
{
	struct buf data = {0};
	int found, rc = history_read(reg, job, &data, &found);
	*lost = 0;
	if (rc == 0 && found) {
		const char *line = NULL, *l, *v;
		size_t pos = 0, len = 0, n, vlen;
		while (history_next(&data, &pos, &l, &n)) {
			line = l;
			len = n;
		}
		*lost = line && history_get(line, len, "outcome", &v, &vlen) && vlen == 4 &&
			memcmp(v, "LOST", 4) == 0;
	}
	buf_free(&data);
	return rc;
}

static int by_job(const void *a, const void *b)
{
	return strcmp(((const struct slot_wait *)a)->job, ((const struct slot_wait *)b)->job);
}

/* By job, then in the order found. */
static int by_job_found(const void *a, const void *b)
{
	const struct slot_wait *x = a, *y = b;
	int c = by_job(a, b);
	return c ? c : (x->found > y->found) - (x->found < y->found);
}

int report_slot_waits(const struct registry *reg, struct report *rp, const struct listing *l)
{
	int status = 0;
	char *last = NULL;
	/* (the listing is sorted: a group's slot files come together) */
	for (size_t i = 0; i < l->nslots; i++) {
		char *group;
		if (!slot_file_parse(l->slots[i], &group, NULL))
			continue;
		if (last && strcmp(last, group) == 0) {
			free(group);
			continue;
		}
		free(last);
		last = group;
		struct line_entries line;
		keep_first(&status, line_group_list(reg, group, &line));
		for (size_t k = 0; k < line.count; k++) {
			if (strcmp(line.e[k].first, "-") == 0)
				continue;
			size_t at = rp->nwaits++;
			rp->waits = xrealloc(rp->waits, rp->nwaits * sizeof *rp->waits);
			rp->waits[at] = (struct slot_wait){
				.job = xstrdup(line.e[k].first), .group = xstrdup(group),
				.position = k + 1, .found = at,
			};
		}
		line_entries_free(&line);
	}
	free(last);
	/* By job, each job's first wait kept, for bsearch(). */
	if (rp->nwaits > 1)
		qsort(rp->waits, rp->nwaits, sizeof *rp->waits, by_job_found);
	size_t kept = 0;
	for (size_t i = 0; i < rp->nwaits; i++) {
		if (kept && by_job(&rp->waits[kept - 1], &rp->waits[i]) == 0) {
			free(rp->waits[i].job);
			free(rp->waits[i].group);
		} else {
			rp->waits[kept++] = rp->waits[i];
		}
	}
	rp->nwaits = kept;
	return status;
}

/* What JOB waits for by its list AFTER (NULL: none): ", after a,b", and
 * " (waits for itself through b)" when the chain leads back (SPEC §5d). */
static char *after_said(const struct registry *reg, const char *job, const char *after)
{
	struct buf said = {0}, through = {0};
	if (!after)
		return NULL;
	buf_addf(&said, ", after %s", after);
	if (chain_loops(reg, job, after, &through))
		buf_addf(&said, " (waits for itself through %s)", through.len ? through.data : job);
	buf_free(&through);
	return said.data;
}

/* When JOB's pause (NULL: the registry's) was set and by whom, from its
 * last pause line on the audit log (SPEC §3c: the record keeps no time),
 * into OUT; nothing without one.  The log is diagnostics here: one that
 * cannot be read is said, and the line goes without. */
static void pause_set(const struct registry *reg, struct report *rp, const char *job,
		      struct buf *out)
{
	struct buf when = {0}, who = {0};
	time_t t;
	if (!rp->audit_read)
		(void)audit_read(reg, &rp->audit);
	rp->audit_read = 1;
	if (rp->audit.len && audit_last(rp->audit.data, rp->audit.len, job, "pause", &when, &who) &&
	    time_parse(when.data, &t) == 0)
		report_duration(out, "set ", rp->now - (double)t, " ago by ");
	if (out->len)
		buf_adds(out, who.data);
	buf_free(&when);
	buf_free(&who);
}

int report_job(const struct registry *reg, struct report *rp, const char *job,
	       const struct job_state *st)
{
	struct report_facts f = {0};
	struct slot_wait key = { .job = (char *)job };
	f.slot_wait = rp->nwaits ? bsearch(&key, rp->waits, rp->nwaits, sizeof key, by_job) : NULL;
	int rc = 0;
	if (st->found) {
		f.log_line = log_last_line(reg, job);
		/* Only a record that holds no result of a failed run asks. */
		if ((st->status == ST_PENDING ||
		     (st->status == ST_DONE && record_outcome(&st->rec) == OUTCOME_UNKNOWN)) &&
		    record_count(&st->rec, "consecutive_failures") > 0)
			rc = last_run_lost(reg, job, &f.last_lost);
		f.waiting = line_waiting(reg, job, &st->rec);
		f.after = after_said(reg, job, record_get(&st->rec, "after"));
	}
	if (st->paused)
		pause_set(reg, rp, st->registry_pause ? NULL : job, &f.pause_set);
	report_add(rp, job, st, &f);
	buf_free(&f.pause_set);
	free(f.log_line);
	free(f.after);
	return rc;
}

int report_line(const struct registry *reg, const char *job, const struct job_state *st,
		struct buf *out)
{
	struct report rp;
	struct buf all = {0};
	report_init(&rp, now_real(), 0);
	int rc = report_job(reg, &rp, job, st);
	report_finish(&rp, &all);
	report_free(&rp);
	/* The first line: the job's; the summary follows it. */
	buf_add(out, all.data, strcspn(all.data, "\n"));
	buf_free(&all);
	return rc;
}
