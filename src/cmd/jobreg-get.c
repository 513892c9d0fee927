/* jobreg-get: print the status of jobs (see jobreg-get(1)).  Past 450
 * lines: a short print function for each mode of the page, beside the
 * main that reads like the page. */
#include "cmd/cli.h"
#include "registry/listing.h"
#include "registry/history.h"
#include "registry/line.h"
#include "registry/pause.h"
#include "report/auditview.h"
#include "run/logview.h"
#include "report/outfile.h"
#include "report/format.h"
#include "report/prom.h"
#include "report/notify.h"
#include "report/report.h"
#include "liveness/slotview.h"
#include "registry/registry.h"
#include "liveness/jobstate.h"
#include "liveness/wait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-get [-q] [-d DIR] [-w S] [-l | -j | -P | --report] [-s S[,S]] [-o FILE] [-a | JOB...]"
	" | jobreg-get [-q] [-d DIR] --is STATUS[,STATUS] [-a | [--wait DURATION] JOB...]"
	" | jobreg-get [-d DIR] [-l | -j] --history JOB..."
	" | jobreg-get [-d DIR] --log [--follow] JOB | jobreg-get [-d DIR] --faillog JOB"
	" | jobreg-get [-d DIR] [-j] --slots [NAME...] | jobreg-get [-d DIR] [-j] --line JOB..."
	" | jobreg-get [-q] [-d DIR] --notify CMD [--notify-after N] [-s S[,S]] (-a | JOB...)"
	" | jobreg-get [-d DIR] [-j] --audit [--since DURATION] [JOB...]";
static const char help[] =
	"Print the status of each JOB: PENDING, RUNNING, STALE or DONE.\n"
	"  -l, --long        one tab-separated line per job:\n"
	"                    job status since owner host pid exit note\n"
	"  -j, --json        one JSON object per job (JSON Lines), with its health\n"
	"  -P, --prometheus  metrics in the Prometheus text format\n"
	"      --report      for people: one line a job, why, worst health first;\n"
	"                    a summary by health\n"
	"  -s, --status S[,S]  print only the jobs whose status is one of S\n"
	"                    (PENDING RUNNING STALE DONE; OK WARNING FAILED CANCELLED\n"
	"                    for DONE; LATE PAUSED OVERDUE)\n"
	"  -o, --output FILE write the output to FILE atomically\n"
	"  -a, --all         every job with a record, sorted by id\n"
	"      --is S[,S]    print nothing; exit 0 if every job's status is one of S, else 1\n"
	"      --wait D      with --is: wait until it holds, at most D (inf: no limit)\n"
	"      --history     each job's last runs, oldest first (with -l or -j)\n"
	"      --log         the output of the job's latest run (dispatch --log)\n"
	"      --follow      with --log: and what it prints next, until the run ends\n"
	"      --faillog     the output of the job's last run that failed or was lost\n"
	"      --slots       each slot of groups NAME (all without NAME) of dispatch\n"
	"                    --slots: group slot state job run host pid, then the\n"
	"                    calls waiting: group place waiting job - host pid since\n"
	"      --line        the calls waiting in each JOB's line, in order:\n"
	"                    job place kind host pid since (or -j)\n"
	"      --notify CMD  run CMD (/bin/sh -c) for each job whose health changed\n"
	"                    since the last announcement; print nothing else\n"
	"      --notify-after N  with --notify: FAILED once N runs in a row failed\n"
	"      --audit       the audit log: who changed what by hand, oldest first;\n"
	"                    with JOBs only theirs (and the registry's own)\n"
	"      --since D     with --audit: only the lines of the last D\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S --faillog: wait at most S for the job lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: 0; 1 --is mismatch, a --notify CMD failed; 64 usage; 65 corrupt record; 73 cannot create FILE;\n"
	"74 I/O; 75 --wait limit reached; 77 permission.\n";

enum format { PLAIN, LONG, JSON, PROMETHEUS, REPORT };
enum mode { STATUS, HISTORY, LOG, FAILLOG, SLOTS, LINE, AUDIT };

struct request {
	enum format format;
	int all;                /* -a */
	unsigned show_mask;     /* -s S; 0: not given */
	unsigned is_mask;       /* --is S; 0: not given */
	const char *wait_arg;   /* --wait D */
	double wait_limit;      /* < 0: no limit */
	const char *out_file;   /* -o FILE */
	enum mode mode;
	int follow;             /* --follow */
	double since;           /* --audit --since: seconds; -1 not given */
	char **jobs;            /* the operands, or the listing's jobs */
	size_t njobs;
	const struct listing *listing;   /* -a's, for -P's slot groups */
	const char *notify;     /* --notify CMD: the sweep */
	unsigned long long notify_after;   /* --notify-after N; 0: not given */
};

/* One format and one mode at most. */
static void set_format(struct request *req, enum format f)
{
	if (req->format != PLAIN && req->format != f)
		usage_error("-l, -j, -P and --report exclude each other");
	req->format = f;
}

static void set_mode(struct request *req, enum mode m)
{
	if (req->mode != STATUS && req->mode != m)
		usage_error("--history, --log, --faillog, --slots, --line and --audit exclude each other");
	req->mode = m;
}

/* Options and operands into REQ. */
static void parse_options(int argc, char **argv, struct common *common, struct request *req)
{
	static const struct option longopts[] = {
		{ "long", no_argument, 0, 'l' },
		{ "json", no_argument, 0, 'j' },
		{ "prometheus", no_argument, 0, 'P' },
		{ "status", required_argument, 0, 's' },
		{ "output", required_argument, 0, 'o' },
		{ "all", no_argument, 0, 'a' },
		{ "is", required_argument, 0, 'I' },
		{ "wait", required_argument, 0, 'W' },
		{ "history", no_argument, 0, 'H' },
		{ "log", no_argument, 0, 'G' },
		{ "follow", no_argument, 0, 'F' },
		{ "faillog", no_argument, 0, 'X' },
		{ "report", no_argument, 0, 'R' },
		{ "slots", no_argument, 0, 'S' },
		{ "line", no_argument, 0, 'N' },
		{ "notify", required_argument, 0, 'n' },
		{ "notify-after", required_argument, 0, 'A' },
		{ "audit", no_argument, 0, 'U' },
		{ "since", required_argument, 0, 'Y' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	int opt;

	cli_init("jobreg-get", argv, usage, help, longopts, common);
	while ((opt = cli_next_option(argc, argv, "+:ljPs:o:a" COMMON_SHORTOPTS)) != -1) {
		switch (opt) {
		case 'l': set_format(req, LONG); break;
		case 'j': set_format(req, JSON); break;
		case 'P': set_format(req, PROMETHEUS); break;
		case 'R': set_format(req, REPORT); break;
		case 's': req->show_mask = status_list_or_err(optarg); break;
		case 'o': req->out_file = optarg; break;
		case 'a': req->all = 1; break;
		case 'I': req->is_mask = status_list_or_err(optarg); break;
		case 'W':
			req->wait_arg = optarg;
			req->wait_limit = limit_or_err(optarg, "--wait duration");
			break;
		case 'H': set_mode(req, HISTORY); break;
		case 'G': set_mode(req, LOG); break;
		case 'X': set_mode(req, FAILLOG); break;
		case 'S': set_mode(req, SLOTS); break;
		case 'N': set_mode(req, LINE); break;
		case 'F': req->follow = 1; break;
		case 'n': req->notify = optarg; break;
		case 'A':
			req->notify_after = notify_after_or_err(optarg);
			break;
		case 'U': set_mode(req, AUDIT); break;
		case 'Y': req->since = duration_or_err(optarg, "--since duration"); break;
		}
	}
	req->jobs = argv + optind;
	req->njobs = (size_t)(argc - optind);
	check_job_ids(req->jobs, (int)req->njobs);
}

/* The options that go together (jobreg-get(1)). */
static void check_request(const struct request *req)
{
	if (req->all && req->njobs)
		usage_error("-a takes no JOB");
	if (req->mode == SLOTS && (req->all || req->is_mask || req->show_mask || req->out_file ||
				   (req->format != PLAIN && req->format != JSON)))
		usage_error("--slots takes NAMEs, or none for every group, and no -a, --is, -s, -o, -l, -P or --report");
	if (req->notify_after && !req->notify)
		usage_error("--notify-after needs --notify");
	if (req->notify && (!*req->notify || req->mode != STATUS || req->format != PLAIN ||
			    req->is_mask || req->out_file))
		usage_error("--notify needs a CMD, and takes -s, --notify-after and -a or JOB ids only");
	if (req->since >= 0 && req->mode != AUDIT)
		usage_error("--since needs --audit");
	if (req->mode == AUDIT && (req->all || req->is_mask || req->show_mask || req->out_file ||
				   (req->format != PLAIN && req->format != JSON)))
		usage_error("--audit takes JOB ids, or none for every line, and no -a, --is, -s, -o, -l, -P or --report");
	if (!req->all && !req->njobs && req->mode != SLOTS && req->mode != AUDIT)
		usage_error("no JOB given");
	if (req->is_mask && (req->format != PLAIN || req->show_mask || req->out_file))
		usage_error("--is prints nothing; it takes no -l, -j, -P, --report, -s or -o");
	if (req->wait_arg && (!req->is_mask || req->all))
		usage_error("--wait needs --is and JOB ids (not -a)");
	if (req->out_file && !*req->out_file)
		usage_error("-o needs a file name");
	if (req->follow && req->mode != LOG)
		usage_error("--follow needs --log");
	if (req->mode == LINE && req->format != PLAIN && req->format != JSON)
		usage_error("--line takes JOB ids, and no -l, -P or --report");
	if (req->mode != STATUS && (req->all || req->is_mask || req->show_mask || req->out_file ||
				    req->format == PROMETHEUS || req->format == REPORT))
		usage_error("--history, --log, --faillog and --line take JOB ids and no -a, --is, -s, -o, -P or --report");
	if ((req->mode == LOG || req->mode == FAILLOG) && (req->njobs != 1 || req->format != PLAIN))
		usage_error("--log and --faillog take one JOB, and no -l or -j");
}

/* --is S --wait D: the first job it last saw not in the state asked, and
 * the registry's pause, read again at each round. */
struct is_wait {
	size_t unmet;
	enum status unmet_status;
	struct record pause;
	int paused;
	int pause_rc;   /* .-pause unreadable: said once, not read again */
};

/* Is each job of REQ, as ST says, in the state --is asks? */
static int job_is(const struct registry *reg, const struct request *req, struct is_wait *w,
		  const struct job_state *st)
{
	if (!w->pause_rc) {
		record_free(&w->pause);
		w->pause_rc = registry_pause_read(reg, now_real(), &w->pause, &w->paused);
	}
	for (size_t i = 0; i < req->njobs; i++) {
		struct job_state seen = st[i];
		jobstate_registry_pause(&seen, w->paused && !w->pause_rc ? &w->pause : NULL);
		if (!jobstate_in(&seen, req->is_mask)) {
			w->unmet = i;
			w->unmet_status = seen.status;
			return 0;
		}
	}
	return 1;
}

static int wait_is(struct registry *reg, const struct request *req)
{
	struct is_wait w = {0};
	double deadline = req->wait_limit < 0 ? -1 : now_mono() + req->wait_limit;
	record_init(&w.pause);
	struct waiter *waiter = wait_jobs_open(reg, req->jobs, req->njobs, NULL);
	const struct job_state *st;
	int rc;
	while ((rc = wait_jobs_look(waiter, &st)) == 0 && !job_is(reg, req, &w, st) &&
	       (rc = wait_jobs_sleep(waiter, deadline)) == 0)
		;
	wait_jobs_close(waiter);
	if (rc == EXIT_BUSY)
		fail(rc, req->jobs[w.unmet], "still %s after --wait %s",
		     status_word(w.unmet_status), req->wait_arg);
	keep_first(&rc, w.pause_rc);
	record_free(&w.pause);
	return rc;
}

/* The sinks of the formats that collect every job for the end. */
struct collect {
	struct prom prom;
	struct report report;
};

/* Append one job in the request's format (-P and --report collect it for
 * the end); an exit status (the report reads files). */
static int format_job(const struct registry *reg, const struct request *req, struct buf *out,
		       struct collect *all, const char *job, const struct job_state *st)
{
	const struct record *r = st->found ? &st->rec : NULL;
	struct job_flags flags = { .late = st->late, .paused = st->paused, .overdue = st->overdue,
				   .health = jobstate_health(st, 0) };
	if (r && (req->format == JSON || req->format == PROMETHEUS))
		flags.waiting = line_waiting(reg, job, r);
	switch (req->format) {
	case PLAIN: format_plain(out, job, st->status, req->all); break;
	case LONG: format_long(out, job, r, st->status); break;
	case JSON: format_json(out, job, r, st->status, &flags); break;
	case PROMETHEUS: prom_add(&all->prom, job, r, st->status, &flags); break;
	case REPORT: return report_job(reg, &all->report, job, st);
	}
	return 0;
}

/* TEXT to -o's FILE, else to standard output; then empty it. */
static void put_text(struct outfile *file, struct buf *text)
{
	if (file)
		outfile_add(file, text->data ? text->data : "", text->len);
	else
		out_add(text->data ? text->data : "", text->len);
	buf_reset(text);
}

/* Does the job count?  -a leaves out a record gone since the listing
 * (also for --is); -s keeps the statuses asked, but -P counts every
 * unusable record in jobreg_corrupt_records. */
static int shown(const struct request *req, const struct job_state *st)
{
	int unusable = st->status == ST_CORRUPT || st->status == ST_UNREADABLE;
	if (req->all && !unusable && !st->found)
		return 0;
	if (!req->show_mask || (req->format == PROMETHEUS && unusable))
		return 1;
	return jobstate_in(st, req->show_mask);
}

/* Read every job of REQ and append what is printed of it to TEXT (-P:
 * to PROM); the exit status of SPEC §7.  With -P an unusable record is
 * data, not a failure, and its message is informational. */
static int read_jobs(const struct registry *reg, const struct request *req, struct buf *text,
		     struct collect *all, struct outfile *file)
{
	struct record pause;
	int paused;
	errors_informational(req->format == PROMETHEUS);
	/* The registry's pause, once for every job. */
	int status = registry_pause_read(reg, now_real(), &pause, &paused);
	if (req->format == PROMETHEUS)
		status = 0;
	all->prom.registry_paused = paused;
	for (size_t i = 0; i < req->njobs; i++) {
		struct job_state st;
		int rc = jobstate_read(reg, req->jobs[i], &st);
		if (req->format != PROMETHEUS)
			keep_first(&status, rc);
		jobstate_registry_pause(&st, paused ? &pause : NULL);
		if (shown(req, &st)) {
			if (req->is_mask && !rc && !jobstate_in(&st, req->is_mask))
				keep_first(&status, EXIT_FALSE);
			else if (!req->is_mask)
				keep_first(&status, format_job(reg, req, text, all, req->jobs[i], &st));
		}
		jobstate_free(&st);
		/* The text goes out as it grows, so memory does not follow
		 * the records' size (-P keeps its samples); to standard output
		 * job by job, so a message about the next job comes after. */
		if (!file || text->len >= 65536)
			put_text(file, text);
	}
	errors_informational(0);
	record_free(&pause);
	return status;
}

/* -P -a: each slot group the listing L found, its slots in use and in all. */
static void prom_slot_groups(const struct registry *reg, const struct listing *l, struct prom *prom)
{
	struct slot_views views;
	slotview_list(reg, l, NULL, 0, &views);
	for (size_t i = 0, first = 0; i < views.count; first = i) {
		unsigned long in_use = 0;
		for (; i < views.count && strcmp(views.v[i].group, views.v[first].group) == 0; i++)
			in_use += views.v[i].job != NULL;
		prom_add_slots(prom, views.v[first].group, in_use, (unsigned long)(i - first));
	}
	slotview_free(&views);
}

/* Print the jobs of REQ, read from REG (PATH), or write them to -o FILE.
 * UP: REG exists and could be listed (-P's jobreg_registry_up). */
static int report(const struct registry *reg, const char *path, const struct request *req,
		  int up)
{
	struct buf text = {0};
	struct collect all = {0};
	struct prom *prom = &all.prom;
	struct outfile file = {0}, *to = req->out_file ? &file : NULL;
	struct listing own = {0};
	int status = 0;

	/* Colour only on a terminal, and never with NO_COLOR set. */
	report_init(&all.report, now_real(), !to && isatty(1) && !getenv("NO_COLOR"));
	if (req->format == PROMETHEUS) {
		/* The registry label: DIR made absolute. */
		char *label = path_absolute(path);
		if (!label)
			return fail_errno(errno, NULL, "cannot find the working directory");
		prom_init(prom, label);
		free(label);
	}
	if (to && (status = outfile_open(to, req->out_file)) != 0) {
		outfile_close(to, 1);
		prom_free(prom);
		buf_free(&text);
		return status;
	}
	/* --report: the calls waiting for a slot, in the groups of -a's listing or a new one. */
	if (req->format == REPORT && !req->listing)
		status = reg_list(reg, LIST_JOBS, &own);
	if (req->format == REPORT && !status)
		status = report_slot_waits(reg, &all.report, req->listing ? req->listing : &own);
	listing_free(&own);
	keep_first(&status, read_jobs(reg, req, &text, &all, to));
	/* -P's families, grouped, and the report, sorted, once all is read */
	if (req->format == PROMETHEUS && req->listing)
		prom_slot_groups(reg, req->listing, prom);
	while (req->format == PROMETHEUS && prom_more(prom, up, &text))
		put_text(to, &text);
	if (req->format == REPORT)
		report_finish(&all.report, &text);
	report_free(&all.report);
	put_text(to, &text);
	if (to)
		keep_first(&status, outfile_close(to, 0));
	else if (out_flush())
		keep_first(&status, EXIT_IO);
	buf_free(&text);
	return status;
}

/* --history: each job's runs, oldest first; --line: the calls waiting
 * in each job's line, in order. */
static int print_each(const struct registry *reg, const struct request *req)
{
	struct buf data = {0}, text = {0};
	int status = 0, json = req->format == JSON;
	for (size_t i = 0; i < req->njobs; i++) {
		const char *job = req->jobs[i];
		if (req->mode == HISTORY) {
			const char *line;
			size_t pos = 0, len;
			int found, rc = history_read(reg, job, &data, &found);
			keep_first(&status, rc);
			while (!rc && found && history_next(&data, &pos, &line, &len))
				format_history(&text, json, job, line, len);
		} else {
			struct job_state st;
			struct line_entries line = { NULL, 0 };
			int rc = jobstate_read(reg, job, &st);
			keep_first(&status, rc);
			if (!rc && st.found)
				keep_first(&status, line_list(reg, job, &st.rec, &line));
			for (size_t k = 0; k < line.count; k++)
				format_place(&text, job, &line.e[k], json);
			line_entries_free(&line);
			jobstate_free(&st);
		}
		put_text(NULL, &text);
	}
	buf_free(&data);
	buf_free(&text);
	return out_flush() ? EXIT_IO : status;
}

/* --slots [NAME...]: every slot of the groups asked (all: of every
 * group), each group's followed by the calls waiting in its line. */
static int print_slots(const struct registry *reg, const struct request *req)
{
	struct listing l;
	struct slot_views views = {0};
	struct buf text = {0};
	int json = req->format == JSON;
	int rc = reg_list(reg, LIST_JOBS, &l);
	if (!rc)
		rc = slotview_list(reg, &l, req->jobs, req->njobs, &views);
	for (size_t i = 0; i < views.count; i++) {
		format_slot(&text, &views.v[i], json);
		if (i + 1 < views.count && strcmp(views.v[i].group, views.v[i + 1].group) == 0)
			continue;
		struct line_entries line;
		keep_first(&rc, line_group_list(reg, views.v[i].group, &line));
		for (size_t k = 0; k < line.count; k++)
			format_slot_waiter(&text, views.v[i].group, &line.e[k], json);
		line_entries_free(&line);
		put_text(NULL, &text);
	}
	slotview_free(&views);
	listing_free(&l);
	buf_free(&text);
	return out_flush() ? EXIT_IO : rc;
}

/* --notify CMD: the sweep (SPEC §5c), each job -s keeps; every job is
 * seen before the exit status, the first failure's (SPEC §7). */
static int notify_sweep(const struct registry *reg, const struct request *req,
			const struct common *common)
{
	struct notifier n = { .cmd = req->notify, .notify_after = req->notify_after,
			      .lock_wait = common->lock_wait };
	int status = 0;
	for (size_t i = 0; i < req->njobs; i++) {
		struct job_state st;
		int rc = 0, in = 1;
		if (req->show_mask) {
			rc = jobstate_read(reg, req->jobs[i], &st);
			in = !rc && shown(req, &st);
			jobstate_free(&st);
		}
		if (!rc && in)
			rc = notify_job(reg, req->jobs[i], &n);
		keep_first(&status, rc);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct common common;
	struct request req = { .format = PLAIN, .wait_limit = -1, .since = -1 };
	struct registry reg;
	struct listing listing = {0};

	parse_options(argc, argv, &common, &req);
	check_request(&req);
	char *path = registry_path(common.dir);
	int rc = reg_open(&reg, path, 0);
	if (!rc && req.mode == SLOTS)
		rc = print_slots(&reg, &req);
	else if (!rc && (req.mode == HISTORY || req.mode == LINE))
		rc = print_each(&reg, &req);
	else if (!rc && req.mode == LOG)
		rc = logview_print(&reg, req.jobs[0], req.follow);
	else if (!rc && req.mode == AUDIT)
		rc = auditview_print(&reg, req.jobs, req.njobs, req.since, req.format == JSON);
	else if (!rc && req.mode == FAILLOG)
		rc = logview_faillog(&reg, req.jobs[0], common.lock_wait);
	else if (!rc && req.wait_arg)
		rc = wait_is(&reg, &req);
	else if (!rc && req.all && (rc = reg_list(&reg, LIST_JOBS, &listing)) == 0) {
		req.jobs = listing.jobs;
		req.njobs = listing.njobs;
		req.listing = &listing;
	}
	if (!rc && req.notify) {
		/* A registry not made yet holds nothing to announce. */
		if (reg.fd >= 0)
			rc = notify_sweep(&reg, &req, &common);
	} else if (!rc && !req.wait_arg && req.mode == STATUS) {
		rc = report(&reg, path, &req, reg.fd >= 0);
	} else if (rc && req.format == PROMETHEUS) {
		/* DIR could not be read: the metrics say so (up 0, no job), and
		 * the error stands. */
		req.njobs = 0;
		report(&reg, path, &req, 0);
	}
	free(path);
	listing_free(&listing);
	reg_close(&reg);
	return rc;
}
