/* jobreg-clear: remove job records (see jobreg-clear(1)). */
#include "cmd/cli.h"
#include "registry/listing.h"
#include "record/record.h"
#include "registry/audit.h"
#include "registry/line.h"
#include "registry/lock.h"
#include "registry/registry.h"
#include "liveness/jobstate.h"
#include "registry/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

static const char usage[] =
	"jobreg-clear [-q] [-d DIR] [-w SECONDS] [--if S[,S]] [--stale]"
	" [--older-than DURATION] [--force] [-n] [-v] [-a | JOB...]";
static const char help[] =
	"Remove the records of jobs: they read PENDING again.\n"
	"      --if S[,S]    only records whose status is one of S (PENDING RUNNING\n"
	"                    STALE DONE; OK WARNING FAILED CANCELLED for DONE; LATE\n"
	"                    PAUSED OVERDUE)\n"
	"      --stale       only STALE records\n"
	"      --older-than DURATION  only records whose since is older (units s m h d)\n"
	"      --force       also clear a live run, or a corrupt record, or when the\n"
	"                    audit log cannot take its line (said)\n"
	"  -n, --dry-run     print the jobs that would be cleared; change nothing\n"
	"  -v, --verbose     print each job as it is cleared\n"
	"  -a, --all         every job (a sweep: records that do not match are left alone)\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for the job lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: 0; 1 a named job did not match, or is running; 64 usage; 65 corrupt\n"
	"record; 74 I/O error; 75 lock busy; 77 permission or not a regular file.\n";

struct filter {
	unsigned if_mask;     /* 0: any status */
	int stale;
	double older_than;    /* -1: no --older-than */
	int force;
	double lock_wait;
	int dry_run;          /* -n: decide and print, remove nothing */
	int verbose;          /* -v: print each job removed */
};

static int matches(const struct filter *f, const struct job_state *st, time_t now)
{
	/* No status or age to filter on: only a plain --force removes it. */
	if (st->status == ST_CORRUPT)
		return f->force && !f->stale && !f->if_mask && f->older_than < 0;
	if (f->stale && st->status != ST_STALE)
		return 0;
	if (f->if_mask && !jobstate_in(st, f->if_mask))
		return 0;
	if (f->older_than >= 0) {
		const char *since = record_get(&st->rec, "since");
		time_t t;
		if (!since || time_parse(since, &t) < 0 || (double)(now - t) <= f->older_than)
			return 0;
	}
	return 1;
}

static void print_job(const char *job)
{
	out_adds(job);
	out_adds("\n");
}

static int clear_locked(const struct registry *reg, const char *job, const struct filter *f,
			int named, const struct listing *l)
{
	struct job_state st;
	int rc = jobstate_load(reg, job, &st);

	if (rc == EXIT_CORRUPT && !f->force) {
		rc = jobstate_corrupt(reg, job, &st);
		goto out;
	}
	if (rc && rc != EXIT_CORRUPT)
		goto out;
	rc = 0;
	if (!st.found) {
		/* Gone since the listing, or never there: its files go. */
		if (!f->dry_run) {
			sweep_run_files(reg, job, l);
			sweep_locks(reg, job, l);
		}
		goto out;
	}
	if (!matches(f, &st, now_seconds())) {
		if (named) {
			info(job, "status is %s, not cleared", status_word(st.status));
			rc = EXIT_FALSE;
		}
		goto out;
	}
	/* A RUNNING record with an owner that is alive: clearing it would
	 * let a second run start. */
	if (st.status == ST_RUNNING && record_get(&st.rec, "owner") && !f->force) {
		struct buf who = {0};
		jobstate_describe(&st.rec, &who);
		rc = fail(EXIT_FALSE, job, "running (%s); not cleared without --force",
			  who.data ? who.data : "");
		buf_free(&who);
		goto out;
	}
	if (f->dry_run) {
		print_job(job);
		goto out;
	}
	/* Waiters in line keep a PENDING record of the line's numbers, so
	 * that none is handed out twice (SPEC §5a).  A sweep (-a) syncs the
	 * directory once, after all its removals. */
	struct line_numbers nums;
	int waiting;
	line_numbers(&st.rec, &nums);
	/* Each record removed is on the audit log first (SPEC §3c). */
	struct audit_line a = { .action = "clear", .job = job, .status = status_word(st.status) };
	struct audit_change change;
	if ((rc = audit_begin(reg, &a, f->lock_wait, f->force, &change)) != 0)
		goto out;
	rc = audit_end(reg, &a, f->lock_wait, &change,
		       line_clear(reg, job, &st.rec, 0, l == NULL, &waiting));
	if (rc)
		goto out;
	if (f->verbose)
		print_job(job);
	if (!l)
		sweep_temps(reg, job, NULL);   /* a sweep did, whatever matched */
	sweep_run_files(reg, job, l);
	/* A notifier's claim file, unless a live claim holds it (SPEC §5c):
	 * it is taken only under the job lock we hold. */
	char *notify = reg_lock_name(job, NOTIFY_LOCK);
	line_sweep_file(reg, notify);
	free(notify);
	if (!waiting) {
		char *coalesce = reg_lock_name(job, COALESCE_LOCK);
		line_sweep(reg, job, nums.head, nums.next);
		(void)line_sweep_file(reg, coalesce);
		free(coalesce);
		sweep_locks(reg, job, l);
	}
out:
	jobstate_free(&st);
	return rc;
}

static int clear_one(const struct registry *reg, const char *job, const struct filter *f,
		     int named, const struct listing *l)
{
	struct stat sb;
	int lock = -1, rc;

	/* No record: no lock file to create, but those left behind go.  A
	 * sweep need not ask when its listing saw a regular file: if it has
	 * gone since, clear_locked() removes the lock files. */
	if ((!l || !sweep_listed_regular(l, job)) &&
	    fstatat(reg->fd, job, &sb, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return f->dry_run || l ? 0 : sweep_orphan(reg, job, NULL);
	/* A dry run takes the lock as the real call would (busy or refused
	 * exactly when it would be), but creates no lock file: a missing one
	 * is held by nobody. */
	rc = reg_lock(reg, job, JOB_LOCK, LOCK_EX, f->lock_wait,
		      f->dry_run ? 0 : LOCK_CREATE, &lock);
	/* A sweep removes leftover temp files under the lock, matching or not: garbage. */
	if (!rc && l && !f->dry_run)
		sweep_temps(reg, job, l);
	if (!rc)
		rc = clear_locked(reg, job, f, named, l);
	reg_unlock(&lock);
	return rc;
}

/* Options into F; returns where the JOBs begin in ARGV (at ARGC: -a). */
static int parse_options(int argc, char **argv, struct common *common, struct filter *f)
{
	static const struct option longopts[] = {
		{ "if", required_argument, 0, 'I' },
		{ "stale", no_argument, 0, 'S' },
		{ "older-than", required_argument, 0, 'O' },
		{ "force", no_argument, 0, 'F' },
		{ "all", no_argument, 0, 'a' },
		{ "dry-run", no_argument, 0, 'n' },
		{ "verbose", no_argument, 0, 'v' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	int opt, all = 0;

	cli_init("jobreg-clear", argv, usage, help, longopts, common);
	while ((opt = cli_next_option(argc, argv, "+:anv" COMMON_SHORTOPTS)) != -1) {
		switch (opt) {
		case 'I': f->if_mask = status_list_or_err(optarg); break;
		case 'S': f->stale = 1; break;
		case 'O': f->older_than = duration_or_err(optarg, "duration"); break;
		case 'F': f->force = 1; break;
		case 'a': all = 1; break;
		case 'n': f->dry_run = 1; break;
		case 'v': f->verbose = 1; break;
		}
	}
	if (all && optind < argc)
		usage_error("-a takes no JOB");
	if (!all && optind == argc)
		usage_error("no JOB given");
	check_job_ids(argv + optind, argc - optind);
	f->lock_wait = common->lock_wait;
	return optind;
}

/* clear -a: every listed job, then the lock files of jobs that have no
 * record, then one fsync of the directory for all the removals. */
static int sweep(const struct registry *reg, const struct filter *f)
{
	struct listing l;
	int status = reg_list(reg, LIST_ALL, &l);
	if (status)
		return status;
	for (size_t i = 0; i < l.njobs; i++)
		keep_first(&status, clear_one(reg, l.jobs[i], f, 0, &l));
	if (!f->dry_run)
		sweep_places(reg, &l);
	/* Lock files of jobs with no record: a job lock, or a run lock alone. */
	char **lists[] = { l.locks, l.runs };
	const size_t counts[] = { l.nlocks, l.nruns }, suffix[] = { 5, 4 };
	for (int k = 0; k < 2 && !f->dry_run; k++)
		for (size_t i = 0; i < counts[k]; i++) {
			char *job = xstrndup(lists[k][i] + 1, strlen(lists[k][i]) - 1 - suffix[k]);
			char *lock = reg_lock_name(job, JOB_LOCK);
			if (valid_job_id(job) && !listing_has(l.jobs, l.njobs, job) &&
			    (k == 0 || !listing_has(l.locks, l.nlocks, lock)))
				keep_first(&status, sweep_orphan(reg, job, &l));
			free(lock);
			free(job);
		}
	if (!f->dry_run && (l.njobs || l.nlocks))
		keep_first(&status, reg_sync(reg, NULL));
	listing_free(&l);
	return status;
}

int main(int argc, char **argv)
{
	struct common common;
	struct filter f = { .older_than = -1 };
	struct registry reg;
	int status = 0;

	int first_job = parse_options(argc, argv, &common, &f);
	char *path = registry_path(common.dir);
	int rc = reg_open(&reg, path, 0);   /* clear never creates the registry */
	free(path);
	if (rc || reg.fd < 0) {
		reg_close(&reg);
		return rc;
	}
	if (first_job == argc)
		status = sweep(&reg, &f);   /* -a */
	for (int i = first_job; i < argc; i++)
		keep_first(&status, clear_one(&reg, argv[i], &f, 1, NULL));
	keep_first(&status, out_flush() ? EXIT_IO : 0);
	reg_close(&reg);
	return status;
}
