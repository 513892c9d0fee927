/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)). */
#include "cli.h"
#include "utf8.h"
#include "leftover.h"
#include "probe.h"
#include "proc.h"
#include "record.h"
#include "registry.h"
#include "signame.h"
#include "state.h"
#include "wait.h"
#include "supervise.h"

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
	" [--wait DURATION] [--timeout DURATION [--kill-after DURATION] [--signal SIG]]"
	" [-E CODE] [-m NOTE] JOB [--] COMMAND [ARG...]";
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
};

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

/* "exit 3", "signal TERM", "timed out". */
static void describe_end(struct buf *b, const struct run_end *e)
{
	if (e->timed_out)
		buf_adds(b, "timed out");
	else if (e->signal_name)
		buf_addf(b, "signal %s", e->signal_name);
	else if (e->exit_status >= 0)
		buf_addf(b, "exit %d", e->exit_status);
	else
		buf_adds(b, "exit status unknown");
}

/* Step 3: the result of the DONE run, as its message and exit status. */
static int replay(const struct request *req, const struct record *r)
{
	if (record_outcome(r) != OUTCOME_FAILED) {
		info(req->job, "already done");
		return 0;
	}
	struct run_end end = record_run_end(r);
	struct buf how = {0};
	const char *ended = record_get(r, "ended");
	describe_end(&how, &end);
	info(req->job, "already done: failed (%s%s%s); clear it to allow a new run",
	     how.data, ended ? ", ended " : "", ended ? ended : "");
	buf_free(&how);
	return run_end_status(&end);
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
 * through and spin), until DEADLINE, and start over. */
static int wait_run_lock(const struct registry *reg, const char *job, double deadline,
			 long earlier)
{
	double left = deadline - now_mono();
	int fd = -1;
	int rc = reg_lock(reg, job, RUN_LOCK, LOCK_EX, left > 0 ? left : 0,
			  LOCK_CREATE | LOCK_QUIET_BUSY, &fd);
	reg_unlock(&fd);
	return rc == EXIT_BUSY ? run_lock_busy(reg, job, earlier) : rc;
}

/* A message about the run ST names: "already running (pid P on H since
 * T)", "taking over stale run (...)". */
static void say_run(const char *job, const char *what, const struct job_state *st)
{
	struct buf who = {0};
	state_describe(&st->rec, &who);
	info(job, "%s (%s)", what, who.data ? who.data : "");
	buf_free(&who);
}

/* Step 4, holding the job lock and now the run lock RUN_LOCK: write
 * RUNNING over ST's record, owned by ME and the run lock's inode, and
 * note what step 6 compares (STARTED) and the run's number (JOBREG_RUN). */
static int write_running(const struct registry *reg, const struct request *req,
			 struct job_state *st, struct owner *me, int run_lock, char started[21],
			 const sigset_t *hold)
{
	struct buf text = {0};
	struct stat lock_st;
	int rc = 0;

	if (fstat(run_lock, &lock_st) < 0)
		return fail_errno(errno, req->job, "stat the run lock");
	me->run_lock = (unsigned long long)lock_st.st_ino;
	if (st->status == ST_STALE)
		say_run(req->job, "taking over stale run", st);
	/* From here on a signal must not kill us between RUNNING and DONE:
	 * hold it for the command. */
	sigprocmask(SIG_BLOCK, hold, NULL);
	record_to_running(&st->rec, now_seconds(), me, 0, req->timeout, req->note);
	memcpy(started, record_get(&st->rec, "started"), 21);
	/* The run's number, the fencing token of SPEC §5 step 5. */
	const char *runs = record_get(&st->rec, "runs");
	if (runs && setenv("JOBREG_RUN", runs, 1) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	record_format(&st->rec, &text);   /* too large: reg_replace refuses it */
	if (!rc)
		rc = reg_replace(reg, req->job, req->job, text.data, text.len);
	buf_free(&text);
	return rc;
}

/* Steps 1-4 of SPEC §5: under the job lock decide, take the run lock and
 * write RUNNING; or wait for a run in progress (--wait, --once) and start
 * over.  *RUN_LOCK is held when the command is to run; otherwise the
 * returned status is dispatch's. */
static int start_run(struct registry *reg, const struct request *req, struct owner *me,
		     char started[21], int *run_lock, const sigset_t *hold)
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
		rc = state_load(reg, req->job, &st);
		if (rc == EXIT_CORRUPT)
			rc = state_corrupt(reg, req->job, &st);
		enum action act = rc ? REFUSE : decide(req, &st, waited);
		if (!rc && act == REPLAY)
			rc = replay(req, &st.rec);
		else if (!rc && act == REFUSE) {
			say_run(req->job, "already running", &st);
			rc = req->conflict_code;
		} else if (act == RUN) {
			rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0,
				      LOCK_CREATE | LOCK_QUIET_BUSY, run_lock);
			if (!rc && (rc = write_running(reg, req, &st, me, *run_lock, started, hold)))
				reg_unlock(run_lock);
		}
		const char *pid = act == RUN && rc == EXIT_BUSY && st.status == ST_DONE
			? record_get(&st.rec, "pid") : NULL;
		long earlier = pid ? strtol(pid, NULL, 10) : 0;
		state_free(&st);
		reg_unlock(&job_lock);
		if (act == WAIT) {
			char *jobs[] = { (char *)req->job };
			rc = wait_until(reg, jobs, 1, not_running, NULL, deadline);
			if (rc == EXIT_BUSY) {
				info(req->job, "still running after --wait %s", req->wait_arg);
				return req->conflict_code;
			}
			waited = 1;
		} else if (act == RUN && rc == EXIT_BUSY) {
			if (lock_deadline < 0)
				lock_deadline = now_mono() + req->lock_wait;
			rc = wait_run_lock(reg, req->job, lock_deadline, earlier);
		} else {
			return rc;
		}
		/* Start over in what DIR names now: the wait follows it. */
		if (rc || (rc = reg_follow(reg, 1)) != 0)
			return rc;
	}
}

/* Step 5: run the command (supervise.h); returns dispatch's exit status
 * and fills END for the record; *LOST when the run lock was lost. */
static int run(const struct request *req, int run_lock, const sigset_t *hold,
	       const sigset_t *old_mask, struct run_end *end, char signame[SIGNAME_MAX], int *lost)
{
	struct supervise how = {
		.command = req->command, .keep_fd = run_lock, .timeout = req->timeout,
		.kill_after = req->kill_after, .signal = req->timeout_signal, .check_lock = 1,
		.sigpipe_ignored = req->sigpipe_ignored, .job = req->job,
		.run = getenv("JOBREG_RUN"),
	};
	struct supervise_end ended;
	supervise_run(&how, hold, old_mask, &ended);
	if (ended.start_errno)
		fail_errno(ended.start_errno, req->job, "cannot start %s", req->command[0]);
	else if (ended.exec_errno)
		fail_errno(ended.exec_errno, req->job, "cannot run %s", req->command[0]);
	else if (ended.wait_errno)
		fail_errno(ended.wait_errno, req->job, "cannot wait for %s", req->command[0]);
	*lost = ended.lost_lock;
	return supervise_outcome(&ended, end, signame);
}
/* Step 6: record the end, if the record is still this run's.  A failure
 * says how the run ended, so its result is not lost with the record. */
static int finish(const struct registry *reg, const struct request *req,
		  const struct owner *me, const char *started, const struct run_end *end)
{
	struct buf data = {0}, text = {0}, context = {0};
	struct record rec;
	const char *why;
	int job_lock = -1, found = 0;

	buf_adds(&context, req->clear_after ? "cannot clear the record (" : "cannot record DONE (");
	describe_end(&context, end);
	buf_addc(&context, ')');
	message_context(context.data);
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, -1, LOCK_CREATE, &job_lock);
	record_init(&rec);
	if (!rc)
		rc = reg_read(reg, req->job, &data, &found);
	if (rc)
		goto out;
	if (!found || record_parse(&rec, data.data, data.len, &why) < 0 ||
	    !record_owned_by(&rec, me) || !record_get(&rec, "started") ||
	    strcmp(record_get(&rec, "started"), started) != 0) {
		message_context(NULL);
		warn(req->job, "the record changed during the run; left alone");
		goto out;
	}
	if (req->clear_after) {
		rc = reg_remove(reg, req->job, 1);
	} else {
		record_to_done(&rec, now_seconds(), end, NULL);
		record_format(&rec, &text);
		rc = reg_replace(reg, req->job, req->job, text.data, text.len);
	}
out:
	message_context(NULL);
	record_free(&rec);
	buf_free(&data);
	buf_free(&text);
	buf_free(&context);
	reg_unlock(&job_lock);
	return rc;
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
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	int limit_options = 0;   /* 1: --timeout given; 2: --kill-after or --signal */
	int opt, rc = -1;
	long code;

	cli_init("jobreg-dispatch", argv, usage, longopts, common);
	opterr = 0;
	while (rc < 0 && (opt = getopt_long(argc, argv, "+:E:m:" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
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
			       .timeout_signal = SIGTERM };
	struct registry reg;
	struct owner me;
	sigset_t hold, old_mask;
	char started[21], signame[SIGNAME_MAX];
	int run_lock = -1, lost = 0;

	int go = 0, rc = parse_options(argc, argv, &common, &req, &go);
	if (!go)
		return rc;
	if ((rc = open_registry(&reg, &common, req.job)) != 0)
		return rc;
	if ((rc = identify(req.job, &me)) != 0) {
		reg_close(&reg);
		return rc;
	}
	supervise_signals(&hold, &old_mask);
	rc = start_run(&reg, &req, &me, started, &run_lock, &hold);
	if (run_lock < 0) {
		reg_close(&reg);
		return rc;
	}
	struct run_end end;
	int exit_status = run(&req, run_lock, &hold, &old_mask, &end, signame, &lost);
	if (lost) {
		/* SPEC §6: the record is no longer this run's to write. */
		reg_unlock(&run_lock);
		reg_close(&reg);
		return EXIT_IO;
	}
	rc = finish(&reg, &req, &me, started, &end);
	run_lock_release(&reg, req.job, &run_lock);
	reg_close(&reg);
	/* A result that could not be recorded is still the run's: a failed
	 * run exits with its status, a good one with the error's. */
	return exit_status ? exit_status : rc;
}
