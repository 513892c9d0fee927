/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)).  Here, in the order of the man page: the options,
 * the decision and the start of a run (steps 1-4); its attempts and its
 * end (steps 5 and 6) are attempts.c's, and what stands alone lives in
 * runrecord.c, supervise.c and logrelay.c. */
#include "cmd/cli.h"
#include "run/attempts.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "run/runrecord.h"
#include "liveness/facts.h"
#include "liveness/proc.h"
#include "record/record.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "registry/slots.h"
#include "registry/write.h"
#include "report/slotview.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "run/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-dispatch [-q] [-d DIR] [-w SECONDS] [--once [--retry-failed] | --clear]"
	" [--wait DURATION] [--slots NAME:N]... [--timeout DURATION [--kill-after DURATION] [--signal SIG]]"
	" [--retries N [--retry-delay DURATION]] [--log | --chronic] [--log-size SIZE]"
	" [--late-after DURATION] [--keep-runs N] [-E CODE] [-m NOTE] JOB [--] COMMAND [ARG...]";
static const char help[] =
	"Run COMMAND as the one live run of JOB, recording RUNNING and then DONE.\n"
	"      --once        do not run if JOB is DONE: replay its result (0, or the\n"
	"                    failed run's status); wait for a run in progress\n"
	"      --retry-failed  with --once: run again if the DONE run failed\n"
	"      --clear       remove the record after the run instead of writing DONE\n"
	"      --wait D      if JOB is running, wait (at most D, inf: no limit), then\n"
	"                    start over\n"
	"      --slots NAME:N  run only with one of N slots of group NAME free\n"
	"                    (repeatable); if none: 75, or wait in line (--wait, --once)\n"
	"      --timeout D   send COMMAND's process group SIG if it runs longer than D\n"
	"      --kill-after K  and KILL K later;  --signal SIG  (default TERM)\n"
	"      --retries N   run a FAILED run again, up to N more times, waiting\n"
	"      --retry-delay D  D before the first retry (default 10s), doubling\n"
	"      --log         keep the run's output in DIR/.JOB.log (and pass it on)\n"
	"      --chronic     keep it, pass nothing on, and print it if the run FAILED\n"
	"      --log-size S  keep at least the last S bytes (default 1M; k, M, G)\n"
	"      --late-after D  the job is late D after its last success (inf: never)\n"
	"      --keep-runs N the history keeps the last N runs (default 20, 0: none)\n"
	"  -E, --conflict-exit-code CODE  exit CODE (not 75) if JOB is running\n"
	"  -m, --note NOTE   the note of this run\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for a lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: COMMAND's status (128+N if killed by signal N; 126 not executable,\n"
	"127 not found); 124 its time limit ended it; --once on a DONE job: 0, or\n"
	"the failed run's status; 64 usage; 65 corrupt record; 73 cannot create the\n"
	"registry; 74 I/O error; 75 running, or lock busy; 77 permission or not a\n"
	"regular file.\n";

/* ---- decisions (pure functions of the record) ---------------------------- */

enum action { RUN, REFUSE, WAIT, REPLAY, TAKE_SLOTS };

/* Steps 2-4 for the state ST.  WAITED: this call has already waited for
 * a run in progress; its result is then replayed whatever it was, since
 * that run was the retry --retry-failed asked for. */
static enum action decide(const struct run_request *req, const struct job_state *st, int waited)
{
	if (st->status == ST_RUNNING)
		return req->wait || req->once ? WAIT : REFUSE;
	if (st->status == ST_DONE && req->once) {
		enum outcome o = record_outcome(&st->rec);
		if (req->retry_failed && !waited && (o == OUTCOME_FAILED || o == OUTCOME_CANCELLED))
			return RUN;
		return REPLAY;
	}
	return RUN;
}

/* Step 3: the result of the DONE run, as its message and exit status. */
static int replay(const struct registry *reg, const struct run_request *req,
		  const struct record *r)
{
	enum outcome o = record_outcome(r);
	if (o != OUTCOME_FAILED && o != OUTCOME_CANCELLED) {
		info(req->job, "already done");
		return 0;
	}
	struct run_result end = record_run_result(r);
	struct buf how = {0};
	const char *ended = record_get(r, "ended");
	if (end.cancelled_by)
		buf_addf(&how, "cancelled by %s, ", end.cancelled_by);
	run_describe_result(&how, &end);
	info(req->job, "already done: %s (%s%s%s); clear it to allow a new run",
	     end.cancelled_by ? "cancelled" : "failed",
	     how.data, ended ? ", ended " : "", ended ? ended : "");
	/* --chronic prints the failed run's log, as at its end, and how
	 * it ended, -q or not. */
	if (req->log == LOG_CHRONIC) {
		const char *limit = record_get(r, "timeout");
		logview_chronic(reg, req->job);
		buf_reset(&how);
		run_describe_failure(&how, &end, limit ? strtod(limit, NULL) : 0, NULL, 0, 0);
		warn(req->job, "run %llu %s", record_count(r, "runs"), how.data);
	}
	buf_free(&how);
	return run_result_status(&end);
}

/* ---- step 2f: the slots (SPEC §5b) ---------------------------------------- */

/* A run takes its slots first (TAKE_SLOTS: take_slots(), without the job
 * lock), then decides afresh; a call that will not run after all gives
 * them back at once. */
static enum action slots_first(const struct run_request *req, enum action act)
{
	if (act != RUN)
		slots_release(req->slots);
	else if (!slots_held(req->slots))
		return TAKE_SLOTS;
	return act;
}

/* A refusal (SPEC §5a Skips): skipped + 1 and last_skipped, in one write
 * under the job lock. */
static int count_skip(const struct registry *reg, const struct run_request *req)
{
	struct job_state st = {0};
	struct record rec;
	int job_lock = -1;
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
	if (!rc && (rc = jobstate_read(reg, req->job, &st)) == 0) {
		struct buf skipped = {0};
		char now[21];
		record_copy(&rec, &st.rec);
		if (!st.found)
			record_to_pending(&rec, now_seconds(), NULL);
		buf_addf(&skipped, "%llu", record_count(&rec, "skipped") + 1);
		record_put(&rec, "skipped", skipped.data);
		time_format(now_seconds(), now);
		record_put(&rec, "last_skipped", now);
		rc = commit_record(reg, req->job, jobstate_record(&st), st.status, &rec, NULL);
		record_free(&rec);
		buf_free(&skipped);
	}
	jobstate_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

/* Step 2f, without the job lock: one free slot of each group.  None
 * free: a call that waits (--wait, --once) waits in the group's line
 * within its --wait limit, DEADLINE; any other does not run (75 or -E),
 * counted as a skip.  The caller starts over at step 1. */
static int take_slots(const struct registry *reg, const struct run_request *req, double deadline)
{
	int waits = req->wait || req->once;
	size_t full;
	int rc = slots_take(reg, req->job, req->slots, waits, deadline, req->lock_wait, &full);
	if (rc == EXIT_BUSY) {
		const struct slot_group *g = &req->slots->groups[full];
		struct slot_views held;
		struct buf who = {0};
		slotview_group(reg, g->name, g->n, &held);
		slotview_holders(&who, &held);
		info(req->job, "no free slot of %s (%s)%s%s", g->name, who.data,
		     req->wait_arg ? " after --wait " : "", req->wait_arg ? req->wait_arg : "");
		slotview_free(&held);
		buf_free(&who);
		if (!waits && (rc = count_skip(reg, req)) != 0)
			return rc;
		return req->conflict_code;
	}
	struct buf slots = {0};
	slots_format(req->slots, &slots);
	if (!rc && slots.len && setenv("JOBREG_SLOTS", slots.data, 1) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	buf_free(&slots);
	return rc;
}

/* ---- steps 1-4 ------------------------------------------------------------ */

static int not_running(void *ctx, size_t index, const struct job_state *st)
{
	(void)ctx;
	(void)index;
	return st->status != ST_RUNNING;
}

/* The run lock is not free although no live run is recorded: a reader's
 * probe, a run ending after a forced clear (it needs the job lock to
 * finish), a leftover process of an old run (EARLIER: the DONE run's
 * dispatcher, 0: none), or anyone's flock.  Wait for it without the job
 * lock, blocked in an exclusive flock (a shared holder must not let us
 * through and spin), until DEADLINE, and start over; also once DIR names
 * another directory (removed, replaced: SPEC §5, every wait follows it),
 * which a wait a second at a time notices.  The lock is let go at once,
 * so neither a missing file is made nor the name re-checked here: the
 * start over does both. */
static int wait_run_lock(const struct registry *reg, const char *job, double deadline,
			 long earlier)
{
	for (;;) {
		double left = deadline - now_mono();
		int fd = -1;
		int rc = reg_lock(reg, job, RUN_LOCK, LOCK_EX, left > 1 ? 1 : left > 0 ? left : 0,
				  LOCK_QUIET_BUSY | LOCK_NO_RECHECK, &fd);
		reg_unlock(&fd);
		if (rc != EXIT_BUSY || !reg_same(reg))
			return rc == EXIT_BUSY ? 0 : rc;
		if (now_mono() >= deadline)
			return run_lock_busy(reg, job, earlier);
	}
}

/* A message about the run ST names: "already running (pid P on H since
 * T)", "taking over stale run (...)". */
static void say_run(const char *job, const char *what, const struct job_state *st)
{
	struct buf who = {0};
	jobstate_describe(&st->rec, &who);
	info(job, "%s (%s)", what, who.data ? who.data : "");
	buf_free(&who);
}

/* Step 4, holding the job lock and now the run lock RUN_LOCK: the run's
 * log begun (--log), then RUNNING over ST's record. */
static int begin(const struct registry *reg, const struct run_request *req, struct run *run,
		 const struct job_state *st, int run_lock, const sigset_t *hold)
{
	int rc = 0;
	if (st->status == ST_STALE)
		say_run(req->job, "taking over stale run", st);
	/* The new log is made, but the last run's is set aside (logrelay.h)
	 * only once RUNNING is written: a dispatch that cannot start leaves
	 * the logs as they were; a log that cannot be made fails it before
	 * anything runs. */
	int failed = jobstate_last_run_failed(st);
	rc = logrelay_prepare(reg, req->job, req->log != LOG_NONE);
	/* From here on a signal must not kill us between RUNNING and DONE:
	 * hold it for the command. */
	if (!rc)
		sigprocmask(SIG_BLOCK, hold, NULL);
	if (!rc && (rc = run_begin(reg, run, st, run_lock)) != 0)
		logrelay_abandon(reg, req->job);
	else if (!rc)   /* (a log that cannot be put in place: no attempt) */
		run->log_status = logrelay_commit(reg, req->job, failed, req->log != LOG_NONE);
	return rc;
}

/* Steps 1-4 of SPEC §5: under the job lock decide, take the run lock and
 * write RUNNING; or wait for a run in progress (--wait, --once) and start
 * over.  *RUN_LOCK is held when the command is to run; otherwise the
 * returned status is dispatch's. */
static int start_run(struct registry *reg, const struct run_request *req, struct run *run,
		     int *run_lock, const sigset_t *hold)
{
	double deadline = req->wait && req->wait_limit >= 0 ? now_mono() + req->wait_limit : -1;
	double lock_deadline = -1;   /* set once the run lock was found busy */
	int job_lock = -1, waited = 0;

	for (;;) {
		struct job_state st;
		int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE,
				  &job_lock);
		if (rc)
			return rc;
		rc = jobstate_read(reg, req->job, &st);
		enum action act = slots_first(req, rc ? REFUSE : decide(req, &st, waited));
		if (!rc && act == REPLAY)
			rc = replay(reg, req, &st.rec);
		else if (!rc && act == REFUSE) {
			say_run(req->job, "already running", &st);
			rc = req->conflict_code;
		} else if (act == RUN) {
			rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0,
				      LOCK_CREATE | LOCK_QUIET_BUSY, run_lock);
			if (!rc && (rc = begin(reg, req, run, &st, *run_lock, hold)))
				reg_unlock(run_lock);
		}
		const char *pid = act == RUN && rc == EXIT_BUSY && st.status == ST_DONE
			? record_get(&st.rec, "pid") : NULL;
		long earlier = pid ? strtol(pid, NULL, 10) : 0;
		jobstate_free(&st);
		reg_unlock(&job_lock);
		if (act == WAIT) {
			char *jobs[] = { (char *)req->job };
			rc = wait_until(reg, jobs, 1, not_running, NULL, deadline);
			if (rc == EXIT_BUSY) {
				info(req->job, "still running after --wait %s", req->wait_arg);
				return req->conflict_code;
			}
			waited = 1;
			lock_deadline = -1;   /* a new busy spell gets its -w */
		} else if (act == TAKE_SLOTS) {
			rc = take_slots(reg, req, deadline);
		} else if (act == RUN && rc == EXIT_BUSY) {
			if (lock_deadline < 0)
				lock_deadline = now_mono() + req->lock_wait;
			rc = wait_run_lock(reg, req->job, lock_deadline, earlier);
		} else {
			return rc;
		}
		/* Start over in what DIR names now: the wait follows it (and a
		 * busy run lock there is a new spell). */
		if (!rc && !reg_same(reg))
			lock_deadline = -1;
		if (rc || (rc = reg_follow(reg, 1)) != 0)
			return rc;
	}
}

/* --log and --chronic: one of them. */
static void set_log(struct run_request *req, enum log_mode mode)
{
	if (req->log != LOG_NONE && req->log != mode)
		usage_error("--log and --chronic exclude each other");
	req->log = mode;
}

/* --slots NAME:N, one a group. */
static void set_slots(struct run_request *req, const char *arg)
{
	const char *why = slots_add(req->slots, arg);
	if (why)
		usage_error("--slots %s: %s", arg, why);
}

/* JOB [--] COMMAND [ARG...], after the options. */
static void parse_operands(int argc, char **argv, struct run_request *req)
{
	if (optind >= argc)
		usage_error("no JOB given");
	req->job = argv[optind++];
	check_job_ids((char **)&req->job, 1);
	/* "JOB --once -- cmd" must not run the program "--once". */
	if (optind < argc && argv[optind][0] == '-' && strcmp(argv[optind], "--") != 0)
		misplaced_option(argv[optind]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		usage_error("no COMMAND given");
	req->command = argv + optind;
}

/* The options that go together (jobreg-dispatch(1)), GIVEN by letter; a
 * usage error exits 64. */
static void check_request(const struct run_request *req, const unsigned char *given)
{
	if (req->retry_failed && !req->once)
		usage_error("--retry-failed needs --once");
	/* --clear removes the very result --once replays: every caller
	 * would run the job again. */
	if (req->once && req->clear_after)
		usage_error("--once and --clear exclude each other");
	if ((given['K'] || given['S']) && !given['T'])
		usage_error("--kill-after and --signal need --timeout");
	if (given['D'] && !given['r'])
		usage_error("--retry-delay needs --retries");
	if (given['z'] && req->log == LOG_NONE)
		usage_error("--log-size needs --log or --chronic");
}

/* Options and operands into REQ; a usage error exits 64. */
static void parse_options(int argc, char **argv, struct common *common, struct run_request *req)
{
	static const struct option longopts[] = {
		{ "once", no_argument, 0, 'O' },
		{ "retry-failed", no_argument, 0, 'R' },
		{ "clear", no_argument, 0, 'C' },
		{ "wait", required_argument, 0, 'W' },
		{ "conflict-exit-code", required_argument, 0, 'E' },
		{ "note", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 'T' },
		{ "kill-after", required_argument, 0, 'K' },
		{ "signal", required_argument, 0, 'S' },
		{ "retries", required_argument, 0, 'r' },
		{ "retry-delay", required_argument, 0, 'D' },
		{ "log", no_argument, 0, 'L' },
		{ "chronic", no_argument, 0, 'c' },
		{ "log-size", required_argument, 0, 'z' },
		{ "late-after", required_argument, 0, 'l' },
		{ "keep-runs", required_argument, 0, 'k' },
		{ "slots", required_argument, 0, 'N' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	unsigned char given[128] = {0};   /* the options given, by letter */
	int opt;

	cli_init("jobreg-dispatch", argv, usage, help, longopts, common);
	while ((opt = cli_next_option(argc, argv, "+:E:m:" COMMON_SHORTOPTS)) != -1) {
		given[opt & 127] = 1;
		switch (opt) {
		case 'O': req->once = 1; break;
		case 'R': req->retry_failed = 1; break;
		case 'C': req->clear_after = 1; break;
		case 'W':
			req->wait = 1;
			req->wait_arg = optarg;
			req->wait_limit = limit_or_err(optarg, "wait");
			break;
		case 'E': req->conflict_code = (int)number_or_err(optarg, 0, 255, "exit code"); break;
		case 'm': req->note = note_or_err(optarg); break;
		case 'T': req->timeout = limit_or_err(optarg, "timeout"); break;
		case 'K': req->kill_after = limit_or_err(optarg, "kill-after"); break;
		case 'S': req->timeout_signal = signal_or_err(optarg); break;
		case 'r': req->retries = number_or_err(optarg, 0, 1000, "retries"); break;
		case 'D': req->retry_delay = duration_or_err(optarg, "retry delay"); break;
		case 'L': set_log(req, LOG_PASS); break;
		case 'c': set_log(req, LOG_CHRONIC); break;
		case 'z': req->log_size = size_or_err(optarg); break;
		case 'l': req->late_after = late_after_or_err(optarg); break;
		case 'k': req->keep_runs = number_or_err(optarg, 0, KEEP_RUNS_MAX, "keep-runs"); break;
		case 'N': set_slots(req, optarg); break;
		default: common_option(opt, optarg, common);
		}
	}
	check_request(req, given);
	parse_operands(argc, argv, req);
	req->lock_wait = common->lock_wait;
	req->sigpipe_ignored = common->sigpipe_ignored;
}

/* The registry, created if missing, and JOBREG_JOB and JOBREG_DIR for the
 * command. */
static int open_registry(struct registry *reg, const struct common *common, const char *job)
{
	char *path = registry_path(common->dir);
	if (!path)
		return EXIT_USAGE;
	/* Unknown working directory (NULL): the path as given is the best. */
	char *abs = path_absolute(path);
	int rc = reg_open(reg, path, 1);
	if (!rc && (setenv("JOBREG_JOB", job, 1) < 0 ||
		    setenv("JOBREG_DIR", abs ? abs : path, 1) < 0 || unsetenv("JOBREG_SLOTS") < 0))
		rc = fail_errno(errno, job, "setenv");
	free(path);
	free(abs);
	if (rc)
		reg_close(reg);
	return rc;
}

/* The owner of the run: the run lock, and our pid fields for when the
 * lock file is gone (SPEC §2). */
static int identify(const char *job, struct owner *me)
{
	struct reader id;
	if (probe_reader(&id) < 0)
		return fail_errno(errno, job, "cannot read this process's identity from /proc");
	*me = (struct owner){ .kind = OWNER_LOCK, .host = id.host ? id.host : "",
			      .pid = (long)getpid(), .boot_id = id.boot_id,
			      .pid_ns = id.pid_ns, .time_ns = id.time_ns };
	if (pid_start_time(me->pid, &me->pid_start) != 1)
		return fail_errno(errno, job, "read /proc/self/stat");
	return 0;
}

int main(int argc, char **argv)
{
	struct common common;
	struct run_request req = { .conflict_code = EXIT_BUSY, .wait_limit = -1,
				   .timeout_signal = SIGTERM, .retry_delay = 10,
				   .log_size = LOG_SIZE_DEFAULT, .late_after = LATE_NOT_GIVEN,
				   .keep_runs = -1 };
	struct registry reg;
	struct run run = {0};
	struct slot_set slots = {0};
	sigset_t hold, old_mask;
	int run_lock = -1, rc;

	req.slots = &slots;
	parse_options(argc, argv, &common, &req);
	if ((rc = open_registry(&reg, &common, req.job)) != 0)
		return rc;
	run = (struct run){ .job = req.job, .timeout = req.timeout, .note = req.note,
			    .late_after = req.late_after, .keep_runs = req.keep_runs,
			    .logged = req.log != LOG_NONE,
			    .attempt = req.retries > 0, .slots = &slots };
	if ((rc = identify(req.job, &run.owner)) != 0) {
		reg_close(&reg);
		return rc;
	}
	supervise_signals(&hold, &old_mask);
	rc = start_run(&reg, &req, &run, &run_lock, &hold);
	if (run_lock < 0) {
		slots_free(&slots);
		reg_close(&reg);
		return rc;
	}
	int lost = 0, exit_status = run_attempts(&reg, &req, &run, run_lock, &hold, &old_mask,
						 &lost);
	if (lost)
		reg_unlock(&run_lock);   /* SPEC §6: not ours any more */
	else
		run_lock_release(&reg, req.job, &run_lock);
	slots_free(&slots);
	reg_close(&reg);
	return exit_status;
}
