/* jobreg-get: print the status of jobs (see jobreg-get(1)). */
#include "cli.h"
#include "outfile.h"
#include "output.h"
#include "prefetch.h"
#include "record.h"
#include "registry.h"
#include "state.h"
#include "wait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"jobreg-get [-q] [-d DIR] [-w S] [-l | -j | -P] [-s S[,S]] [-o FILE] [-a | JOB...]"
	" | jobreg-get [-q] [-d DIR] --is STATUS[,STATUS] [-a | [--wait DURATION] JOB...]";
static const char help[] =
	"Print the status of each JOB: PENDING, RUNNING, STALE or DONE.\n"
	"  -l, --long        one tab-separated line per job:\n"
	"                    job status since owner host pid exit note\n"
	"  -j, --json        one JSON object per job (JSON Lines)\n"
	"  -P, --prometheus  metrics in the Prometheus text format\n"
	"  -s S[,S]          print only the jobs whose status is one of S\n"
	"                    (PENDING RUNNING STALE DONE, or OK FAILED for DONE)\n"
	"  -o FILE           write the output to FILE atomically\n"
	"  -a, --all         every job with a record, sorted by id\n"
	"      --is S[,S]    print nothing; exit 0 if every job's status is one of S, else 1\n"
	"      --wait D      with --is: wait until it holds, at most D (inf: no limit)\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S accepted for symmetry; reading takes no lock\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: 0; 1 --is mismatch; 64 usage; 65 corrupt record; 73 cannot create FILE;\n"
	"74 I/O; 75 --wait limit reached; 77 permission.\n";

enum format { PLAIN, LONG, JSON, PROMETHEUS };

/* Append one job in FORMAT (Prometheus collects it for the end). */
static void format_job(enum format format, struct buf *out, struct prom *prom, int all,
		       const char *job, const struct job_state *st)
{
	const struct record *r = st->found ? &st->rec : NULL;
	switch (format) {
	case PLAIN: output_plain(out, job, st->status, all); break;
	case LONG: output_long(out, job, r, st->status); break;
	case JSON: output_json(out, job, r, st->status); break;
	case PROMETHEUS: prom_add(prom, job, r, st->status); break;
	}
}

/* Is this job printed?  -a leaves out a record that vanished after the
 * listing; -s (MASK not 0) only the statuses asked, though -P counts every
 * corrupt or unreadable record in jobreg_corrupt_records. */
static int shown(const struct job_state *st, int rc, int all, unsigned mask, enum format format)
{
	int unusable = st->status == ST_CORRUPT || st->status == ST_UNREADABLE;
	if (all && !rc && !st->found)
		return 0;
	if (!mask || (format == PROMETHEUS && unusable))
		return 1;
	return status_in(mask, st->status, st->found ? &st->rec : NULL);
}

static void add_ahead(void *ahead, const char *job, int regular)
{
	prefetch_add(ahead, job, regular);
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

/* TEXT to FILE (-o) or standard output; an exit status. */
static int put_output(const char *out_file, const struct buf *text)
{
	if (out_file)
		return outfile_write(out_file, text->data ? text->data : "", text->len);
	out_add(text->data ? text->data : "", text->len);
	return out_flush() ? EXIT_IO : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "long", no_argument, 0, 'l' },
		{ "json", no_argument, 0, 'j' },
		{ "prometheus", no_argument, 0, 'P' },
		{ "all", no_argument, 0, 'a' },
		{ "is", required_argument, 0, 'I' },
		{ "wait", required_argument, 0, 'W' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	struct common common;
	enum format format = PLAIN;
	int all = 0, opt, rc;
	unsigned is_mask = 0, show_mask = 0;
	const char *is_arg = NULL, *wait_arg = NULL, *show_arg = NULL, *out_file = NULL;
	double wait_limit = -1;

	cli_init("jobreg-get", &common);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:ljPs:o:aI:" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
		case 'j':
		case 'P': {
			enum format f = opt == 'l' ? LONG : opt == 'j' ? JSON : PROMETHEUS;
			if (format != PLAIN && format != f)
				return usage_error(usage, "-l, -j and -P exclude each other");
			format = f;
			break;
		}
		case 's':
			show_arg = optarg;
			if (parse_status_list(optarg, &show_mask) < 0)
				return usage_error(usage, "bad status list '%s'", optarg);
			break;
		case 'o':
			out_file = optarg;
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
	if ((rc = check_job_ids(jobs, (int)njobs)) != 0)
		return rc;
	if (all && njobs)
		return usage_error(usage, "-a takes no JOB");
	if (!all && !njobs)
		return usage_error(usage, "no JOB given");
	if (is_arg && (format != PLAIN || show_arg || out_file))
		return usage_error(usage, "--is prints nothing; it takes no -l, -j, -P, -s or -o");
	if (wait_arg && (!is_arg || all))
		return usage_error(usage, "--wait needs --is and JOB ids (not -a)");
	if (out_file && !*out_file)
		return usage_error(usage, "-o needs a file name");

	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	struct registry reg;
	struct listing listing = {0};
	struct prom prom = {0};
	int status = 0;
	/* The registry label of -P: DIR made absolute. */
	char *label = format == PROMETHEUS ? path_absolute(path) : NULL;
	if (format == PROMETHEUS && !label) {
		rc = fail_errno(errno, NULL, "cannot find the working directory");
		free(path);
		return rc;
	}
	rc = reg_open(&reg, path, 0);
	free(path);
	/* -a: the records are read on two threads from while they are listed;
	 * the output is in the order by id. */
	struct prefetch *ahead = NULL;
	size_t *order = NULL;
	if (!rc && all) {
		ahead = prefetch_start(reg.fd);
		rc = reg_list_unsorted(&reg, &listing, add_ahead, ahead);
		order = listing_order(&listing);
		prefetch_order(ahead, order);
		if (rc) {
			prefetch_end(ahead);
			free(order);
			listing_free(&listing);
			reg_close(&reg);
		}
	}
	if (rc) {
		if (format == PROMETHEUS) {   /* DIR could not be listed: say so */
			struct buf text = {0};
			prom_init(&prom, label);
			prom_finish(&prom, 0, &text);
			put_output(out_file, &text);
			buf_free(&text);
		}
		free(label);
		return rc;
	}
	int registry_up = reg.fd >= 0;
	if (wait_arg) {
		status = wait_is(&reg, jobs, njobs, is_mask, wait_limit, wait_arg);
		reg_close(&reg);
		return status;
	}
	if (label) {
		prom_init(&prom, label);
		free(label);
	}
	if (all) {
		jobs = listing.jobs;
		njobs = listing.njobs;
	}

	/* Standard output takes the text as it grows (Prometheus needs it
	 * all, --output writes the file at once). */
	int stream = !out_file && format != PROMETHEUS;
	struct buf text = {0};
	/* -P: a record that cannot be used is data (jobreg_corrupt_records),
	 * not a failure; its message is informational. */
	errors_informational(format == PROMETHEUS);
	for (size_t i = 0; i < njobs; i++) {
		size_t k = order ? order[i] : i;
		struct job_state st;
		struct first_read first = { NULL, 0 };
		if (ahead)
			first.data = prefetch_get(ahead, k, &first.len);
		rc = state_load_first(&reg, jobs[k], &first, &st);
		if (rc == EXIT_CORRUPT)
			state_corrupt(&reg, jobs[k], &st);
		else if (rc)
			st.status = ST_UNREADABLE;   /* the error is printed */
		if (format != PROMETHEUS)
			keep_first(&status, rc);
		if (is_arg) {
			if (!rc && !status_in(is_mask, st.status, &st.rec))
				keep_first(&status, EXIT_FALSE);
		} else if (shown(&st, rc, all, show_arg ? show_mask : 0, format)) {
			format_job(format, &text, &prom, all, jobs[k], &st);
			if (stream && text.len >= 65536) {
				out_add(text.data, text.len);
				buf_reset(&text);
			}
		}
		state_free(&st);
	}
	errors_informational(0);
	prefetch_end(ahead);
	free(order);
	listing_free(&listing);
	reg_close(&reg);
	if (format == PROMETHEUS)
		prom_finish(&prom, registry_up, &text);
	keep_first(&status, put_output(out_file, &text));
	buf_free(&text);
	return status;
}
