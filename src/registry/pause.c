#include "registry/pause.h"
#include "record/transition.h"
#include "registry/audit.h"
#include "registry/lock.h"
#include "util/msg.h"

#include <sys/file.h>

/* The registry's files are named ".-pause...": "-pause" as a job's would
 * be, a name no job can have (SPEC §1). */
#define PAUSE_JOB "-pause"
#define PAUSE_FILE "." PAUSE_JOB

int registry_pause_read(const struct registry *reg, double now, struct record *pause,
			int *paused)
{
	struct buf data = {0};
	const char *why;
	int found = 0;
	record_init(pause);
	*paused = 0;
	int rc = reg_read(reg, NULL, PAUSE_FILE, RECORD_MAX, &data, &found);
	if (!rc && found && record_parse_settings(pause, data.data, data.len, &why) < 0)
		rc = fail(EXIT_CORRUPT, NULL, "corrupt registry pause %s: %s",
			  reg_path(reg, PAUSE_FILE), why);
	else if (!rc && found)
		*paused = record_paused(pause, now);
	buf_free(&data);
	return rc;
}

int registry_pause(const struct registry *reg, double until, const char *by, const char *note,
		   double lock_wait)
{
	struct record rec;
	struct buf text = {0};
	int lock = -1;
	int rc = reg_lock(reg, PAUSE_JOB, JOB_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
	if (rc)
		return rc;
	record_init(&rec);
	record_put(&rec, "version", "1");
	record_pause(&rec, until, by, note);
	record_format(&rec, &text);
	/* The registry's own line (job=-), under its pause lock (SPEC §3c). */
	struct audit_line a = { .action = "pause", .until = record_get(&rec, "paused_until"),
				.note = note };
	struct audit_change change;
	if ((rc = audit_begin(reg, &a, lock_wait, 0, &change)) == 0)
		rc = audit_end(reg, &a, lock_wait, &change,
			       reg_replace(reg, PAUSE_JOB, PAUSE_FILE, text.data, text.len));
	buf_free(&text);
	record_free(&rec);
	reg_unlock(&lock);
	return rc;
}

int registry_resume(const struct registry *reg, double lock_wait, int *had)
{
	struct record rec;
	int lock = -1, paused;
	*had = 0;
	int rc = reg_lock(reg, PAUSE_JOB, JOB_LOCK, LOCK_EX, lock_wait, LOCK_CREATE, &lock);
	if (rc)
		return rc;
	/* (a corrupt one is removed all the same: it is the registry's) */
	if ((rc = registry_pause_read(reg, 0, &rec, &paused)) == 0 || rc == EXIT_CORRUPT) {
		*had = rec.count > 0 || rc == EXIT_CORRUPT;
		struct audit_line a = { .action = "resume" };
		struct audit_change change;
		rc = 0;
		if (*had && (rc = audit_begin(reg, &a, lock_wait, 0, &change)) == 0)
			rc = audit_end(reg, &a, lock_wait, &change, reg_remove(reg, PAUSE_FILE, 1));
	}
	record_free(&rec);
	reg_unlock(&lock);
	return rc;
}
