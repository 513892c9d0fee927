/* line: a line of waiting callers (SPEC §5a "Waiting in line", §5b) — one
 * mechanism, two users: a job's line, numbered from its record, and a
 * slot group's, numbered from DIR/.NAME.slotline.
 *
 * Place N is DIR/.JOB.wait.N (a group's: DIR/.NAME.slotwait.N), made
 * O_CREAT|O_EXCL and locked exclusively by its waiter under the lock of
 * the numbers (the job lock, the group line's lock), then given its
 * waiter's line in one write, never truncated (SPEC §5a "Who waits").  It
 * is live while locked (in a job's line, also N >= replaced_below): the
 * kernel drops the lock of a waiter that dies.  Places below the head are over.
 * Probes take LOCK_SH|LOCK_NB on a descriptor of our own, never
 * disturbing the holder; a probe failing otherwise than "no such file" or
 * "locked" decides nothing (74).  Numbers are at most COUNTER_MAX
 * (record.h), past which no place is taken (74).  Nothing here reads the
 * directory: the numbers say where the places are. */
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
/* JOB's numbers read without a lock (a waiter's look between waits); a
 * missing or corrupt record gives none's.  An exit status. */
int line_read(const struct registry *reg, const char *job, struct line_numbers *nums);

/* Job lock held: take place N = wait_next (past leftover files) for a
 * call of KIND ("wait", "once", "coalesce", "replace"); REC gets
 * wait_next = N + 1, for the caller to write before it lets the job lock
 * go (line_abandon() if that fails).  An exit status. */
int line_join(const struct registry *reg, const char *job, struct record *rec,
	      const char *kind, struct place *p);
/* Give up a place: its file removed, its lock let go. */
void line_abandon(const struct registry *reg, const char *job, struct place *p);

/* *AHEAD: the nearest live place below BELOW, or 0: none; one probe per
 * place.  An exit status (a failed probe is 74, never "none"). */
int line_ahead(const struct registry *reg, const char *job, const struct line_numbers *nums,
	       unsigned long long below, unsigned long long *ahead);
/* How many places of REC's line are live (line_list()'s count). */
unsigned long long line_waiting(const struct registry *reg, const char *job,
				const struct record *rec);
/* Open place N, for a wait until it is let go (wait_lock(), LOCK_SH):
 * *FD -1 when its file is gone.  An exit status. */
int line_open_place(const struct registry *reg, const char *job, unsigned long long n, int *fd);

/* Job lock held, in the write that ends P's turn: REC gets wait_head =
 * P->n + 1 (never lower). */
void line_turn_ends(struct record *rec, const struct place *p);
/* Job lock held, in the write that starts a run of a call with no place
 * that found none live: every place is over (wait_head = wait_next). */
void line_passed(struct record *rec, const struct line_numbers *nums);
/* After that write, job lock held: P's file and the unlocked ones below
 * it (down to OLD_HEAD, the head before) removed, P let go. */
void line_leave(const struct registry *reg, const char *job, struct place *p,
		unsigned long long old_head);

/* Job lock held: remove the files of places in [FROM, TO) nobody holds. */
void line_sweep(const struct registry *reg, const char *job, unsigned long long from,
		unsigned long long to);
/* Job lock held: remove the place or follower's lock file NAME if nobody
 * holds it. */
void line_sweep_file(const struct registry *reg, const char *name);
/* Job lock held: clear JOB's record WAS (with SYNC the directory
 * fsynced).  It is removed, unless a place is live or, with KEEP_PAUSE
 * (dispatch --clear), a pause is in force: then it becomes PENDING with
 * only the line's numbers (SPEC §5a) and the pause, and *KEPT is 1.  An
 * exit status. */
int line_clear(const struct registry *reg, const char *job, const struct record *was,
	       int keep_pause, int sync, int *kept);

/* ---- a slot group's line: numbers in DIR/.NAME.slotline ---- */

/* .NAME.slotline is "next=M\nhead=H\n" (missing: 1, 1), rewritten in
 * place under its own lock.  A turn comes when [head, M) has none live. */
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
/* *BUSY: has GROUP's line a live place?  Read without its lock (a place
 * taken meanwhile comes after ours anyway).  An exit status. */
int line_group_busy(const struct registry *reg, const char *job, const char *group, int *busy);
/* Leave the line (GP in none: nothing).  If GP's turn had come, the
 * places below it are over: head = M + 1, their files removed. */
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
/* The live places of JOB's line as REC numbers it (a place being made
 * may be missed; see MISSING_MAX in line.c).  An exit status. */
int line_list(const struct registry *reg, const char *job, const struct record *rec,
	      struct line_entries *out);
/* The same for slot group GROUP's line (no .NAME.slotline: none). */
int line_group_list(const struct registry *reg, const char *group, struct line_entries *out);
void line_entries_free(struct line_entries *l);

#endif
