/* line: a line of waiting callers (SPEC §5a, §5b) — one mechanism, two
 * users: a job's line of dispatchers, numbered from its record, and a
 * slot group's line, numbered from the file DIR/.NAME.slotline.
 *
 * A place is the file DIR/.JOB.wait.N (a group's: DIR/.NAME.slotwait.N),
 * made O_CREAT|O_EXCL and locked exclusively by its waiter under the
 * lock of the numbers (the job lock, the group line's lock), which then
 * writes who waits into it, one line in one write, never truncated:
 * "kind=K pid=P host=H since=T" (a group's: "job=J pid=P host=H since=T").
 * It is live while its file is locked (and, in a job's line, N >=
 * replaced_below); the kernel drops the lock of a waiter that dies, so
 * a dead one leaves the line by itself.  Places below the head are over.
 * Liveness is probed with LOCK_SH|LOCK_NB on a descriptor of our own,
 * which never disturbs the holder; a probe that fails for another reason
 * than "no such file" or "locked" decides nothing (74).  Numbers are at
 * most COUNTER_MAX (record.h): a line that would pass it takes no place
 * (74), and a line spans at most LINE_SPAN_MAX places.  Nothing here
 * reads the directory: the numbers say where the places are. */
#ifndef JOBREG_LINE_H
#define JOBREG_LINE_H

#include "record/record.h"
#include "registry/registry.h"

/* The most places a line spans: numbers further apart (edited by hand)
 * are read as a line of this length ending at the next number. */
#define LINE_SPAN_MAX 100000ULL

/* A place in line, held while fd >= 0. */
struct place {
	unsigned long long n;
	int fd;
};
#define PLACE_NONE { 0, -1 }

/* The next place, the first not over, (a job's) the first not superseded. */
struct line_numbers {
	unsigned long long next, head, replaced_below;
};

/* ---- a job's line: numbers in the record ---- */

void line_numbers(const struct record *rec, struct line_numbers *nums);
/* The numbers of JOB's record as it is now, read without a lock (a
 * waiter's look between two waits).  Returns an exit status; a missing
 * or corrupt record gives the numbers of none. */
int line_read(const struct registry *reg, const char *job, struct line_numbers *nums);

/* Under the job lock: take place N = wait_next (a leftover file of that
 * number makes it N + 1) for a call of KIND ("wait", "once", "coalesce",
 * "replace"); REC gets wait_next = N + 1, for the caller to write before
 * it lets the job lock go (line_abandon() if that fails).  An exit status. */
int line_join(const struct registry *reg, const char *job, struct record *rec,
	      const char *kind, struct place *p);
/* Give up a place (a wait that passed, a write that failed): its file
 * removed, its lock let go. */
void line_abandon(const struct registry *reg, const char *job, struct place *p);

/* *AHEAD: the nearest live place below BELOW (at least wait_head), or 0:
 * none; one probe per place between them.  An exit status (a failed probe
 * is 74, never "none"). */
int line_ahead(const struct registry *reg, const char *job, const struct line_numbers *nums,
	       unsigned long long below, unsigned long long *ahead);
/* How many places of REC's line are live, for readers (-j "waiting", -P
 * jobreg_job_waiting): line_list()'s count. */
unsigned long long line_waiting(const struct registry *reg, const char *job,
				const struct record *rec);
/* Open place N, for a wait until it is let go (wait_lock(), LOCK_SH):
 * *FD -1 when its file is gone.  An exit status. */
int line_open_place(const struct registry *reg, const char *job, unsigned long long n, int *fd);

/* Under the job lock, in the write that ends the turn of P (it starts a
 * run or answers the call): REC gets wait_head = P->n + 1 (never lower). */
void line_turn_ends(struct record *rec, const struct place *p);
/* Under the job lock, in the write that starts a run of a call with no
 * place, which found no live place in line: every place in it is over
 * (wait_head = wait_next), so later calls do not look at them again. */
void line_passed(struct record *rec, const struct line_numbers *nums);
/* After that write, still under the job lock: P's file and the unlocked
 * ones below it (down to the head REC had before) removed, P let go. */
void line_leave(const struct registry *reg, const char *job, struct place *p,
		unsigned long long old_head);

/* Job lock held: remove the files of the places in [FROM, TO) that
 * nobody holds (JOB's line being over, or cleared). */
void line_sweep(const struct registry *reg, const char *job, unsigned long long from,
		unsigned long long to);
/* Job lock held: remove a place or follower's lock file NAME (as a
 * sweep's listing found it) if nobody holds it; -1 when there is no such
 * file, else 0. */
int line_sweep_file(const struct registry *reg, const char *name);
/* Clear JOB's record WAS (job lock held; with SYNC the directory
 * fsynced): it is removed, unless places in line are live or, with
 * KEEP_PAUSE (dispatch --clear), a pause is in force — then it becomes
 * PENDING with the line's numbers (so that none is handed out twice,
 * SPEC §5a) and the pause, and nothing else, and *KEPT is 1.  Returns an
 * exit status. */
int line_clear(const struct registry *reg, const char *job, const struct record *was,
	       int keep_pause, int sync, int *kept);

/* ---- a slot group's line: numbers in DIR/.NAME.slotline ---- */

/* .NAME.slotline is "next=M\nhead=H\n" (missing: 1, 1), rewritten in
 * place under its own lock.  A place's turn comes when no live place lies
 * in [head, M). */
struct group_place {
	const char *group;            /* NULL: in no line */
	struct place p;
	unsigned long long ahead;     /* the lowest place that may still be live */
};
#define GROUP_PLACE_NONE { NULL, PLACE_NONE, 0 }

/* Take a place in GROUP's line for JOB, taking the line's lock within
 * LOCK_WAIT seconds.  Returns an exit status (65: a corrupt line file). */
int line_group_join(const struct registry *reg, const char *job, const char *group,
		    double lock_wait, struct group_place *gp);
/* *TURN: has GP's turn come?  An exit status (a failed probe: 74). */
int line_group_turn(const struct registry *reg, const char *job, struct group_place *gp,
		    int *turn);
/* *BUSY: has GROUP's line a live place?  A look without its lock (a
 * place taken meanwhile comes after ours anyway).  An exit status. */
int line_group_busy(const struct registry *reg, const char *job, const char *group, int *busy);
/* Leave the line (nothing when GP is in none).  If GP's turn had come,
 * the places below it are over: head = M + 1, their files removed. */
void line_group_leave(const struct registry *reg, const char *job, struct group_place *gp,
		      double lock_wait);

/* ---- readers: who waits (SPEC §5a "Who waits") ---- */

/* A live place and its waiter's line; FIRST is the kind (a job's line)
 * or the job (a group's); a field missing or torn is "-". */
struct line_entry {
	unsigned long long n;
	char *first, *pid, *host, *since;
};
struct line_entries {
	struct line_entry *e;   /* in the order of their numbers */
	size_t count;
};
/* The live places of JOB's line as REC numbers it, each found by a
 * non-blocking shared probe (a place being made may be missed), up to
 * MISSING_MAX missing files in a row (line.c).  An exit status. */
int line_list(const struct registry *reg, const char *job, const struct record *rec,
	      struct line_entries *out);
/* The same for slot group GROUP's line (no .NAME.slotline: none). */
int line_group_list(const struct registry *reg, const char *group, struct line_entries *out);
void line_entries_free(struct line_entries *l);

#endif
