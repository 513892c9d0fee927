/* jobreg-clear: remove job records (see jobreg-clear(1)). */
#include "cli.h"
#include "record.h"
#include "registry.h"
#include "state.h"
#include "tidy.h"

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
	"                    STALE DONE, or OK FAILED: DONE with exit 0, or not)\n"
	"      --stale       only STALE records\n"
	"      --older-than DURATION  only records whose since is older (units s m h d)\n"
	"      --force       also clear a live run, or a corrupt record\n"
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
	int older;            /* --older-than given */
	double older_than;
	int force;
	double lock_wait;
	int dry_run;          /* -n: decide and print, remove nothing */
	int verbose;          /* -v: print each job removed */
};

/* Does the record pass the filters? */
static int matches(const struct filter *f, const struct job_state *st, time_t now)
{
	/* A corrupt record has no status or age to filter on: only a plain
	 * --force removes it. */
	if (st->status == ST_CORRUPT)
		return f->force && !f->stale && !f->if_mask && !f->older;
	if (f->stale && st->status != ST_STALE)
		return 0;
	if (f->if_mask && !status_in(f->if_mask, st->status, &st->rec))
		return 0;
	if (f->older) {
		const char *since = record_get(&st->rec, "since");
		time_t t;
		if (!since || time_parse(since, &t) < 0 || (double)(now - t) <= f->older_than)
			return 0;
	}
	return 1;
}

/* A RUNNING record with an owner that is alive: clearing it would let a
 * second run start. */
static int live_owned(const struct job_state *st)
{
	return st->status == ST_RUNNING && record_get(&st->rec, "owner");
}

static void print_job(const char *job)
{
	out_adds(job);
	out_adds("\n");
}

/* With the run lock free too, no run and no writer can be using the lock
 * files: remove them, so a cleared job leaves nothing behind.  Lockers
 * re-check the inode after locking, so this is safe.  A sweep whose
 * listing has no run lock of JOB does not look for one: a run lock made
 * since (by a run that started after the listing) is left in place, which
 * only costs a file, and it is never unlinked without being held. */
static void remove_locks(const struct registry *reg, const char *job, const struct listing *l)
{
	int run = -1;
	if (l && !tidy_listed_run(l, job))
		tidy_remove_locks(reg, job, 0);
	else if (tidy_run_lock(reg, job, &run) == 0)
		tidy_remove_locks(reg, job, run >= 0);
	reg_unlock(&run);
}

static int clear_locked(const struct registry *reg, const char *job, const struct filter *f,
			int named, const struct listing *l)
{
	struct job_state st;
	int rc = state_load(reg, job, &st);

	if (rc == EXIT_CORRUPT && !f->force) {
		rc = state_corrupt(reg, job, &st);
		goto out;
	}
	if (rc && rc != EXIT_CORRUPT)
		goto out;
	rc = 0;
	if (!st.found) {
		/* Gone since the listing: a lock file we made goes too. */
		if (l && !f->dry_run)
			remove_locks(reg, job, l);
		goto out;
	}
	if (!matches(f, &st, now_seconds())) {
		if (named) {
			info(job, "status is %s, not cleared", status_word(st.status));
			rc = EXIT_FALSE;
		}
		goto out;
	}
	if (live_owned(&st) && !f->force) {
		struct buf who = {0};
		state_describe(&st.rec, &who);
		rc = fail(EXIT_FALSE, job, "running (%s); not cleared without --force",
			  who.data ? who.data : "");
		buf_free(&who);
		goto out;
	}
	if (f->dry_run) {
		print_job(job);
		goto out;
	}
	/* A sweep (-a) syncs the directory once, after all its removals. */
	if ((rc = reg_remove(reg, job, l == NULL)) != 0)
		goto out;
	if (f->verbose)
		print_job(job);
	if (!l)
		reg_sweep(reg, job);
	remove_locks(reg, job, l);
out:
	state_free(&st);
	return rc;
}

static int clear_one(const struct registry *reg, const char *job, const struct filter *f,
		     int named, const struct listing *l)
{
	struct stat sb;
	int lock = -1, rc;

	/* No record: nothing to clear, and no lock file to create.  A sweep
	 * need not ask when its listing saw a regular file: if it has gone
	 * since, clear_locked() finds none and removes the lock files. */
	if ((!l || !tidy_listed_regular(l, job)) &&
	    fstatat(reg->fd, job, &sb, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return 0;
	/* A dry run takes the lock as the real call would (so it is busy,
	 * or refused, exactly when that call would be), but creates no
	 * lock file: a missing one is held by nobody. */
	rc = reg_lock(reg, job, JOB_LOCK, LOCK_EX, f->lock_wait,
		      f->dry_run ? 0 : LOCK_CREATE, &lock);
	/* A sweep removes the job's leftover temp files whenever it holds
	 * the lock, whether the record matches or not: they are garbage. */
	if (!rc && l && !f->dry_run)
		tidy_temps(reg, job, l);
	if (!rc)
		rc = clear_locked(reg, job, f, named, l);
	reg_unlock(&lock);
	return rc;
}

int main(int argc, char **argv)
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
	struct common common;
	struct filter f = {0};
	int all = 0, opt, rc;

	cli_init("jobreg-clear", &common);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:anv" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (opt) {
		case 'I':
			if (parse_status_list(optarg, &f.if_mask) < 0)
				return usage_error(usage, "bad status list '%s'", optarg);
			break;
		case 'S':
			f.stale = 1;
			break;
		case 'O':
			if (parse_duration(optarg, &f.older_than) < 0)
				return usage_error(usage, "bad duration '%s' (e.g. 30s, 15m, 12h, 7d)", optarg);
			f.older = 1;
			break;
		case 'F':
			f.force = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'n':
			f.dry_run = 1;
			break;
		case 'v':
			f.verbose = 1;
			break;
		default:
			if ((rc = cli_common_option(opt, optarg, argv, &common, usage, help)) >= 0)
				return rc;
		}
	}
	char **jobs = argv + optind;
	size_t njobs = (size_t)(argc - optind);
	if (all && njobs)
		return usage_error(usage, "-a takes no JOB");
	if (!all && !njobs)
		return usage_error(usage, "no JOB given");
	if ((rc = check_job_ids(jobs, (int)njobs)) != 0)
		return rc;
	f.lock_wait = common.lock_wait;

	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	struct registry reg;
	struct listing listing = {0};
	int status = 0;
	rc = reg_open(&reg, path, 0);   /* clear never creates the registry */
	free(path);
	if (rc || reg.fd < 0 || (all && (rc = reg_list(&reg, &listing)) != 0)) {
		reg_close(&reg);
		return rc;
	}
	if (all) {
		tidy_index(&listing);
		jobs = listing.jobs;
		njobs = listing.njobs;
	}
	for (size_t i = 0; i < njobs; i++)
		keep_first(&status, clear_one(&reg, jobs[i], &f, !all, all ? &listing : NULL));
	if (all && njobs && !f.dry_run)
		keep_first(&status, reg_sync(&reg, NULL));
	keep_first(&status, out_flush() ? EXIT_IO : 0);
	listing_free(&listing);
	reg_close(&reg);
	return status;
}
