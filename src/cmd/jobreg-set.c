/* jobreg-set: write a job's status (see jobreg-set(1)). */
#include "cmd/cli.h"
#include "registry/history.h"
#include "registry/write.h"
#include "liveness/liveness.h"
#include "run/logrelay.h"
#include "util/msg.h"
#include "liveness/facts.h"
#include "record/record.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "liveness/jobstate.h"
#include "registry/listing.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-set [-q] [-d DIR] [-w SECONDS] [--if S[,S]] [--owner PID] [--ttl SECONDS]"
	" [-m NOTE] [--exit N] [--late-after DURATION] [--keep-runs N] [--force] JOB STATUS"
	" | jobreg-set [-q] [-d DIR] [-w SECONDS] --if S[,S] -a STATUS";
static const char help[] =
	"Write STATUS (PENDING, RUNNING or DONE) as JOB's record.\n"
	"      --if S[,S]    only if the current status is one of S (else exit 1)\n"
	"      --owner PID   RUNNING only: tie the record to the live process PID\n"
	"      --ttl SECONDS RUNNING only: the record reads STALE after SECONDS\n"
	"  -m, --note NOTE   replace the note\n"
	"      --exit N      DONE only: record the run's exit status (0-255)\n"
	"      --late-after D  the job is late D after its last success (inf: never)\n"
	"      --keep-runs N the history keeps the last N runs (default 20, 0: none)\n"
	"      --force       replace a corrupt record\n"
	"  -a, --all         with --if: every job with a record (a sweep: records that\n"
	"                    do not match are left alone)\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for the job lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: 0; 1 --if mismatch; 64 usage; 65 corrupt record; 73 cannot create the\n"
	"registry; 74 I/O error; 75 lock busy; 77 permission or not a regular file.\n";

struct set_request {
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
	int all;               /* -a: a sweep of every job with a record */
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

/* Apply REQ to the record under the job lock. */
static int set_locked(const struct registry *reg, const struct set_request *req)
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
	/* A sweep leaves alone, silently, what does not match, and a record
	 * gone since the listing: it writes no record that was not there. */
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
	if (req->status == ST_PENDING)
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
	/* A DONE with a result (--exit) ends the run it names (the record
	 * has its start): its history line. */
	int ends = req->status == ST_DONE && req->exit_status >= 0 && record_get(&rec, "started");
	rc = commit_record(reg, req->job, jobstate_record(&st), st.status, &rec, ends ? &rec : NULL);
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
		{ "all", no_argument, 0, 'a' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	int opt;

	cli_init("jobreg-set", argv, usage, help, longopts, common);
	while ((opt = cli_next_option(argc, argv, "+:am:" COMMON_SHORTOPTS)) != -1) {
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
		case 'a': req->all = 1; break;
		default: common_option(opt, optarg, common);
		}
	}
	for (int i = optind; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			misplaced_option(argv[i]);
	if (req->all && !req->if_mask)
		usage_error("-a needs --if");
	if (req->all && argc - optind != 1)
		usage_error(argc > optind ? "-a takes no JOB" : "STATUS needed");
	if (!req->all && argc - optind != 2)
		usage_error(argc - optind < 2 ? "JOB and STATUS needed" : "too many operands");
	req->job = req->all ? NULL : argv[optind];
	if (!req->all)
		check_job_ids(argv + optind, 1);
	const char *word = argv[argc - 1];
	int st = status_from_word(word, strlen(word), 1);
	if (st == ST_STALE)
		exit(fail(EXIT_USAGE, req->job, "STALE is derived by readers and cannot be set"));
	if (st < 0)
		exit(fail(EXIT_USAGE, req->job, "bad status '%s' (PENDING, RUNNING or DONE)", word));
	req->status = (enum status)st;
}

/* The options each STATUS takes (jobreg-set(1)); a usage error exits 64. */
static void check_request(const struct set_request *req)
{
	if (req->owner_pid && req->status != ST_RUNNING)
		exit(fail(EXIT_USAGE, req->job, "--owner is for RUNNING only"));
	if (req->ttl > 0 && req->status != ST_RUNNING)
		exit(fail(EXIT_USAGE, req->job, "--ttl is for RUNNING only"));
	if (req->exit_status >= 0 && req->status != ST_DONE)
		exit(fail(EXIT_USAGE, req->job, "--exit is for DONE only"));
}

/* --owner PID: the pid must be a live process; its start time is read
 * once, here. */
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

/* set -a --if S STATUS: every listed job, each under its own lock; a
 * failure is reported and the sweep goes on (SPEC §7: the first one's
 * status). */
static int set_all(const struct registry *reg, struct set_request *req, double lock_wait)
{
	struct listing l;
	int status = reg_list(reg, LIST_JOBS, &l);
	if (status)
		return status;
	for (size_t i = 0; i < l.njobs; i++) {
		int lock = -1;
		req->job = l.jobs[i];
		int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
		if (!rc)
			rc = set_locked(reg, req);
		reg_unlock(&lock);
		keep_first(&status, rc);
	}
	listing_free(&l);
	return status;
}

int main(int argc, char **argv)
{
	struct common common;
	struct set_request req = { .exit_status = -1, .late_after = LATE_NOT_GIVEN,
				   .keep_runs = -1 };
	struct registry reg;
	int lock = -1, rc;

	parse_options(argc, argv, &common, &req);
	check_request(&req);
	if (req.owner_pid && (rc = check_owner(&req)) != 0)
		return rc;
	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	/* A sweep writes no record that was not there: nor a registry. */
	rc = reg_open(&reg, path, !req.all);
	free(path);
	if (rc)
		return rc;
	if (req.all) {
		rc = set_all(&reg, &req, common.lock_wait);
		reg_close(&reg);
		return rc;
	}
	rc = reg_lock(&reg, req.job, JOB_LOCK, LOCK_EX, common.lock_wait, LOCK_CREATE, &lock);
	if (!rc)
		rc = set_locked(&reg, &req);
	reg_unlock(&lock);
	reg_close(&reg);
	return rc;
}
