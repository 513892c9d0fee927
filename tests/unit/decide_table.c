/* decide_table: every row of step 2 of jobreg-dispatch (SPEC §5 a-f, §5a,
 * §5b) checked against decide(), a function of the record, the liveness
 * answer, the line's facts and the call's options, with no I/O.  Prints
 * one line per row; exits 1 if a row decides otherwise.  Built and run by
 * tests/jobreg-dispatch.bats. */
#include "run/start.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW "2026-12-02T14:00:00Z"

/* The call's options, as letters: o --once, f --retry-failed, w --wait,
 * c --coalesce, r --replace, e --every 1h; --after: after_rows below. */
struct row {
	const char *name;
	enum status status;        /* as liveness judged the record */
	const char *lines;         /* the record after version= and status= ("": none) */
	const char *opts;
	int paused, registry_paused;
	struct line_numbers nums;
	unsigned long long ahead;  /* the nearest live place ahead */
	long place;                /* the call's own place (-1: none) */
	unsigned long long runs_before;
	int slots_held;
	enum step want;
};

/* A row of a call with --after, and the named jobs as it found them. */
struct after_row {
	struct row r;
	const struct after_fact *after;
	size_t nafter;
};

static const char *const step_names[] = {
	[STEP_NOT_DUE] = "not due", [STEP_AFTER] = "not due (--after)",
	[STEP_WAIT_AFTER] = "wait for the named jobs", [STEP_SUPERSEDED] = "superseded", [STEP_WAIT] = "wait",
	[STEP_REFUSE_RUNNING] = "refused: running", [STEP_REFUSE_WAITING] = "refused: waiting",
	[STEP_REPLAY] = "replay", [STEP_PAUSED] = "refused: paused",
	[STEP_TAKE_SLOTS] = "take the slots", [STEP_RUN] = "run",
};

#define NONE (-1)
#define FREE 1      /* no --slots, or every slot held */
#define OK_RUN "runs=3\nexit=0\n"
#define FAILED_RUN "runs=3\nexit=3\n"
#define CANCELLED_RUN "runs=3\nexit=0\ncancelled=1\ncancelled_by=ops@h\n"

/* --after's named jobs: { job, found, running, succeeded, last_success_run, runs }. */
#define AFTER(...) (const struct after_fact[]){ __VA_ARGS__ }, \
	sizeof (const struct after_fact[]){ __VA_ARGS__ } / sizeof (struct after_fact)
#define NO_RECORD(j) { j, 0, 0, 0, 0, 0 }
#define SUCCEEDED(j, run, runs) { j, 1, 0, 1, run, runs }
#define NO_SUCCESS(j, runs) { j, 1, 0, 0, 0, runs }
#define RUNNING(j, run, runs) { j, 1, 1, 1, run, runs }

static const struct row rows[] = {
	{ "no record: run", ST_PENDING, NULL, "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	{ "no record, --slots not yet held: take them first", ST_PENDING, NULL, "", 0, 0, {0}, 0,
	  NONE, 0, 0, STEP_TAKE_SLOTS },
	{ "DONE, no --once: run", ST_DONE, OK_RUN, "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	{ "STALE: run (taken over)", ST_STALE, "runs=3\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	{ "--every 1h, last success started 30 min ago: not due", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T13:30:00Z\n", "e", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_NOT_DUE },
	{ "--every 1h, last success started 2 h ago: run", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T12:00:00Z\n", "e", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_RUN },
	{ "--every 1h, a live run started 30 min ago: not due", ST_RUNNING,
	  "started=2026-12-02T13:30:00Z\n", "e", 0, 0, {0}, 0, NONE, 0, FREE, STEP_NOT_DUE },
	{ "--every 1h, no success yet: run", ST_DONE, FAILED_RUN, "e", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_RUN },
	{ "--every 1h, not due and paused: not due first", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T13:30:00Z\n", "e", 1, 0, {0}, 0, NONE, 0, FREE,
	  STEP_NOT_DUE },
	{ "a place below replaced_below: superseded", ST_RUNNING, "runs=3\n", "w", 0, 0,
	  { 9, 5, 8 }, 0, 7, 2, FREE, STEP_SUPERSEDED },
	{ "a place at replaced_below, the run going: wait", ST_RUNNING, "runs=3\n", "r", 0, 0,
	  { 9, 5, 8 }, 0, 8, 2, FREE, STEP_WAIT },
	{ "a live run, no wait: refused (running)", ST_RUNNING, "runs=3\n", "", 0, 0, {0}, 0, NONE,
	  0, FREE, STEP_REFUSE_RUNNING },
	{ "a live run, paused, no wait: refused (running)", ST_RUNNING, "runs=3\n", "", 1, 0, {0}, 0,
	  NONE, 0, FREE, STEP_REFUSE_RUNNING },
	{ "waiters ahead, no wait: refused (waiting)", ST_DONE, OK_RUN, "", 0, 0, { 6, 5, 0 }, 5,
	  NONE, 0, FREE, STEP_REFUSE_WAITING },
	{ "a live run, --wait: wait", ST_RUNNING, "runs=3\n", "w", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_WAIT },
	{ "a live run, --once: wait", ST_RUNNING, "runs=3\n", "o", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_WAIT },
	{ "a live run, --coalesce: wait", ST_RUNNING, "runs=3\n", "c", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_WAIT },
	{ "a live run, --replace: wait (and replace)", ST_RUNNING, "runs=3\n", "r", 0, 0, {0}, 0,
	  NONE, 0, FREE, STEP_WAIT },
	{ "waiters ahead, --wait: wait", ST_PENDING, "", "w", 0, 0, { 6, 5, 0 }, 5, NONE, 0, FREE,
	  STEP_WAIT },
	{ "a waiter with a live place ahead: wait", ST_PENDING, "", "w", 0, 0, { 8, 5, 0 }, 6, 7, 0,
	  FREE, STEP_WAIT },
	{ "a waiter whose turn came, the run over: run", ST_DONE, OK_RUN, "w", 0, 0, { 8, 7, 0 }, 0,
	  7, 2, FREE, STEP_RUN },
	{ "a --replace of a paused job with a live run: refused (paused), the run left alone",
	  ST_RUNNING, "runs=3\n", "r", 1, 0, {0}, 0, NONE, 0, FREE, STEP_PAUSED },
	{ "a --replace of a job the registry pauses, waiters ahead: refused (paused)", ST_PENDING,
	  "", "r", 0, 1, { 6, 5, 0 }, 5, NONE, 0, FREE, STEP_PAUSED },
	{ "DONE OK, --once: replay", ST_DONE, OK_RUN, "o", 0, 0, {0}, 0, NONE, 0, FREE, STEP_REPLAY },
	{ "DONE FAILED, --once: replay", ST_DONE, FAILED_RUN, "o", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_REPLAY },
	{ "DONE OK, paused, --once: replay (a pause stops runs, not answers)", ST_DONE, OK_RUN, "o", 1,
	  1, {0}, 0, NONE, 0, FREE, STEP_REPLAY },
	{ "DONE OK, --once --retry-failed: replay", ST_DONE, OK_RUN, "of", 0, 0, {0}, 0, NONE, 0,
	  FREE, STEP_REPLAY },
	{ "DONE FAILED, --once --retry-failed: run", ST_DONE, FAILED_RUN, "of", 0, 0, {0}, 0, NONE, 0,
	  FREE, STEP_RUN },
	{ "DONE CANCELLED, --once --retry-failed: run", ST_DONE, CANCELLED_RUN, "of", 0, 0, {0}, 0,
	  NONE, 0, FREE, STEP_RUN },
	{ "DONE FAILED, --once --retry-failed after waiting for that run: replay", ST_DONE,
	  FAILED_RUN, "of", 0, 0, { 8, 7, 0 }, 0, 7, 2, FREE, STEP_REPLAY },
	{ "DONE FAILED, --once --retry-failed, the waiter ahead left without a run: run", ST_DONE,
	  FAILED_RUN, "of", 0, 0, { 8, 7, 0 }, 0, 7, 3, FREE, STEP_RUN },
	{ "DONE FAILED, --once --retry-failed, paused: refused (paused)", ST_DONE, FAILED_RUN, "of", 1,
	  0, {0}, 0, NONE, 0, FREE, STEP_PAUSED },
	{ "paused by its record: refused (paused)", ST_PENDING, "", "", 1, 0, {0}, 0, NONE, 0, FREE,
	  STEP_PAUSED },
	{ "paused by the registry, no record: refused (paused)", ST_PENDING, NULL, "", 0, 1, {0}, 0,
	  NONE, 0, FREE, STEP_PAUSED },
	{ "paused, --slots not held: refused (paused), no slot taken", ST_PENDING, "", "w", 1, 0,
	  {0}, 0, NONE, 0, 0, STEP_PAUSED },
};

static const struct after_row after_rows[] = {
	{ { "--after a job with no record: not due", ST_PENDING, NULL, "", 0, 0, {0}, 0, NONE, 0,
	  FREE, STEP_AFTER }, AFTER(NO_RECORD("backup")) },
	{ { "--after a job with no success yet: not due", ST_PENDING, NULL, "", 0, 0, {0}, 0, NONE, 0,
	  FREE, STEP_AFTER }, AFTER(NO_SUCCESS("backup", 2)) },
	{ { "--after a job with a success, none followed yet: run", ST_PENDING, NULL, "", 0, 0, {0}, 0,
	  NONE, 0, FREE, STEP_RUN }, AFTER(SUCCEEDED("backup", 41, 41)) },
	{ { "--after a job whose success the last run followed: not due", ST_DONE,
	  OK_RUN "after_seen=backup:41\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_AFTER },
	  AFTER(SUCCEEDED("backup", 41, 43)) },
	{ { "--after a job with a newer success: run", ST_DONE, OK_RUN "after_seen=backup:41\n", "", 0,
	  0, {0}, 0, NONE, 0, FREE, STEP_RUN }, AFTER(SUCCEEDED("backup", 42, 43)) },
	{ { "--after a job with a newer success, running again: not due", ST_DONE,
	  OK_RUN "after_seen=backup:41\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_AFTER },
	  AFTER(RUNNING("backup", 42, 44)) },
	{ { "--after a STALE job with a newer success (not running): run", ST_DONE,
	  OK_RUN "after_seen=backup:41\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	  AFTER({ "backup", 1, 0, 1, 42, 44 }) },
	{ { "--after a job cleared since (entry above its runs), a success: run", ST_DONE,
	  OK_RUN "after_seen=backup:41\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	  AFTER(SUCCEEDED("backup", 2, 3)) },
	{ { "--after a job cleared since, no success yet: not due", ST_DONE,
	  OK_RUN "after_seen=backup:41\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_AFTER },
	  AFTER(NO_SUCCESS("backup", 1)) },
	{ { "--after two jobs, only one with a newer success: not due", ST_DONE,
	  OK_RUN "after_seen=backup:41,dump:7\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_AFTER },
	  AFTER(SUCCEEDED("backup", 42, 42), SUCCEEDED("dump", 7, 7)) },
	{ { "--after two jobs, both with a newer success: run", ST_DONE,
	  OK_RUN "after_seen=backup:41,dump:7\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	  AFTER(SUCCEEDED("backup", 42, 42), SUCCEEDED("dump", 8, 8)) },
	{ { "--after, an entry of another job only: any success counts", ST_DONE,
	  OK_RUN "after_seen=dump:7\n", "", 0, 0, {0}, 0, NONE, 0, FREE, STEP_RUN },
	  AFTER(SUCCEEDED("backup", 1, 1)) },
	{ { "--after not due, --wait: wait for the named jobs", ST_DONE, OK_RUN "after_seen=backup:41\n",
	  "w", 0, 0, {0}, 0, NONE, 0, FREE, STEP_WAIT_AFTER }, AFTER(RUNNING("backup", 41, 42)) },
	{ { "--after not due, a place in line whose turn came, --wait: wait for the named jobs",
	  ST_DONE, OK_RUN "after_seen=backup:41\n", "w", 0, 0, { 8, 7, 0 }, 0, 7, 2, FREE,
	  STEP_WAIT_AFTER }, AFTER(SUCCEEDED("backup", 41, 42)) },
	{ { "--after not due and the job running: not due (2a before 2c)", ST_RUNNING, "runs=3\n", "",
	  0, 0, {0}, 0, NONE, 0, FREE, STEP_AFTER }, AFTER(NO_RECORD("backup")) },
	{ { "--after due and the job running: refused (running)", ST_RUNNING, "runs=3\n", "", 0, 0,
	  {0}, 0, NONE, 0, FREE, STEP_REFUSE_RUNNING }, AFTER(SUCCEEDED("backup", 1, 1)) },
	{ { "--after not due and paused: not due", ST_PENDING, "", "", 1, 0, {0}, 0, NONE, 0, FREE,
	  STEP_AFTER }, AFTER(NO_RECORD("backup")) },
	{ { "--every not due, --after due: not due (--every)", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T13:30:00Z\n", "e", 0, 0, {0}, 0, NONE, 0, FREE,
	  STEP_NOT_DUE }, AFTER(SUCCEEDED("backup", 1, 1)) },
	{ { "--every due, --after not due: not due (--after)", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T12:00:00Z\nafter_seen=backup:1\n", "e", 0, 0, {0},
	  0, NONE, 0, FREE, STEP_AFTER }, AFTER(SUCCEEDED("backup", 1, 1)) },
	{ { "--every due, --after due: run", ST_DONE,
	  OK_RUN "last_success_started=2026-12-02T12:00:00Z\nafter_seen=backup:1\n", "e", 0, 0, {0},
	  0, NONE, 0, FREE, STEP_RUN }, AFTER(SUCCEEDED("backup", 2, 2)) },
};

/* Row W (with the named jobs AFTER of --after): 1 when decide() agrees. */
static int check(const struct row *w, const struct after_fact *after, size_t nafter, time_t now)
{
	struct run_request req = { .job = "job" };
	struct job_state st = { .status = w->status, .found = w->lines != NULL,
				.paused = w->paused };
	struct turn t = { .place = PLACE_NONE, .coalesce_fd = -1,
			  .runs_before = w->runs_before };
	struct buf text = {0};
	const char *why;
	req.once = strchr(w->opts, 'o') != NULL;
	req.retry_failed = strchr(w->opts, 'f') != NULL;
	req.wait = strchr(w->opts, 'w') != NULL;
	req.coalesce = strchr(w->opts, 'c') != NULL;
	req.replace = strchr(w->opts, 'r') != NULL;
	req.every = strchr(w->opts, 'e') ? 3600 : 0;
	if (w->place >= 0)
		t.place = (struct place){ (unsigned long long)w->place, 3 };
	record_init(&st.rec);
	if (w->lines) {
		buf_addf(&text, "version=1\nstatus=%s\n%s",
			 status_word(w->status == ST_STALE ? ST_RUNNING : w->status), w->lines);
		if (record_parse(&st.rec, text.data, text.len, &why) < 0) {
			printf("WRONG %s: the row's record: %s\n", w->name, why);
			exit(2);
		}
	}
	struct decide_facts f = { .st = &st, .registry_paused = w->registry_paused,
				  .nums = w->nums, .ahead = w->ahead, .t = &t,
				  .slots_held = w->slots_held, .now = (double)now,
				  .after = after, .nafter = nafter };
	enum step got = decide(&req, &f);
	int ok = got == w->want;
	printf("%s %s: %s\n", ok ? "ok" : "WRONG", w->name, step_names[got]);
	record_free(&st.rec);
	buf_free(&text);
	return ok;
}

int main(void)
{
	time_t now;
	int bad = 0;
	if (time_parse(NOW, &now) < 0)
		return 2;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		bad |= !check(&rows[i], NULL, 0, now);
	for (size_t i = 0; i < sizeof after_rows / sizeof after_rows[0]; i++)
		bad |= !check(&after_rows[i].r, after_rows[i].after, after_rows[i].nafter, now);
	return bad;
}
