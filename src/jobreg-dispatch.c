/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)). */
#include "cli.h"
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
	"jobreg-dispatch [-q] [-d DIR] [-w SECONDS] [--once [--retry-failed]] [--clear]"
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

/* Steps 1-4 of SPEC §5 under the job lock: decide, take the run lock,
 * write RUNNING.  *go is set when the command is to run. */
static int claim(const struct registry *reg, const struct request *req, struct owner *me,
		 char started[21], int *run_lock, int *go, const sigset_t *hold)
{
	double deadline = req->wait && req->wait_limit >= 0 ? now_mono() + req->wait_limit : -1;
	double run_deadline = -1;   /* set once the run lock was found busy */
	struct job_state st;
	int job_lock = -1, waited = 0, rc;

	*go = 0;
	for (;;) {
		rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
		if (rc)
			return rc;
		rc = state_load(reg, req->job, &st);
		if (rc == EXIT_CORRUPT)
			rc = state_corrupt(reg, req->job, &st);
		if (rc)
			goto out;
		enum action act = decide(req, &st, waited);
		if (act == REPLAY) {
			rc = replay(req, &st.rec);
			goto out;
		}
		if (act == REFUSE) {
			struct buf who = {0};
			state_describe(&st.rec, &who);
			info(req->job, "already running (%s)", who.data ? who.data : "");
			buf_free(&who);
			rc = req->conflict_code;
			goto out;
		}
		if (act == WAIT) {
			reg_unlock(&job_lock);
			state_free(&st);
			char *jobs[] = { (char *)req->job };
			rc = wait_until(reg, jobs, 1, not_running, NULL, deadline);
			if (rc == EXIT_BUSY) {
				info(req->job, "still running after --wait %s", req->wait_arg);
				return req->conflict_code;
			}
			if (rc)
				return rc;
			waited = 1;
			continue;
		}
		rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0, LOCK_CREATE | LOCK_QUIET_BUSY,
			      run_lock);
		if (rc != EXIT_BUSY)
			break;
		/* Not free although no live run is recorded: a reader's probe,
		 * a run ending after a forced clear (it needs the job lock to
		 * finish), a leftover process of an old run, or anyone's
		 * flock.  Wait for it without the job lock, blocked in an
		 * exclusive flock (a shared holder must not let us through
		 * and spin), at most -w in all, and start over. */
		const char *pid = st.status == ST_DONE ? record_get(&st.rec, "pid") : NULL;
		long earlier = pid ? strtol(pid, NULL, 10) : 0;
		reg_unlock(&job_lock);
		state_free(&st);
		if (run_deadline < 0)
			run_deadline = now_mono() + req->lock_wait;
		double left = run_deadline - now_mono();
		int wait_fd = -1;
		rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, left > 0 ? left : 0,
			      LOCK_CREATE | LOCK_QUIET_BUSY, &wait_fd);
		reg_unlock(&wait_fd);
		if (rc == EXIT_BUSY)
			return run_lock_busy(reg, req->job, earlier);
		if (rc)
			return rc;
	}
	if (rc)
		goto out;
	if (st.status == ST_STALE) {
		struct buf who = {0};
		state_describe(&st.rec, &who);
		info(req->job, "taking over stale run (%s)", who.data ? who.data : "");
		buf_free(&who);
	}
	struct stat lock_st;
	if (fstat(*run_lock, &lock_st) < 0) {
		rc = fail_errno(errno, req->job, "stat the run lock");
		reg_unlock(run_lock);
		goto out;
	}
	me->run_lock = (unsigned long long)lock_st.st_ino;
	/* From here on a signal must not kill us between RUNNING and DONE:
	 * hold it for the command. */
	sigprocmask(SIG_BLOCK, hold, NULL);
	struct buf text = {0};
	record_to_running(&st.rec, now_seconds(), me, 0, req->timeout, req->note);
	/* What step 6 compares to tell the record is still this run's. */
	memcpy(started, record_get(&st.rec, "started"), 21);
	/* The run's number, the fencing token of SPEC §5 step 5. */
	const char *runs = record_get(&st.rec, "runs");
	if (runs && setenv("JOBREG_RUN", runs, 1) < 0)
		rc = fail_errno(errno, req->job, "setenv");
	record_format(&st.rec, &text);   /* too large: reg_replace refuses it */
	if (!rc)
		rc = reg_sweep(reg, req->job);
	if (!rc)
		rc = reg_replace(reg, req->job, text.data, text.len);
	buf_free(&text);
	if (rc)
		reg_unlock(run_lock);
	else
		*go = 1;
out:
	state_free(&st);
	reg_unlock(&job_lock);
	return rc;
}

/* Step 5: run the command (supervise.h); returns dispatch's exit status
 * and fills END for the record. */
static int run(const struct request *req, int run_lock, const sigset_t *hold,
	       const sigset_t *old_mask, struct run_end *end, char signame[SIGNAME_MAX], int *lost)
{
	struct supervise how = { req->command, run_lock, req->timeout, req->kill_after,
				 req->timeout_signal, 1, req->job, getenv("JOBREG_RUN") };
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
		rc = reg_replace(reg, req->job, text.data, text.len);
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

int main(int argc, char **argv)
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
	struct common common;
	struct request req = { .conflict_code = EXIT_BUSY, .wait_limit = -1,
			       .timeout_signal = SIGTERM };
	int limit_options = 0;   /* 1: --timeout given; 2: --kill-after or --signal */
	long code;
	int opt, rc;

	cli_init("jobreg-dispatch", &common);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:E:m:" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (opt) {
		case 'O':
			req.once = 1;
			break;
		case 'R':
			req.retry_failed = 1;
			break;
		case 'C':
			req.clear_after = 1;
			break;
		case 'W':
			req.wait = 1;
			req.wait_arg = optarg;
			if (parse_limit(optarg, &req.wait_limit) < 0)
				return usage_error(usage, "bad wait '%s' (a duration, or inf)", optarg);
			break;
		case 'E':
			if (parse_uint(optarg, 255, &code) < 0)
				return usage_error(usage, "bad exit code '%s' (0-255)", optarg);
			req.conflict_code = (int)code;
			break;
		case 'm':
			if (!note_valid(optarg))
				return fail(EXIT_USAGE, NULL,
					    "bad note: control bytes, invalid UTF-8 or over %d bytes",
					    NOTE_MAX);
			req.note = optarg;
			break;
		case 'T':
			limit_options |= 1;
			if (parse_limit(optarg, &req.timeout) < 0)
				return usage_error(usage, "bad timeout '%s'", optarg);
			break;
		case 'K':
			limit_options |= 2;
			if (parse_limit(optarg, &req.kill_after) < 0)
				return usage_error(usage, "bad kill-after '%s'", optarg);
			break;
		case 'S':
			limit_options |= 2;
			req.timeout_signal = signal_number(optarg);
			if (req.timeout_signal <= 0)
				return usage_error(usage, "bad signal '%s'", optarg);
			break;
		default:
			if ((rc = cli_common_option(opt, optarg, argv, &common, usage, help)) >= 0)
				return rc;
		}
	}
	if (req.retry_failed && !req.once)
		return usage_error(usage, "--retry-failed needs --once");
	if (limit_options == 2)
		return usage_error(usage, "--kill-after and --signal need --timeout");
	if (optind >= argc)
		return usage_error(usage, "no JOB given");
	req.job = argv[optind++];
	if ((rc = check_job_ids((char **)&req.job, 1)) != 0)
		return rc;
	/* "JOB --once -- cmd" must not run the program "--once". */
	if (optind < argc && argv[optind][0] == '-' && strcmp(argv[optind], "--") != 0)
		return misplaced_option(argv[optind]);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return usage_error(usage, "no COMMAND given");
	req.command = argv + optind;
	req.lock_wait = common.lock_wait;

	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	/* Unknown working directory: the relative path is the best we have. */
	char *abs = path_absolute(path);
	if (!abs)
		abs = xstrdup(path);
	struct registry reg;
	rc = reg_open(&reg, path, 1);
	free(path);
	if (!rc && (setenv("JOBREG_JOB", req.job, 1) < 0 || setenv("JOBREG_DIR", abs, 1) < 0))
		rc = fail_errno(errno, req.job, "setenv");
	free(abs);
	if (rc) {
		reg_close(&reg);
		return rc;
	}

	/* The owner of the run: the run lock, and our pid fields for when
	 * the lock file is gone (SPEC §2). */
	struct reader id;
	probe_reader(&id);
	struct owner me = { .kind = OWNER_LOCK, .host = id.host ? id.host : "",
			    .pid = (long)getpid(), .boot_id = id.boot_id,
			    .pid_ns = id.pid_ns, .time_ns = id.time_ns };
	if (pid_start_time(me.pid, &me.pid_start) != 1)
		me.pid_start = 0;

	sigset_t hold, old_mask;
	supervise_signals(&hold, &old_mask);

	char started[21];
	int run_lock = -1, go = 0;
	rc = claim(&reg, &req, &me, started, &run_lock, &go, &hold);
	if (!go) {
		reg_close(&reg);
		return rc;
	}

	struct run_end end;
	char signame[SIGNAME_MAX];
	int lost = 0;
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
