/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)).  Longer than the other commands (near 620 lines):
 * its options (16 beside the common ones) take a quarter, and the
 * decision, the start of a run, its attempts and its end are kept here to
 * read in the order of the man page; what stands alone lives in runrecord.c,
 * supervise.c and logrelay.c. */
#include "cmd/cli.h"
#include "util/utf8.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "run/runrecord.h"
#include "liveness/facts.h"
#include "liveness/proc.h"
#include "record/record.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "util/signame.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "run/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-dispatch [-q] [-d DIR] [-w SECONDS] [--once [--retry-failed] | --clear]"
	" [--wait DURATION] [--timeout DURATION [--kill-after DURATION] [--signal SIG]]"
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

struct request {
	const char *job;
	int sigpipe_ignored;    /* for the command: SIGPIPE as we got it */
	int once;
	int retry_failed;
	int clear_after;
	int wait;               /* --wait given */
	double wait_limit;      /* < 0: no limit */
	const char *wait_arg;   /* as given, for messages */
	int conflict_code;
	const char *note;
	char **command;
	double lock_wait;
	double timeout;         /* --timeout; <= 0: no limit */
	double kill_after;      /* --kill-after; <= 0: no KILL */
	int timeout_signal;     /* --signal, default SIGTERM */
	long retries;           /* --retries */
	double retry_delay;     /* --retry-delay, default 10 */
	enum log_mode log;      /* --log, --chronic */
	unsigned long long log_size;   /* --log-size, default 1M */
	double late_after;      /* --late-after; -1: inf; < -1: not given */
	long keep_runs;         /* --keep-runs; -1: not given */
};

#define RETRY_DELAY_MAX 3600.0   /* seconds: the longest wait for a retry */

/* ---- decisions (pure functions of the record) ---------------------------- */

enum action { RUN, REFUSE, WAIT, REPLAY };

/* Steps 2-4 for the state ST.  WAITED: this call has already waited for
 * a run in progress; its result is then replayed whatever it was, since
 * that run was the retry --retry-failed asked for. */
static enum action decide(const struct request *req, const struct job_state *st, int waited)
{
	if (st->status == ST_RUNNING)
		return req->wait || req->once ? WAIT : REFUSE;
	if (st->status == ST_DONE && req->once) {
		if (req->retry_failed && !waited && record_outcome(&st->rec) == OUTCOME_FAILED)
			return RUN;
		return REPLAY;
	}
	return RUN;
}

/* Step 3: the result of the DONE run, as its message and exit status. */
static int replay(const struct registry *reg, const struct request *req, const struct record *r)
{
	if (record_outcome(r) != OUTCOME_FAILED) {
		info(req->job, "already done");
		return 0;
	}
	struct run_result end = record_run_result(r);
	struct buf how = {0};
	const char *ended = record_get(r, "ended");
	run_describe_result(&how, &end);
	info(req->job, "already done: failed (%s%s%s); clear it to allow a new run",
	     how.data, ended ? ", ended " : "", ended ? ended : "");
	buf_free(&how);
	/* --chronic prints the failed run's log, as at its end. */
	if (req->log == LOG_CHRONIC)
		logview_chronic(reg, req->job);
	return run_result_status(&end);
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
static int begin(const struct registry *reg, const struct request *req, struct run *run,
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
	else if (!rc)
		(void)logrelay_commit(reg, req->job, failed, req->log != LOG_NONE);
	return rc;
}

/* Steps 1-4 of SPEC §5: under the job lock decide, take the run lock and
 * write RUNNING; or wait for a run in progress (--wait, --once) and start
 * over.  *RUN_LOCK is held when the command is to run; otherwise the
 * returned status is dispatch's. */
static int start_run(struct registry *reg, const struct request *req, struct run *run,
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
		rc = jobstate_load(reg, req->job, &st);
		if (rc == EXIT_CORRUPT)
			rc = jobstate_corrupt(reg, req->job, &st);
		enum action act = rc ? REFUSE : decide(req, &st, waited);
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

/* ---- steps 5 and 6, attempt after attempt ------------------------------- */

/* The supervision of every attempt (supervise.h). */
static struct supervise supervision(const struct request *req, const struct run *run, int run_lock)
{
	return (struct supervise){
		.command = req->command, .keep_fd = run_lock, .timeout = req->timeout,
		.kill_after = req->kill_after, .signal = req->timeout_signal, .check_lock = 1,
		.sigpipe_ignored = req->sigpipe_ignored, .out_fd = -1, .err_fd = -1,
		.job = req->job, .run = run->number,
	};
}

/* JOBREG_RUN (and with --retries JOBREG_ATTEMPT) for the attempt; and
 * with --log its log, begun afresh after the first attempt (the one before
 * failed), and its relay.  Returns an exit status. */
static int ready(const struct registry *reg, const struct request *req, const struct run *run,
		 int run_lock, struct logrelay *relay, struct supervise *how)
{
	char attempt_no[24];
	snprintf(attempt_no, sizeof attempt_no, "%lu", run->attempt);
	if (setenv("JOBREG_RUN", run->number, 1) < 0 ||
	    (run->attempt ? setenv("JOBREG_ATTEMPT", attempt_no, 1) : unsetenv("JOBREG_ATTEMPT")) < 0)
		return fail_errno(errno, req->job, "setenv");
	/* After a failed attempt its log is set aside, as at any run's start. */
	if (req->log == LOG_NONE)
		return run->attempt > 1 ? logrelay_turn_over(reg, req->job, 1) : 0;
	int rc = run->attempt > 1 ? logrelay_prepare(reg, req->job, 1) : 0;
	if (!rc && run->attempt > 1)
		rc = logrelay_commit(reg, req->job, 1, 1);
	return rc ? rc : logrelay_start(reg, req->job, req->log, req->log_size, run_lock, relay,
					&how->out_fd, &how->err_fd);
}

/* Step 5, one attempt: run the command, its output through the relay with
 * --log; returns its exit status and fills END (and ENDED: stopped, lost
 * lock).  An attempt that cannot be readied is not run: it ends as a
 * command that could not be started (126). */
static int attempt(const struct registry *reg, const struct request *req, const struct run *run,
		   int run_lock, const sigset_t *hold, const sigset_t *old_mask,
		   struct logrelay *relay, struct run_result *end, char signame[SIGNAME_MAX],
		   struct supervise_end *ended)
{
	struct supervise how = supervision(req, run, run_lock);

	relay->pid = relay->out_fd = relay->err_fd = -1;
	relay->have_report = 0;
	if (ready(reg, req, run, run_lock, relay, &how) != 0) {
		memset(ended, 0, sizeof *ended);
		ended->start_errno = EIO;
		return supervise_outcome(ended, end, signame);
	}
	supervise_run(&how, hold, old_mask, ended);
	logrelay_finish(relay);
	if (ended->start_errno)
		fail_errno(ended->start_errno, req->job, "cannot start %s", req->command[0]);
	else if (ended->exec_errno)
		fail_errno(ended->exec_errno, req->job, "cannot run %s", req->command[0]);
	else if (ended->wait_errno)
		fail_errno(ended->wait_errno, req->job, "cannot wait for %s", req->command[0]);
	return supervise_outcome(ended, end, signame);
}

/* The wait before retry K: --retry-delay doubled for each retry before
 * it, at most an hour. */
static double retry_delay(const struct request *req, unsigned long k)
{
	double d = req->retry_delay;
	while (--k > 0 && d < RETRY_DELAY_MAX)
		d *= 2;
	return d < RETRY_DELAY_MAX ? d : RETRY_DELAY_MAX;
}

/* --chronic's report from JOB's log, a message after it on a line of its
 * own. */
static void chronic_from_log(const struct registry *reg, const char *job)
{
	logview_chronic(reg, job);
	logrelay_log_printed(reg, job);
}

/* Steps 5 and 6: run the command, and again after a FAILED attempt while
 * --retries allows (not after 126 or 127, nor after dispatch was told to
 * stop), holding the run lock throughout; then record the end.  Returns
 * dispatch's exit status. */
static int run_attempts(const struct registry *reg, const struct request *req, struct run *run,
			int run_lock, const sigset_t *hold, const sigset_t *old_mask, int *lost_lock)
{
	struct logrelay relay = {0};
	for (;;) {
		struct run_result end;
		struct supervise_end ended;
		char signame[SIGNAME_MAX];
		int status = attempt(reg, req, run, run_lock, hold, old_mask, &relay, &end, signame,
				     &ended);
		int lost = ended.lost_lock, ours = 1, rc = 0;
		/* 126 and 127, as exec's own failures: the command cannot run. */
		int cannot_run = (!ended.start_errno && ended.exec_errno) || status == 126 ||
				 status == 127;
		if (!lost && status && !ended.stopped && !cannot_run && !ended.wait_errno &&
		    run->attempt && run->attempt <= (unsigned long)req->retries) {
			double delay = retry_delay(req, run->attempt);
			struct supervise how = supervision(req, run, run_lock);
			rc = run_retry(reg, run, &end, now_seconds() + (time_t)(delay + 0.999));
			info(req->job, "attempt %lu failed; attempt %lu in %gs", run->attempt,
			     run->attempt + 1, delay);
			if (!rc && !supervise_pause(&how, hold, delay, &lost) &&
			    (rc = run_next(reg, run, &ours)) == 0 && ours)
				continue;
		}
		/* SPEC §6: after a lost run lock the record is not ours to write. */
		*lost_lock = lost;
		if (lost) {
			buf_free(&relay.report);
			return EXIT_IO;
		}
		/* --chronic: a failed run's report, after its record, from the
		 * relay's memory; without it (the relay did not end), from the
		 * log, printed before --clear removes it. */
		int chronic = req->log == LOG_CHRONIC && status;
		int from_log = chronic && !relay.have_report;
		if (from_log && req->clear_after)
			chronic_from_log(reg, req->job);
		if (!rc && ours)
			rc = run_finish(reg, run, &end, req->clear_after);
		if (chronic && !from_log)
			(void)logrelay_report(&relay);
		else if (from_log && !req->clear_after)
			chronic_from_log(reg, req->job);
		buf_free(&relay.report);
		/* A result that could not be recorded is still the run's: a
		 * failed run exits with its status, a good one with the error's. */
		return status ? status : rc;
	}
}

/* Options and operands into REQ: *GO set when the command goes on; else the
 * exit status. */
static int parse_options(int argc, char **argv, struct common *common, struct request *req,
			 int *go)
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
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	int limit_options = 0;   /* 1: --timeout given; 2: --kill-after or --signal */
	int delay_given = 0, retries_given = 0, size_given = 0;
	int opt, rc = -1;
	long code;

	cli_init("jobreg-dispatch", argv, usage, longopts, common);
	while (rc < 0 && (opt = cli_next_option(argc, argv, "+:E:m:" COMMON_SHORTOPTS)) != -1) {
		switch (opt) {
		case 'O':
			req->once = 1;
			break;
		case 'R':
			req->retry_failed = 1;
			break;
		case 'C':
			req->clear_after = 1;
			break;
		case 'W':
			req->wait = 1;
			req->wait_arg = optarg;
			if (parse_limit(optarg, &req->wait_limit) < 0)
				return bad_value("wait", optarg, "a duration, or inf");
			break;
		case 'E':
			if (parse_uint(optarg, 255, &code) < 0)
				return bad_value("exit code", optarg, "0-255");
			req->conflict_code = (int)code;
			break;
		case 'm':
			if (!note_valid(optarg))
				return fail(EXIT_USAGE, NULL,
					    "bad note: control bytes, invalid UTF-8 or over %d bytes",
					    NOTE_MAX);
			req->note = optarg;
			rc = lookalike_value(optarg);
			break;
		case 'T':
			limit_options |= 1;
			if (parse_limit(optarg, &req->timeout) < 0)
				return bad_value("timeout", optarg, NULL);
			break;
		case 'K':
			limit_options |= 2;
			if (parse_limit(optarg, &req->kill_after) < 0)
				return bad_value("kill-after", optarg, NULL);
			break;
		case 'S':
			limit_options |= 2;
			req->timeout_signal = signal_number(optarg);
			if (req->timeout_signal <= 0)
				return bad_value("signal", optarg, NULL);
			break;
		case 'r':
			retries_given = 1;
			if (parse_uint(optarg, 1000, &req->retries) < 0)
				return bad_value("retries", optarg, "0-1000");
			break;
		case 'D':
			delay_given = 1;
			if (parse_duration(optarg, &req->retry_delay) < 0)
				return bad_value("retry delay", optarg, NULL);
			break;
		case 'L':
		case 'c': {
			enum log_mode mode = opt == 'L' ? LOG_PASS : LOG_CHRONIC;
			if (req->log != LOG_NONE && req->log != mode)
				return usage_error("--log and --chronic exclude each other");
			req->log = mode;
			break;
		}
		case 'z':
			size_given = 1;
			if (logrelay_parse_size(optarg, &req->log_size) < 0)
				return bad_value("log size", optarg, "at least 1k; units k, M, G");
			break;
		case 'l':
			rc = parse_late_after(optarg, &req->late_after);
			break;
		case 'k':
			rc = parse_keep_runs(optarg, &req->keep_runs);
			break;
		default:
			rc = cli_common_option(opt, optarg, common, help);
		}
	}
	if (rc >= 0)
		return rc;
	if (req->retry_failed && !req->once)
		return usage_error("--retry-failed needs --once");
	/* --clear removes the very result --once replays: every caller
	 * would run the job again. */
	if (req->once && req->clear_after)
		return usage_error("--once and --clear exclude each other");
	if (limit_options == 2)
		return usage_error("--kill-after and --signal need --timeout");
	if (delay_given && !retries_given)
		return usage_error("--retry-delay needs --retries");
	if (size_given && req->log == LOG_NONE)
		return usage_error("--log-size needs --log or --chronic");
	if (optind >= argc)
		return usage_error("no JOB given");
	req->job = argv[optind++];
	if ((rc = check_job_ids((char **)&req->job, 1)) != 0)
		return rc;
	/* "JOB --once -- cmd" must not run the program "--once". */
	if (optind < argc && argv[optind][0] == '-' && strcmp(argv[optind], "--") != 0)
		return misplaced_option(argv[optind]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return usage_error("no COMMAND given");
	req->command = argv + optind;
	req->lock_wait = common->lock_wait;
	req->sigpipe_ignored = common->sigpipe_ignored;
	*go = 1;
	return 0;
}

/* A message of ours starts on a line of its own, whatever the command's
 * output passed on last. */
static void before_message(void)
{
	(void)out_flush();
	if (logrelay_mid_line() && write_full(2, "\n", 1) == 0)
		logrelay_line_ended();
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
		    setenv("JOBREG_DIR", abs ? abs : path, 1) < 0))
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
	struct request req = { .conflict_code = EXIT_BUSY, .wait_limit = -1,
			       .timeout_signal = SIGTERM, .retry_delay = 10,
			       .log_size = LOG_SIZE_DEFAULT, .late_after = -2, .keep_runs = -1 };
	struct registry reg;
	struct run run = {0};
	sigset_t hold, old_mask;
	int run_lock = -1;

	int go = 0, rc = parse_options(argc, argv, &common, &req, &go);
	if (!go)
		return rc;
	message_before(before_message);
	if ((rc = open_registry(&reg, &common, req.job)) != 0)
		return rc;
	run = (struct run){ .job = req.job, .timeout = req.timeout, .note = req.note,
			    .late_after = req.late_after, .keep_runs = req.keep_runs,
			    .logged = req.log != LOG_NONE,
			    .attempt = req.retries > 0 };
	if ((rc = identify(req.job, &run.owner)) != 0) {
		reg_close(&reg);
		return rc;
	}
	supervise_signals(&hold, &old_mask);
	rc = start_run(&reg, &req, &run, &run_lock, &hold);
	if (run_lock < 0) {
		reg_close(&reg);
		return rc;
	}
	int lost = 0, exit_status = run_attempts(&reg, &req, &run, run_lock, &hold, &old_mask,
						 &lost);
	if (lost)
		reg_unlock(&run_lock);   /* SPEC §6: not ours any more */
	else
		run_lock_release(&reg, req.job, &run_lock);
	reg_close(&reg);
	return exit_status;
}
