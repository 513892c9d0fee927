/* jobreg-get: print the status of jobs (see jobreg-get(1)). */
#include "cli.h"
#include "record.h"
#include "registry.h"
#include "state.h"
#include "wait.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"jobreg-get [-q] [-d DIR] [-l | -j] [-a | JOB...]"
	" | jobreg-get [-q] [-d DIR] --is STATUS[,STATUS] [-a | [--wait DURATION] JOB...]";
static const char help[] =
	"Print the status of each JOB: PENDING, RUNNING, STALE or DONE.\n"
	"  -l, --long        one tab-separated line per job:\n"
	"                    job status since owner host pid exit note\n"
	"  -j, --json        one JSON object per job (JSON Lines)\n"
	"  -a, --all         every job with a record, sorted by id\n"
	"      --is S[,S]    print nothing; exit 0 if every job's status is one of S, else 1\n"
	"      --wait D      with --is: wait until it holds, at most D (inf: no limit)\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S accepted for symmetry; reading takes no lock\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: 0; 1 --is mismatch; 64 usage; 65 corrupt record; 74 I/O;\n"
	"75 --wait limit reached; 77 permission.\n";

enum format { PLAIN, LONG, JSON };

/* One -l column: "-" when empty; a tab of a hand-written record would
 * shift the columns, so it is shown as a space. */
static void add_column(struct buf *line, const char *value, char end)
{
	if (!value || !*value)
		value = "-";
	for (; *value; value++)
		buf_addc(line, (char)(*value == '\t' ? ' ' : *value));
	buf_addc(line, end);
}

static void print_long(struct buf *line, const char *job, const struct job_state *st)
{
	const struct record *r = &st->rec;
	const char *status = status_word(st->status);
	if (st->status == ST_CORRUPT || !st->found) {
		buf_addf(line, "%s\t%s\t-\t-\t-\t-\t-\t-\n", job, status);
		return;
	}
	const char *exit_status = record_get(r, "exit");
	const char *signal_name = record_get(r, "signal");
	buf_addf(line, "%s\t%s\t", job, status);
	add_column(line, record_get(r, "since"), '\t');
	add_column(line, record_get(r, "owner"), '\t');
	add_column(line, record_get(r, "host"), '\t');
	add_column(line, record_get(r, "pid"), '\t');
	if (signal_name) {
		buf_adds(line, "SIG");
		add_column(line, signal_name, '\t');
	} else {
		add_column(line, exit_status, '\t');
	}
	add_column(line, record_get(r, "note"), '\n');
}

/* --is S --wait D: the condition and what it last saw of each job. */
struct is_wait {
	unsigned mask;
	enum status *seen;
	unsigned char *met;
};

static int job_is(void *ctx, size_t index, const struct job_state *st)
{
	struct is_wait *w = ctx;
	w->seen[index] = st->status;
	w->met[index] = status_in(w->mask, st->status, st->found ? &st->rec : NULL) != 0;
	return w->met[index];
}

static int wait_is(const struct registry *reg, char **jobs, size_t njobs, unsigned mask,
		   double limit, const char *limit_arg)
{
	struct is_wait w = { mask, xmalloc(njobs * sizeof *w.seen), xmalloc(njobs) };
	int rc = wait_until(reg, jobs, njobs, job_is, &w, limit < 0 ? -1 : now_mono() + limit);
	for (size_t i = 0; rc == EXIT_BUSY && i < njobs; i++)
		if (!w.met[i]) {
			fail(rc, jobs[i], "still %s after --wait %s", status_word(w.seen[i]), limit_arg);
			break;
		}
	free(w.seen);
	free(w.met);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "long", no_argument, 0, 'l' },
		{ "json", no_argument, 0, 'j' },
		{ "all", no_argument, 0, 'a' },
		{ "is", required_argument, 0, 'I' },
		{ "wait", required_argument, 0, 'W' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	struct common common;
	enum format format = PLAIN;
	int all = 0, opt, rc;
	unsigned is_mask = 0;
	const char *is_arg = NULL, *wait_arg = NULL;
	double wait_limit = -1;

	cli_init("jobreg-get", &common);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:ljaI:" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
		case 'j':
			if (format != PLAIN && format != (opt == 'l' ? LONG : JSON))
				return usage_error(usage, "-l and -j exclude each other");
			format = opt == 'l' ? LONG : JSON;
			break;
		case 'a':
			all = 1;
			break;
		case 'I':
			is_arg = optarg;
			if (parse_status_list(optarg, &is_mask) < 0)
				return usage_error(usage, "bad status list '%s'", optarg);
			break;
		case 'W':
			wait_arg = optarg;
			if (parse_limit(optarg, &wait_limit) < 0)
				return usage_error(usage, "bad --wait duration '%s'", optarg);
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
	if (is_arg && format != PLAIN)
		return usage_error(usage, "--is prints nothing; it takes no -l or -j");
	if (wait_arg && (!is_arg || all))
		return usage_error(usage, "--wait needs --is and JOB ids (not -a)");
	if ((rc = check_job_ids(jobs, (int)njobs)) != 0)
		return rc;

	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	struct registry reg;
	struct listing listing = {0};
	int status = 0;
	rc = reg_open(&reg, path, 0);
	free(path);
	if (rc)
		return rc;
	if (wait_arg) {
		status = wait_is(&reg, jobs, njobs, is_mask, wait_limit, wait_arg);
		reg_close(&reg);
		return status;
	}
	if (all) {
		if ((rc = reg_list(&reg, &listing)) != 0) {
			reg_close(&reg);
			return rc;
		}
		jobs = listing.jobs;
		njobs = listing.njobs;
	}

	struct buf line = {0};
	for (size_t i = 0; i < njobs; i++) {
		struct job_state st;
		rc = state_load(&reg, jobs[i], &st);
		if (rc == EXIT_CORRUPT)
			state_corrupt(&reg, jobs[i], &st);
		keep_first(&status, rc);
		if (rc && rc != EXIT_CORRUPT) {
			/* Another error (printed): keep the lines aligned. */
			st.status = ST_CORRUPT;
		}
		buf_reset(&line);
		if (is_arg) {
			if (!rc && !status_in(is_mask, st.status, &st.rec))
				keep_first(&status, EXIT_FALSE);
		} else if (format == JSON) {
			record_json(jobs[i], st.found ? &st.rec : NULL, st.status, &line);
		} else if (format == LONG) {
			print_long(&line, jobs[i], &st);
		} else {
			if (all)
				buf_addf(&line, "%s ", jobs[i]);
			buf_adds(&line, status_word(st.status));
			buf_addc(&line, '\n');
		}
		out_add(line.data ? line.data : "", line.len);
		state_free(&st);
	}
	buf_free(&line);
	listing_free(&listing);
	reg_close(&reg);
	if (out_flush())
		keep_first(&status, EXIT_IO);
	return status;
}
