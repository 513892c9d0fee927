/* jobreg-dispatch: run a command as the one live run of a job (see
 * jobreg-dispatch(1)). */
#include "cli.h"
#include "record.h"
#include "registry.h"
#include "signame.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"jobreg-dispatch [-q] [-d DIR] [-w SECONDS] [--once] [--clear] [--wait[=SECONDS]]"
	" [-E CODE] [-m NOTE] JOB [--] COMMAND [ARG...]";
static const char help[] =
	"Run COMMAND as the one live run of JOB, recording RUNNING and then DONE.\n"
	"      --once        do not run if JOB is DONE (exit 0)\n"
	"      --clear       remove the record after the run instead of writing DONE\n"
	"      --wait[=S]    if JOB is running, wait (at most S seconds) and then run\n"
	"  -E, --conflict-exit-code CODE  exit CODE (not 75) if JOB is running\n"
	"  -m, --note NOTE   the note of this run\n"
	"  -d, --dir DIR     the registry (default $JOBREG_DIR, else\n"
	"                    ${XDG_STATE_HOME:-$HOME/.local/state}/jobreg)\n"
	"  -w, --lock-wait S wait at most S seconds for a lock (default 10)\n"
	"  -q, --quiet       no informational messages\n"
	"  -h, --help        this help;  -V, --version  the version\n"
	"Exit: COMMAND's status (128+N if killed by signal N; 126 not executable,\n"
	"127 not found); 0 --once and already done; 64 usage; 65 corrupt record;\n"
	"73 cannot create the registry; 74 I/O error; 75 running, or lock busy;\n"
	"77 permission or not a regular file.\n";

struct request {
	const char *job;
	int once;
	int clear_after;
	int wait;               /* --wait given */
	double wait_limit;      /* < 0: no limit */
	int conflict_code;
	const char *note;
	char **command;
	double lock_wait;
};

/* The signals passed on to the command (SPEC §5). */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

static void on_child(int sig)
{
	(void)sig;   /* only so SIGCHLD is queued for sigwaitinfo() */
}

/* Wait for the run in ST to end, at most until DEADLINE (< 0: forever).
 * Returns 0 when it may have ended, EXIT_BUSY on timeout, or an error. */
static int wait_for_end(const struct registry *reg, const char *job,
			const struct job_state *st, double deadline)
{
	if (st->by_lock) {
		/* Block on the run lock: the kernel wakes us when it ends.
		 * (A removed or replaced run lock decides nothing: poll.) */
		double left = deadline < 0 ? -1 : deadline - now_mono();
		int fd = -1;
		if (deadline >= 0 && left < 0)
			left = 0;
		int rc = reg_lock(reg, job, RUN_LOCK, LOCK_SH, left, LOCK_QUIET_BUSY, &fd);
		reg_unlock(&fd);
		return rc;
	}
	/* A pid, a TTL or an operator owns it: poll the record. */
	for (;;) {
		struct job_state now;
		int rc = state_load(reg, job, &now);
		enum status status = now.status;
		state_free(&now);
		if (rc && rc != EXIT_CORRUPT)
			return rc;
		if (status != ST_RUNNING)
			return 0;
		if (deadline >= 0 && now_mono() >= deadline)
			return EXIT_BUSY;
		double nap = 0.1;
		if (deadline >= 0 && deadline - now_mono() < nap)
			nap = deadline - now_mono();
		sleep_seconds(nap);
	}
}

/* Steps 1-4 of SPEC §5 under the job lock: decide, take the run lock,
 * write RUNNING.  *go is set when the command is to run. */
static int claim(const struct registry *reg, const struct request *req, struct owner *me,
		 char started[21], int *run_lock, int *go, const sigset_t *hold)
{
	double deadline = req->wait && req->wait_limit >= 0 ? now_mono() + req->wait_limit : -1;
	struct job_state st;
	int job_lock = -1, rc;

	*go = 0;
	double run_deadline = -1;   /* set once the run lock was found busy */
	for (;;) {
		rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, req->lock_wait, LOCK_CREATE, &job_lock);
		if (rc)
			return rc;
		rc = state_load(reg, req->job, &st);
		if (rc == EXIT_CORRUPT)
			rc = state_corrupt(reg, req->job, &st);
		if (rc)
			goto out;
		if (st.status == ST_DONE && req->once) {
			info(req->job, "already done");
			goto out;
		}
		if (st.status != ST_RUNNING) {
			rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_EX, 0,
				      LOCK_CREATE | LOCK_QUIET_BUSY, run_lock);
			if (rc != EXIT_BUSY)
				break;
			/* Not free although no live run is recorded: a reader's
			 * probe, a run ending after a forced clear (it needs the
			 * job lock to finish), or a leftover process of an old
			 * run.  Wait for it without the job lock, at most -w in
			 * all, and start over. */
			reg_unlock(&job_lock);
			state_free(&st);
			if (run_deadline < 0)
				run_deadline = now_mono() + req->lock_wait;
			double left = run_deadline - now_mono();
			int probe = -1;
			rc = reg_lock(reg, req->job, RUN_LOCK, LOCK_SH, left > 0 ? left : 0, 0, &probe);
			reg_unlock(&probe);
			if (rc)
				return rc;
			continue;
		}
		if (!req->wait) {
			struct buf who = {0};
			state_describe(&st.rec, &who);
			info(req->job, "already running (%s)", who.data ? who.data : "");
			buf_free(&who);
			rc = req->conflict_code;
			goto out;
		}
		reg_unlock(&job_lock);
		rc = wait_for_end(reg, req->job, &st, deadline);
		state_free(&st);
		if (rc == EXIT_BUSY) {
			info(req->job, "still running after --wait=%g", req->wait_limit);
			return req->conflict_code;
		}
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
	/* From here on a signal must not kill us between RUNNING and DONE:
	 * hold it for the command. */
	sigprocmask(SIG_BLOCK, hold, NULL);
	struct buf text = {0};
	time_t now = now_seconds();
	record_to_running(&st.rec, now, me, 0, 0, req->note);
	/* What step 6 compares to tell the record is still this run's. */
	memcpy(started, record_get(&st.rec, "started"), 21);
	record_format(&st.rec, &text);
	rc = reg_sweep(reg, req->job, NULL);
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

/* Step 5: run the command; returns its wait status, or -1 with *exec_errno
 * set when it could not be started. */
static int run(const struct request *req, int run_lock, const sigset_t *hold,
	       const sigset_t *old_mask, int *exec_errno)
{
	int pipefd[2];
	*exec_errno = 0;
	if (pipe(pipefd) < 0 || fcntl(pipefd[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC) < 0) {
		*exec_errno = errno;
		return -2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close_fd(pipefd[0]);
		close_fd(pipefd[1]);
		return -2;
	}
	if (pid == 0) {
		signal(SIGCHLD, SIG_DFL);
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		/* The run lock is the one descriptor of ours the run keeps. */
		if (fcntl(run_lock, F_SETFD, 0) == 0)
			execvp(req->command[0], req->command);
		int err = errno;
		(void)write_full(pipefd[1], &err, sizeof err);
		_exit(err == ENOENT ? 127 : 126);
	}
	close_fd(pipefd[1]);
	int err = 0;
	ssize_t n = read_full(pipefd[0], &err, sizeof err);
	close_fd(pipefd[0]);

	int status = 0;
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);
		if (done == pid)
			break;
		if (done < 0 && errno != EINTR)
			break;
		int sig = sigwaitinfo(hold, NULL);
		/* Signals that came before the exec are passed on now that
		 * the command runs; none is sent to a failed exec's child. */
		if (sig > 0 && sig != SIGCHLD && n != (ssize_t)sizeof err)
			kill(pid, sig);
	}
	if (n == (ssize_t)sizeof err) {
		*exec_errno = err;
		return -1;
	}
	return status;
}

/* Step 6: record the end, if the record is still this run's. */
static int finish(const struct registry *reg, const struct request *req,
		  const struct owner *me, const char *started, const struct run_end *end)
{
	struct buf data = {0}, text = {0};
	struct record rec;
	const char *why;
	int job_lock = -1, found = 0;
	int rc = reg_lock(reg, req->job, JOB_LOCK, LOCK_EX, -1, LOCK_CREATE, &job_lock);

	record_init(&rec);
	if (!rc)
		rc = reg_read(reg, req->job, &data, &found);
	if (rc)
		goto out;
	if (!found || record_parse(&rec, data.data, data.len, &why) < 0 ||
	    !record_owned_by(&rec, me) || !record_get(&rec, "started") ||
	    strcmp(record_get(&rec, "started"), started) != 0) {
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
	record_free(&rec);
	buf_free(&data);
	buf_free(&text);
	reg_unlock(&job_lock);
	return rc;
}

static char *absolute(const char *path)
{
	struct buf abs = {0};
	if (path[0] != '/') {
		size_t size = 256;
		char *cwd = NULL;
		for (;;) {
			cwd = xrealloc(cwd, size);
			if (getcwd(cwd, size))
				break;
			if (errno != ERANGE) {
				/* Unknown cwd: the relative path is the best we have. */
				cwd[0] = '\0';
				break;
			}
			size *= 2;
		}
		if (cwd[0]) {
			buf_adds(&abs, cwd);
			buf_addc(&abs, '/');
		}
		free(cwd);
	}
	buf_adds(&abs, path);
	return abs.data;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "once", no_argument, 0, 'O' },
		{ "clear", no_argument, 0, 'C' },
		{ "wait", optional_argument, 0, 'W' },
		{ "conflict-exit-code", required_argument, 0, 'E' },
		{ "note", required_argument, 0, 'm' },
		COMMON_LONGOPTS,
		{ 0, 0, 0, 0 },
	};
	struct common common;
	struct request req = { .conflict_code = EXIT_BUSY, .wait_limit = -1 };
	long code;
	int opt, rc;

	cli_init("jobreg-dispatch", &common);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:E:m:" COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		switch (opt) {
		case 'O':
			req.once = 1;
			break;
		case 'C':
			req.clear_after = 1;
			break;
		case 'W':
			req.wait = 1;
			req.wait_limit = -1;
			if (optarg && parse_duration(optarg, &req.wait_limit) < 0)
				return usage_error(usage, "bad wait '%s'", optarg);
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
		default:
			if ((rc = cli_common_option(opt, optarg, argv, &common, usage, help)) >= 0)
				return rc;
		}
	}
	if (optind >= argc)
		return usage_error(usage, "no JOB given");
	req.job = argv[optind++];
	if ((rc = check_job_ids((char **)&req.job, 1)) != 0)
		return rc;
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return usage_error(usage, "no COMMAND given");
	req.command = argv + optind;
	req.lock_wait = common.lock_wait;

	char *path = registry_path(common.dir);
	if (!path)
		return EXIT_USAGE;
	char *abs = absolute(path);
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

	char host[HOST_NAME_MAX + 1] = "";
	gethostname(host, sizeof host - 1);
	struct owner me = { .kind = OWNER_LOCK, .host = host, .pid = (long)getpid() };

	sigset_t hold, old_mask;
	sigemptyset(&hold);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&hold, forwarded[i]);
	sigaddset(&hold, SIGCHLD);
	sigprocmask(SIG_BLOCK, NULL, &old_mask);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);

	char started[21];
	int run_lock = -1, go = 0;
	rc = claim(&reg, &req, &me, started, &run_lock, &go, &hold);
	if (!go) {
		reg_close(&reg);
		return rc;
	}

	int exec_errno;
	int status = run(&req, run_lock, &hold, &old_mask, &exec_errno);
	int exit_status;
	const char *sig_name = NULL;
	char scratch[SIGNAME_MAX];
	if (status == -2) {
		/* fork or pipe failed: nothing ran; say so in the record. */
		fail_errno(exec_errno, req.job, "cannot start %s", req.command[0]);
		exit_status = 126;
	} else if (status == -1) {
		fail_errno(exec_errno, req.job, "cannot run %s", req.command[0]);
		exit_status = exec_errno == ENOENT ? 127 : 126;
	} else if (WIFSIGNALED(status)) {
		exit_status = 128 + WTERMSIG(status);
		sig_name = signal_name(WTERMSIG(status), scratch);
	} else {
		exit_status = WEXITSTATUS(status);
	}

	struct run_end end = { .exit_status = sig_name ? -1 : exit_status, .signal_name = sig_name };
	rc = finish(&reg, &req, &me, started, &end);
	reg_unlock(&run_lock);
	reg_close(&reg);
	return rc ? rc : exit_status;
}
