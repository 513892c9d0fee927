/* jobreg-set: write a job's status (see jobreg-set(1)).  Past 450 lines:
 * four modes (STATUS or the settings alone, --cancel, --pause, --resume),
 * each with its options (modes[]) and its -a. */
#include "cmd/cli.h"
#include "registry/audit.h"
#include "registry/history.h"
#include "registry/listing.h"
#include "registry/pause.h"
#include "registry/sweep.h"
#include "registry/write.h"
#include "liveness/liveness.h"
#include "run/cancel.h"
#include "run/logrelay.h"
#include "util/msg.h"
#include "liveness/facts.h"
#include "record/record.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "liveness/jobstate.h"
#include "record/transition.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-set [-q] [-d DIR] [-w SECONDS] [--if S[,S]] [--owner PID] [--ttl SECONDS]"
	" [-m NOTE] [--exit N] [--late-after DURATION] [--overdue-after DURATION]"
	" [--notify-after N] [--keep-runs N] [--force] JOB STATUS"
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] [--late-after DURATION] [--overdue-after DURATION]"
	" [--notify-after N] [--keep-runs N] JOB"
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] --if S[,S] -a STATUS"
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] --cancel [--signal SIG] [--kill-after DURATION]"
	" [--wait DURATION] [-m NOTE] JOB..."
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] --pause [--for DURATION] [-m NOTE] (-a | JOB...)"
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] --resume (-a | JOB...)";
static const char help[] =
	"Write STATUS (PENDING, RUNNING or DONE) as JOB's record; without STATUS,\n"
	"only the settings given (the status and the run are left alone).\n"
	"      --if S[,S]    only if the current status is one of S, else exit 1\n"
	"                    (PENDING RUNNING STALE DONE; OK WARNING FAILED CANCELLED\n"
	"                    for DONE; LATE PAUSED OVERDUE)\n"
	"      --owner PID   RUNNING only: tie the record to the live process PID\n"
	"      --ttl SECONDS RUNNING only: the record reads STALE after SECONDS\n"
	"  -m, --note NOTE   replace the note (with --pause: the pause's own note)\n"
	"      --exit N      DONE only: record the run's exit status (0-255), judged\n"
	"                    OK, WARNING or FAILED by the lists its dispatcher kept\n"
	"      --late-after D  the job is late D after its last success (inf: never)\n"
	"      --overdue-after D  a run is overdue once it has run D (inf: never)\n"
	"      --notify-after N  notifiers announce FAILED after N failures in a row\n"
	"      --keep-runs N the history keeps the last N runs (default 20, 0: none)\n"
	"      --force       replace a corrupt record; make the change also when\n"
	"                    the audit log cannot take its line (said)\n"
	"  -a, --all         with --if: every job with a record (a sweep: records that\n"
	"                    do not match are left alone); with --pause, --resume: the\n"
	"                    registry itself, every job (the jobs' own pauses stay)\n"
	"      --cancel      ask each JOB's dispatched run to stop\n"
	"      --signal SIG  --cancel: the signal the run gets first (default TERM)\n"
	"      --kill-after D  --cancel: then KILL after D (default 10s)\n"
	"      --wait D      --cancel: also wait until the run has ended (inf: no limit)\n"
	"      --pause       start no run of each JOB (the run going is left alone)\n"
	"      --for D       --pause: the pause ends by itself after D (default: never)\n"
	"      --resume      end each JOB's pause\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for the job lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Every write is on the audit log (DIR/.-audit) first.\n"
	"Exit: 0; 1 --if mismatch, or no dispatched run to cancel; 64 usage; 65 corrupt\n"
	"record; 73 cannot create the registry; 74 I/O error; 75 lock busy, no answer to\n"
	"a cancel, or --wait passed; 77 permission or not a regular file.\n";

enum set_mode { MODE_SET, MODE_CANCEL, MODE_PAUSE, MODE_RESUME };

struct set_request {
	enum set_mode mode;
	const char *job;
	enum status status;
	unsigned if_mask;      /* 0: unconditional */
	long owner_pid;        /* 0: none */
	unsigned long long owner_start;   /* its start time, read once */
	double ttl;            /* 0: none */
	const char *note;
	long exit_status;      /* -1: none */
	int force;
	double late_after;     /* --late-after: seconds; -1: inf (remove) */
	long keep_runs;        /* --keep-runs; -1: not given */
	double overdue_after;  /* --overdue-after: seconds; -1: inf; OVERDUE_NOT_GIVEN */
	long notify_after;     /* --notify-after; 0: not given */
	int settings_only;     /* JOB with no STATUS: only the settings */
	int all;               /* -a: a sweep of every job with a record */
	char **jobs;           /* the JOB operands */
	int njobs;
	struct cancel_request cancel;   /* --cancel; its by (user@host) also --pause's */
	double wait;           /* --cancel --wait: seconds, -1 inf, -2 not given */
	double pause_for;      /* --pause --for: seconds, -1 inf (the default) */
	double lock_wait;      /* -w, for the job lock and the audit log's */
};

/* RUNNING's owner and expiry from REQ, into O and *EXPIRES. */
static int running_owner(const struct set_request *req, struct owner *o, time_t *expires)
{
	*o = (struct owner){ .kind = OWNER_NONE };
	*expires = 0;
	if (req->owner_pid) {
		/* The writer's identity: readers check the pid only where it
		 * means the same process (SPEC §2). */
		struct reader me;
		if (probe_reader(&me) < 0)
			return fail_errno(errno, req->job, "cannot read this process's identity from /proc");
		*o = (struct owner){ .kind = OWNER_PID, .host = me.host ? me.host : "",
				     .pid = req->owner_pid, .pid_start = req->owner_start,
				     .boot_id = me.boot_id, .pid_ns = me.pid_ns, .time_ns = me.time_ns };
	}
	if (req->ttl > 0) {
		/* Rounded up, so the record never expires early. */
		double until = now_real() + req->ttl;
		*expires = (time_t)until;
		if ((double)*expires < until)
			(*expires)++;
	}
	return 0;
}

/* When a --pause ends: now + --for, or INFINITY. */
static double pause_end(const struct set_request *req)
{
	return req->pause_for >= 0 ? now_real() + req->pause_for : INFINITY;
}

/* Under the job lock, apply REQ (a STATUS, --pause or --resume) to its
 * record; *HAD 1 when the record had a pause. */
static int set_locked(const struct registry *reg, const struct set_request *req, int *had)
{
	struct job_state st;
	struct record rec;
	int rc = jobstate_load(reg, req->job, &st);

	record_init(&rec);
	/* A corrupt record has no status for a sweep's --if to match: it is
	 * reported, never replaced. */
	if (rc == EXIT_CORRUPT && (!req->force || req->all)) {
		rc = jobstate_corrupt(reg, req->job, &st);
		goto out;
	}
	if (rc && rc != EXIT_CORRUPT)
		goto out;
	/* A sweep silently leaves alone what does not match, and a record
	 * gone since the listing (it creates none). */
	if (req->all && (!st.found || !jobstate_in(&st, req->if_mask)))
		goto out;
	if (req->if_mask && !jobstate_in(&st, req->if_mask)) {
		info(req->job, "status is %s", status_word(st.status));
		rc = EXIT_FALSE;
		goto out;
	}
	if (rc == EXIT_CORRUPT)
		info(req->job, "replacing corrupt record %s", reg_path(reg, req->job));
	else
		record_copy(&rec, &st.rec);
	rc = 0;

	time_t now = now_seconds();
	struct run_result end = { .exit_status = (int)req->exit_status };
	struct owner o;
	struct run_start how = { .owner = &o };
	struct before_run before;
	if (req->mode != MODE_SET) {
		if (!st.found)
			record_to_pending(&rec, now, NULL);
		*had = record_resume(&rec);
		if (req->mode == MODE_RESUME && !*had)
			goto out;
		if (req->mode == MODE_PAUSE)
			record_pause(&rec, pause_end(req), req->cancel.by, req->note);
	} else if (req->settings_only) {
		/* SPEC §5 jobreg-set: status, owner and run untouched. */
		if (!st.found)
			record_to_pending(&rec, now, NULL);
	} else if (req->status == ST_PENDING)
		record_to_pending(&rec, now, req->note);
	else if (req->status == ST_DONE) {
		/* (an OK run corrected to FAILED: what was before it) */
		if ((rc = history_before(reg, req->job, &rec, &end, &before)) == 0)
			record_to_done_after(&rec, now, &end, req->note, &before);
	} else if ((rc = running_owner(req, &o, &how.expires)) == 0)
		record_to_running(&rec, now, &how, req->note);
	if (rc)
		goto out;
	if (req->late_after != LATE_NOT_GIVEN)
		record_set_late(&rec, req->late_after, now);
	if (req->keep_runs >= 0)
		record_set_keep_runs(&rec, (unsigned long)req->keep_runs);
	if (req->overdue_after != OVERDUE_NOT_GIVEN)
		record_set_overdue(&rec, req->overdue_after);
	if (req->notify_after)
		record_set_notify_after(&rec, (unsigned long long)req->notify_after);
	/* DONE --exit ends the run the record started: its history line. */
	int ends = !req->settings_only && req->status == ST_DONE && req->exit_status >= 0 && record_get(&rec, "started");
	/* Every write of jobreg-set passes here: its audit line first (SPEC §3c). */
	static const char *const actions[] = { [MODE_SET] = "set", [MODE_CANCEL] = "cancel",
					       [MODE_PAUSE] = "pause", [MODE_RESUME] = "resume" };
	/* (a mode without a word of its own, a settings-only write: "set") */
	const char *action = req->mode < sizeof actions / sizeof *actions && actions[req->mode]
			     ? actions[req->mode] : "set";
	struct audit_line a = { .action = action, .job = req->job,
				.status = status_word(record_status(&rec)), .note = req->note,
				.until = req->mode == MODE_PAUSE ? record_get(&rec, "paused_until") : NULL };
	struct audit_change change;
	if ((rc = audit_begin(reg, &a, req->lock_wait, req->force, &change)) != 0)
		goto out;
	rc = commit_record(reg, req->job, jobstate_record(&st), st.status, &rec, ends ? &rec : NULL);
	rc = audit_end(reg, &a, req->lock_wait, &change, rc);
	/* A new run by hand: the last run's log is no longer the latest's. */
	if (!rc && record_count(&rec, "runs") > record_count(&st.rec, "runs")) {
		message_context("the record is in place");
		rc = logrelay_turn_over(reg, req->job, jobstate_last_run_failed(&st));
		message_context(NULL);
	}
out:
	record_free(&rec);
	jobstate_free(&st);
	return rc;
}

/* --cancel, --pause, --resume: one of them. */
static void choose_mode(struct set_request *req, enum set_mode mode)
{
	if (req->mode != MODE_SET && req->mode != mode)
		usage_error("--cancel, --pause and --resume are each a call of their own");
	req->mode = mode;
}

/* The modes, each with the long options that are for it alone. */
static const struct {
	const char *name;           /* the option that chooses it ("" for a STATUS) */
	const char *only[10];       /* NULL-ended */
} modes[] = {
	[MODE_SET] = { "", { "if", "owner", "ttl", "exit", "force", "late-after", "keep-runs",
			     "overdue-after", "notify-after" } },
	[MODE_CANCEL] = { "--cancel", { "signal", "kill-after", "wait" } },
	[MODE_PAUSE] = { "--pause", { "for" } },
	[MODE_RESUME] = { "--resume", { NULL } },
};
#define MODES (sizeof modes / sizeof modes[0])

/* The mode option NAME is for alone, or -1 when it is for several. */
static int option_mode(const char *name)
{
	for (size_t m = 0; m < MODES; m++)
		for (const char *const *o = modes[m].only; *o; o++)
			if (strcmp(*o, name) == 0)
				return (int)m;
	return -1;
}

/* The JOB operands of --cancel, --pause, --resume (or -a). */
static void job_operands(struct set_request *req, int argc, char **argv)
{
	const char *mode = modes[req->mode].name;
	int n = argc - optind;
	if (req->all && req->mode == MODE_CANCEL)
		usage_error("-a is not for --cancel: name the jobs");
	if (req->all && n > 0)
		usage_error("-a takes no JOB");
	if (!req->all && n == 0)
		usage_error("%s needs a JOB%s", mode, req->mode == MODE_CANCEL ? "" : " or -a");
	/* "--cancel JOB DONE": a STATUS, not a job named DONE. */
	const char *last = argv[argc - 1];
	if (n > 1 && status_from_word(last, strlen(last), 1) >= 0)
		usage_error("%s takes no STATUS ('%s')", mode, last);
	check_job_ids(argv + optind, n);
	req->jobs = argv + optind;
	req->njobs = n;
}

/* JOB alone: the settings-only form (SPEC §5 jobreg-set), which takes
 * the settings and nothing that writes a status.  0 when no setting was
 * given (JOB and STATUS are then needed). */
static int settings_only(struct set_request *req, char **jobs)
{
	const char *job = jobs[0];
	if (req->late_after == LATE_NOT_GIVEN && req->overdue_after == OVERDUE_NOT_GIVEN &&
	    !req->notify_after && req->keep_runs < 0)
		return 0;
	if (req->if_mask || req->owner_pid || req->ttl > 0 || req->exit_status >= 0 ||
	    req->force || req->note)
		usage_error("--if, --owner, --ttl, --exit, --force and -m need a STATUS");
	/* "--late-after 1h DONE": a STATUS with its JOB forgotten. */
	if (status_from_word(job, strlen(job), 1) >= 0)
		usage_error("JOB needed before STATUS '%s'", job);
	check_job_ids(jobs, 1);
	req->job = job;
	req->jobs = jobs;
	req->njobs = 1;
	req->settings_only = 1;
	return 1;
}

/* Options and operands into REQ; a usage error exits 64. */
static void parse_options(int argc, char **argv, struct common *common, struct set_request *req)
{
	static const struct option longopts[] = {
		{ "if", required_argument, 0, 'I' },
		{ "owner", required_argument, 0, 'O' },
		{ "ttl", required_argument, 0, 'T' },
		{ "note", required_argument, 0, 'm' },
		{ "exit", required_argument, 0, 'X' },
		{ "force", no_argument, 0, 'F' },
		{ "late-after", required_argument, 0, 'L' },
		{ "keep-runs", required_argument, 0, 'K' },
		{ "overdue-after", required_argument, 0, 'o' },
		{ "notify-after", required_argument, 0, 'n' },
		{ "all", no_argument, 0, 'a' },
		{ "cancel", no_argument, 0, 'C' },
		{ "signal", required_argument, 0, 'S' },
		{ "kill-after", required_argument, 0, 'k' },
		{ "wait", required_argument, 0, 'W' },
		{ "pause", no_argument, 0, 'P' },
		{ "for", required_argument, 0, 'f' },
		{ "resume", no_argument, 0, 'R' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	/* Each mode's first option given of its own: the others refuse it. */
	const char *given[MODES] = {0};
	int opt;

	cli_init("jobreg-set", argv, usage, help, longopts, common);
	while ((opt = cli_next_option(argc, argv, "+:am:" COMMON_SHORTOPTS)) != -1) {
		for (const struct option *o = longopts; o->name; o++) {
			int m = o->val == opt ? option_mode(o->name) : -1;
			if (m >= 0 && !given[m])
				given[m] = o->name;
		}
		switch (opt) {
		case 'I': req->if_mask = status_list_or_err(optarg); break;
		case 'O': req->owner_pid = number_or_err(optarg, 1, INT_MAX, "pid"); break;
		case 'T':
			if ((req->ttl = duration_or_err(optarg, "ttl")) == 0)
				bad_value("ttl", optarg, "more than 0");
			break;
		case 'm': req->note = note_or_err(optarg); break;
		case 'X': req->exit_status = number_or_err(optarg, 0, 255, "exit status"); break;
		case 'F': req->force = 1; break;
		case 'L': req->late_after = late_after_or_err(optarg); break;
		case 'K': req->keep_runs = number_or_err(optarg, 0, KEEP_RUNS_MAX, "keep-runs"); break;
		case 'o': req->overdue_after = overdue_after_or_err(optarg); break;
		case 'n': req->notify_after = (long)notify_after_or_err(optarg); break;
		case 'a': req->all = 1; break;
		case 'C': choose_mode(req, MODE_CANCEL); break;
		case 'S': req->cancel.signal = cancel_signal_or_err(optarg); break;
		case 'k': req->cancel.kill_after = duration_or_err(optarg, "kill-after"); break;
		case 'W': req->wait = limit_or_err(optarg, "wait"); break;
		case 'P': choose_mode(req, MODE_PAUSE); break;
		case 'f':
			if ((req->pause_for = limit_or_err(optarg, "for")) == 0)
				bad_value("for", optarg, "more than 0, or inf");
			break;
		case 'R': choose_mode(req, MODE_RESUME); break;
		}
	}
	for (int i = optind; i < argc && !cli_after_dashdash(); i++)
		if (argv[i][0] == '-' && argv[i][1])
			misplaced_option(argv[i]);
	for (size_t m = 0; m < MODES; m++) {
		if (m == req->mode || !given[m])
			continue;
		if (m == MODE_SET)
			usage_error("--%s is not for %s", given[m], modes[req->mode].name);
		usage_error("--%s is for %s only", given[m], modes[m].name);
	}
	if (req->mode == MODE_RESUME && req->note)
		usage_error("-m is not for --resume");
	if (req->mode != MODE_SET) {
		job_operands(req, argc, argv);
		return;
	}
	/* Without --if, -a would write every record alike. */
	if (req->all && !req->if_mask)
		usage_error("-a needs --if, --pause or --resume");
	if (req->all && argc - optind != 1)
		usage_error(argc > optind ? "-a takes no JOB" : "STATUS needed");
	if (!req->all && argc - optind == 1 && settings_only(req, argv + optind))
		return;
	if (!req->all && argc - optind != 2)
		usage_error(argc - optind < 2 ? "JOB and STATUS needed" : "too many operands");
	req->job = req->all ? NULL : argv[optind];
	req->jobs = argv + optind;
	req->njobs = !req->all;
	check_job_ids(argv + optind, req->njobs);
	const char *word = argv[argc - 1];
	int st = status_from_word(word, strlen(word), 1);
	if (st == ST_STALE)
		exit(fail(EXIT_USAGE, req->job, "STALE is derived by readers and cannot be set"));
	if (st < 0)
		exit(fail(EXIT_USAGE, req->job, "bad status '%s' (PENDING, RUNNING or DONE)", word));
	req->status = (enum status)st;
	if ((req->owner_pid || req->ttl > 0) && req->status != ST_RUNNING)
		exit(fail(EXIT_USAGE, req->job, "--%s is for RUNNING only",
			  req->owner_pid ? "owner" : "ttl"));
	if (req->exit_status >= 0 && req->status != ST_DONE)
		exit(fail(EXIT_USAGE, req->job, "--exit is for DONE only"));
}

/* --owner PID: a live process; its start time read once, here. */
static int check_owner(struct set_request *req)
{
	struct probes p = { .pid = PID_UNPROBED };
	if (probe_pid(req->owner_pid, &p) < 0)
		return fail_errno(errno, req->job, "read /proc/%ld/stat", req->owner_pid);
	if (p.pid == PID_GONE || p.pid == PID_ZOMBIE)
		return fail(EXIT_USAGE, req->job, "no such process: %ld", req->owner_pid);
	/* kill(2) sees it but /proc hides it (hidepid=): the record gets no
	 * pid_start, and a reused pid would pass for it. */
	if (p.pid == PID_HIDDEN)
		info(req->job, "pid %ld: start time hidden by /proc; recorded without pid_start",
		     req->owner_pid);
	req->owner_start = p.pid == PID_STARTED ? p.pid_start : 0;
	return 0;
}

/* Has JOB a record (or something else under its name)?  --cancel and
 * --resume write nothing, not even a lock file, for a job with none. */
static int has_entry(const struct registry *reg, const char *job)
{
	struct stat sb;
	return reg->fd >= 0 && (fstatat(reg->fd, job, &sb, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT);
}

/* --resume JOB while the registry is paused: say that its pause remains;
 * 1 when the job had no pause of its own (HAD) to end. */
static int registry_pause_remains(const struct registry *reg, const char *job, int had)
{
	struct record pause;
	struct buf why = {0};
	int paused;
	int rc = registry_pause_read(reg, now_real(), &pause, &paused);
	if (!rc && paused) {
		record_pause_describe(&pause, &why);
		info(job, "the registry's pause remains, %s; jobreg-set --resume -a ends it", why.data);
		rc = had ? 0 : EXIT_FALSE;
	}
	buf_free(&why);
	record_free(&pause);
	return rc;
}

/* REQ's job under its lock; an exit status. */
static int set_one(const struct registry *reg, const struct set_request *req, double lock_wait)
{
	int lock = -1, had = 0, rc = 0;
	if (req->mode != MODE_RESUME || has_entry(reg, req->job)) {
		rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
		if (!rc)
			rc = set_locked(reg, req, &had);
		reg_unlock(&lock);
	}
	if (!rc && req->mode == MODE_RESUME)
		rc = registry_pause_remains(reg, req->job, had);
	return rc;
}

/* --cancel: the request written under the job lock; the wait for the
 * answer after it is let go. */
static int cancel_one(struct registry *reg, const struct set_request *req, double lock_wait)
{
	struct job_state st = { .status = ST_PENDING };
	unsigned long long run = 0;
	int lock = -1;
	if (!has_entry(reg, req->job))
		return cancel_ask(reg, req->job, &st, &req->cancel, lock_wait, &run);
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
	if (!rc) {
		if ((rc = jobstate_load(reg, req->job, &st)) == EXIT_CORRUPT)
			rc = jobstate_corrupt(reg, req->job, &st);
		if (!rc)
			rc = cancel_ask(reg, req->job, &st, &req->cancel, lock_wait, &run);
		jobstate_free(&st);
	}
	reg_unlock(&lock);
	return rc ? rc : cancel_wait(reg, req->job, run, req->wait);
}

/* -a STATUS: each job with a record under its own lock, in sorted order. */
static int set_all(const struct registry *reg, struct set_request *req, double lock_wait)
{
	struct listing l;
	int status = reg_list(reg, LIST_ALL, &l);
	if (status)
		return status;
	for (size_t i = 0; i < l.njobs; i++) {
		req->job = l.jobs[i];
		keep_first(&status, set_one(reg, req, lock_wait));
	}
	sweep_places(reg, &l);
	listing_free(&l);
	return status;
}

int main(int argc, char **argv)
{
	struct common common;
	struct set_request req = { .exit_status = -1, .late_after = LATE_NOT_GIVEN,
				   .overdue_after = OVERDUE_NOT_GIVEN, .keep_runs = -1, .wait = -2, .pause_for = -1,
				   .cancel = { .signal = SIGTERM, .kill_after = 10 } };
	struct registry reg;
	int rc;

	parse_options(argc, argv, &common, &req);
	if (req.owner_pid && (rc = check_owner(&req)) != 0)
		return rc;
	char *path = registry_path(common.dir);
	/* -a STATUS acts on records there are, --cancel and --resume only on
	 * those that are: they create no registry. */
	int create = req.mode == MODE_PAUSE || (req.mode == MODE_SET && !req.all);
	rc = reg_open(&reg, path, create);
	free(path);
	if (rc || (reg.fd < 0 && req.mode != MODE_CANCEL)) {
		reg_close(&reg);
		return rc;
	}
	struct buf by = {0};
	if (req.mode == MODE_CANCEL || req.mode == MODE_PAUSE)
		user_at_host(&by);
	req.cancel.by = by.data;
	req.cancel.note = req.note;
	req.lock_wait = common.lock_wait;
	/* --pause -a, --resume -a: the registry's own pause (DIR/.-pause), not the jobs'. */
	int had;
	if (req.all && req.mode == MODE_PAUSE)
		rc = registry_pause(&reg, pause_end(&req), req.cancel.by, req.note, common.lock_wait);
	else if (req.all && req.mode == MODE_RESUME)
		rc = registry_resume(&reg, common.lock_wait, &had);
	else if (req.all)
		rc = set_all(&reg, &req, common.lock_wait);
	for (int i = 0; !req.all && i < req.njobs; i++) {
		req.job = req.jobs[i];
		if (req.mode == MODE_CANCEL)
			keep_first(&rc, cancel_one(&reg, &req, common.lock_wait));
		else
			keep_first(&rc, set_one(&reg, &req, common.lock_wait));
	}
	buf_free(&by);
	reg_close(&reg);
	return rc;
}
