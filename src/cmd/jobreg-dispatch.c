/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)).  Here the options; steps 1-4 are start.c's, its
 * attempts and its end (steps 5 and 6) attempts.c's. */
#include "cmd/cli.h"
#include "report/notify.h"
#include "run/attempts.h"
#include "run/holders.h"
#include "run/logrelay.h"
#include "run/logview.h"
#include "run/runrecord.h"
#include "run/start.h"
#include "liveness/facts.h"
#include "liveness/proc.h"
#include "record/record.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "registry/slots.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"
#include "run/supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-dispatch [-q] [-d DIR] [-w SECONDS] [--once [--retry-failed] | --clear | --every DURATION]"
	" [--wait DURATION] [--coalesce | --replace] [--slots NAME:N]... [--timeout DURATION]"
	" [--kill-after DURATION] [--signal SIG]"
	" [--retries N [--retry-delay DURATION]] [--log | --chronic] [--log-size SIZE]"
	" [--late-after DURATION] [--overdue-after DURATION] [--keep-runs N] [--ok-exit LIST]"
	" [--warn-exit LIST] [--retry-exit LIST] [--min-duration DURATION] [--after JOB[,JOB]...]"
	" [--notify CMD] [--notify-after N]"
	" [-E CODE] [-m NOTE] JOB [--] COMMAND [ARG...]";
static const char help[] =
	"Run COMMAND as the one live run of JOB, recording RUNNING and then DONE.\n"
	"      --once        do not run if JOB is DONE: replay its result (0, or the\n"
	"                    failed run's status); wait for a run in progress\n"
	"      --retry-failed  with --once: run again if the DONE run failed\n"
	"      --clear       remove the record after the run instead of writing DONE\n"
	"      --every D     run only once the last successful run started D ago\n"
	"      --wait D      if JOB is running, wait in line (at most D, inf: no\n"
	"                    limit), then start over\n"
	"      --coalesce    wait, but as one waiting call for all that come meanwhile\n"
	"      --replace     stop the live run and the calls waiting, then run\n"
	"      --slots NAME:N  run only with one of N slots of group NAME free\n"
	"                    (repeatable); if none: 75, or wait in line (--wait, --once)\n"
	"      --timeout D   send COMMAND's process group SIG if it runs longer than D\n"
	"      --kill-after K  and KILL K later;  --signal SIG  (default TERM);\n"
	"                    also the stop of --replace (default 10s)\n"
	"      --retries N   run a FAILED run again, up to N more times, waiting\n"
	"      --retry-delay D  D before the first retry (default 10s), doubling\n"
	"      --log         keep the run's output in DIR/.JOB.log (and pass it on)\n"
	"      --chronic     keep it, pass nothing on, and print it if the run FAILED\n"
	"      --log-size S  keep at least the last S bytes (default 1M; k, M, G)\n"
	"      --late-after D  the job is late D after its last success (inf: never)\n"
	"      --overdue-after D  the run is overdue once it has run D (inf: never)\n"
	"      --keep-runs N the history keeps the last N runs (default 20, 0: none)\n"
	"      --ok-exit LIST  exit statuses besides 0 that are OK (3,24,64-78; '':\n"
	"                    none); kept for the job's later runs\n"
	"      --warn-exit LIST  exit statuses that are OK with a WARNING; kept too\n"
	"      --min-duration D  an OK run shorter than D is a WARNING; kept too\n"
	"      --retry-exit LIST  with --retries: retry only a failed run whose exit\n"
	"                    status is in LIST (not one ended by a signal or time limit)\n"
	"      --after JOB[,JOB]...  run only after a new success of each JOB, none\n"
	"                    of them running (repeatable; '' forgets the list);\n"
	"                    with --wait D, wait for that\n"
	"      --notify CMD  run CMD (/bin/sh -c) when the job's health changes\n"
	"                    (default $JOBREG_NOTIFY; '' none); also when overdue\n"
	"      --notify-after N  notifiers say FAILED once N runs in a row failed\n"
	"  -E, --conflict-exit-code CODE  exit CODE, not 75, when not run (busy, paused)\n"
	"  -m, --note NOTE   the note of this run\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for a lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: COMMAND's status (128+N if killed by signal N; 126 not executable,\n"
	"127 not found), 0 for an OK or WARNING run; 124 its time limit ended it;\n"
	"--once on a DONE job: 0 (OK, WARNING), or the failed run's status; 0 not\n"
	"due (--every, --after), coalesced; 64 usage; 65 corrupt record;\n"
	"73 cannot create the registry; 74 I/O error; 75 running, waiters ahead,\n"
	"paused, no free slot, superseded, --wait ran out, or lock busy; 77 permission or not a\n"
	"regular file.\n";

/* --log and --chronic: one of them. */
static void set_log(struct run_request *req, enum log_mode mode)
{
	if (req->log != LOG_NONE && req->log != mode)
		usage_error("--log and --chronic exclude each other");
	req->log = mode;
}

/* --ok-exit, --warn-exit: a list, or '' to remove the stored one. */
static const char *policy_list(const char *arg, const char *what)
{
	struct exit_set set;
	if (*arg)
		exit_list_or_err(arg, what, &set);
	return arg;
}

/* --after LIST (repeatable, SPEC §5d): its jobs into REQ, each once; ''
 * names none. */
static void add_after(struct run_request *req, const char *list)
{
	for (const char *p = list; *p; p++) {
		size_t n = strcspn(p, ",");
		char *job = xstrndup(p, n);
		if (n == 0 || (p[n] == ',' && p[n + 1] == '\0'))
			usage_error("--after %s: an empty job id", list);
		if (job[0] == '-')
			usage_error("--after %s: bad job id '%s'", list, job);
		check_job_ids(&job, 1);
		size_t i = 0;
		while (i < req->nafter && strcmp(req->after_jobs[i], job) != 0)
			i++;
		if (i < req->nafter) {
			free(job);
		} else {
			req->after_jobs = xrealloc(req->after_jobs,
						   (req->nafter + 1) * sizeof *req->after_jobs);
			req->after_jobs[req->nafter++] = job;
		}
		p += n;
		if (!*p)
			break;
	}
}

/* The --after list as the record keeps it: "backup,dump", "" for none. */
static char *after_list(const struct run_request *req)
{
	struct buf list = {0};
	for (size_t i = 0; i < req->nafter; i++)
		buf_addf(&list, "%s%s", i ? "," : "", req->after_jobs[i]);
	return list.data ? list.data : xstrdup("");
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

/* The options that go together, GIVEN by letter; a usage error exits 64. */
static void check_request(const struct run_request *req, const unsigned char *given)
{
	if (req->retry_failed && !req->once)
		usage_error("--retry-failed needs --once");
	/* --clear removes the result --once replays: every call would run. */
	if (req->once && req->clear_after)
		usage_error("--once and --clear exclude each other");
	if ((given['K'] || given['S']) && !given['T'] && !req->replace)
		usage_error("--kill-after and --signal need --timeout or --replace");
	if (given['S'] && req->replace)
		(void)cancel_signal_or_err(req->signal_arg);
	if (req->coalesce && req->replace)
		usage_error("--coalesce and --replace exclude each other");
	/* --every runs from a success --once would replay, in a record --clear removes. */
	if (given['e'] && (req->once || req->clear_after))
		usage_error("--every excludes --once and --clear");
	if (given['D'] && !given['r'])
		usage_error("--retry-delay needs --retries");
	if (req->retry_exit_given && !given['r'])
		usage_error("--retry-exit needs --retries");
	if (given['z'] && req->log == LOG_NONE)
		usage_error("--log-size needs --log or --chronic");
	/* --once replays a result, --clear removes the one --after follows. */
	if (given['a'] && (req->once || req->clear_after))
		usage_error("--after excludes --once and --clear");
	/* --clear removes the record that would carry the announcement. */
	if (given['n'] && req->clear_after)
		usage_error("--clear and --notify exclude each other");
}

/* Options and operands into REQ; a usage error exits 64. */
static void parse_options(int argc, char **argv, struct common *common, struct run_request *req)
{
	static const struct option longopts[] = {
		{ "once", no_argument, 0, 'O' },
		{ "retry-failed", no_argument, 0, 'R' },
		{ "clear", no_argument, 0, 'C' },
		{ "wait", required_argument, 0, 'W' },
		{ "coalesce", no_argument, 0, 'o' },
		{ "replace", no_argument, 0, 'P' },
		{ "every", required_argument, 0, 'e' },
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
		{ "overdue-after", required_argument, 0, 'u' },
		{ "keep-runs", required_argument, 0, 'k' },
		{ "slots", required_argument, 0, 'N' },
		{ "ok-exit", required_argument, 0, 'y' },
		{ "warn-exit", required_argument, 0, 'Y' },
		{ "min-duration", required_argument, 0, 'M' },
		{ "retry-exit", required_argument, 0, 'X' },
		{ "after", required_argument, 0, 'a' },
		{ "notify", required_argument, 0, 'n' },
		{ "notify-after", required_argument, 0, 'A' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	unsigned char given[128] = {0};   /* the options given, by letter */
	const char *why;
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
		case 'o': req->coalesce = 1; break;
		case 'P': req->replace = 1; break;
		case 'e':
			if ((req->every = duration_or_err(optarg, "every")) <= 0)
				usage_error("--every needs a period longer than 0");
			break;
		case 'E': req->conflict_code = (int)number_or_err(optarg, 0, 255, "exit code"); break;
		case 'm': req->note = note_or_err(optarg); break;
		case 'T': req->timeout = limit_or_err(optarg, "timeout"); break;
		case 'K':
			req->kill_after = limit_or_err(optarg, "kill-after");
			req->kill_after_given = 1;
			break;
		case 'S':
			req->timeout_signal = signal_or_err(optarg);
			req->signal_arg = optarg;
			break;
		case 'r': req->retries = number_or_err(optarg, 0, 1000, "retries"); break;
		case 'D': req->retry_delay = duration_or_err(optarg, "retry delay"); break;
		case 'L': set_log(req, LOG_PASS); break;
		case 'c': set_log(req, LOG_CHRONIC); break;
		case 'z': req->log_size = size_or_err(optarg); break;
		case 'l': req->late_after = late_after_or_err(optarg); break;
		case 'u': req->overdue_after = overdue_after_or_err(optarg); break;
		case 'k': req->keep_runs = number_or_err(optarg, 0, KEEP_RUNS_MAX, "keep-runs"); break;
		case 'N':
			if ((why = slots_add(req->slots, optarg)) != NULL)
				usage_error("--slots %s: %s", optarg, why);
			break;
		case 'y': req->ok_exit = policy_list(optarg, "ok-exit list"); break;
		case 'Y': req->warn_exit = policy_list(optarg, "warn-exit list"); break;
		case 'M': req->min_duration = *optarg ? duration_or_err(optarg, "min-duration") : 0; break;
		case 'X':
			exit_list_or_err(optarg, "retry-exit list", &req->retry_exit);
			req->retry_exit_given = 1;
			break;
		case 'a': add_after(req, optarg); break;
		case 'n': req->notify = optarg; break;
		case 'A':
			req->notify_after = notify_after_or_err(optarg);
			break;
		}
	}
	/* The option overrides JOBREG_NOTIFY, which --clear ignores; '' is none. */
	if (!given['n'] && !req->clear_after)
		req->notify = getenv("JOBREG_NOTIFY");
	if (req->notify && !*req->notify)
		req->notify = NULL;
	check_request(req, given);
	parse_operands(argc, argv, req);
	for (size_t i = 0; i < req->nafter; i++)
		if (strcmp(req->after_jobs[i], req->job) == 0)
			usage_error("--after %s: a job cannot follow itself", req->job);
	if (given['a'])
		req->after = after_list(req);
	req->lock_wait = common->lock_wait;
	req->sigpipe_ignored = common->sigpipe_ignored;
}

/* The registry, created if missing; JOBREG_JOB and JOBREG_DIR set. */
static int open_registry(struct registry *reg, const struct common *common, const char *job)
{
	char *path = registry_path(common->dir);
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

/* The run's owner: the run lock, and pid fields for when its file is gone (SPEC §2). */
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

/* SPEC §5c: after the run, its run lock and slots let go, the change (if
 * any) announced, after the overdue notifier's (attempts.h); the exit
 * status never depends on CMD. */
static void notify_after_run(const struct registry *reg, const struct common *common,
			     const struct run_request *req, const struct run *run)
{
	struct notifier n = { .cmd = req->notify, .lock_wait = common->lock_wait };
	while (run->notifier > 0 && waitpid(run->notifier, NULL, 0) < 0 && errno == EINTR)
		;
	if (req->notify)
		(void)notify_job(reg, req->job, &n);
}

int main(int argc, char **argv)
{
	struct common common;
	struct run_request req = { .conflict_code = EXIT_BUSY, .wait_limit = -1,
				   .timeout_signal = SIGTERM, .retry_delay = 10,
				   .log_size = LOG_SIZE_DEFAULT, .late_after = LATE_NOT_GIVEN,
				   .overdue_after = OVERDUE_NOT_GIVEN, .keep_runs = -1, .min_duration = -1 };
	struct registry reg;
	struct run run = {0};
	struct slot_set slots = {0};
	sigset_t hold, old_mask;
	int run_lock = -1, lost = 0, rc;

	req.slots = &slots;
	parse_options(argc, argv, &common, &req);
	if ((rc = open_registry(&reg, &common, req.job)) != 0)
		return rc;
	if (start_not_due(&reg, &req))
		goto out;
	run = (struct run){ .req = &req, .attempt = req.retries > 0 };
	if ((rc = identify(req.job, &run.owner)) != 0)
		goto out;
	supervise_signals(&hold, &old_mask);
	rc = start_run(&reg, &req, &run, &run_lock, &hold);
	if (run_lock < 0)
		goto out;
	/* A lost run counted by the takeover is announced as the run begins
	 * (SPEC §5c), by a child as the overdue notice is. */
	if (!(run.took_over && req.notify && run_notifier_fork(&run, run_lock, NULL)))
		rc = run_attempts(&reg, &run, run_lock, &hold, &old_mask, &lost);
	if (run.notifier_child) {
		/* The takeover's or overdue notifier (attempts.h): nothing of the
		 * run is its. */
		struct notifier n = { .cmd = req.notify, .lock_wait = common.lock_wait };
		(void)notify_job(&reg, req.job, &n);
		(void)out_flush();
		_exit(0);
	}
	if (lost)
		reg_unlock(&run_lock);   /* SPEC §6: not ours any more */
	else
		run_lock_release(&reg, req.job, &run_lock);
	slots_release(&slots);
	notify_after_run(&reg, &common, &req, &run);
out:
	for (size_t i = 0; i < req.nafter; i++)
		free(req.after_jobs[i]);
	free(req.after_jobs);
	free((char *)req.after);
	free(run.after_seen);
	slots_free(&slots);
	reg_close(&reg);
	return rc;
}
