/* write: the write of a job's record every writer makes (jobreg-set, and
 * jobreg-dispatch at a run's start, between attempts and at its end), with
 * the bookkeeping of runs that goes with it:
 *
 * - Lost runs (SPEC §2): when the record replaced is STALE and this write
 *   does not record that run's end, the run was lost: failures, lost and
 *   consecutive_failures + 1, and a LOST line in the history.  Not when
 *   its owner renews it, nor between two attempts of a dispatch (the
 *   failed one is counted, and no run was going).
 * - The history (§3a): the write that ends a run with a known result adds
 *   its line (a DONE set by hand over PENDING has no start and no line).
 *
 * §3a's crash rule (a run in the history at most once, with its record's
 * outcome; at most the last run missing) comes from the order of the two
 * writes and from a line being keyed by its run:
 * - an ended run: record, then line; after a crash between, the next
 *   write that leaves that DONE record puts the line in from the record;
 * - an attempt that dispatch will retry: the record (RUNNING, retry_at),
 *   then the attempt's line; after a crash between, the next write that
 *   leaves the record between attempts puts in its FAILED line (with no
 *   exit or signal: that record does not say how it failed);
 * - a lost run: its LOST line, then the record; a crash between leaves
 *   the record STALE, which the next writer accounts again — the same
 *   line, or the result an operator gives it (set --exit), replacing it.
 * Call with the job lock held. */
#ifndef JOBREG_WRITE_H
#define JOBREG_WRITE_H

#include "record/record.h"
#include "registry/registry.h"
#include "record/status.h"

/* Replace JOB's record by REC.  WAS is the record the writer read under
 * the same job lock (NULL: none), WAS_STATUS its derived status.  ENDED,
 * if not NULL, is the run this write ends with a known result, as a DONE
 * record (REC, or a DONE copy for an attempt dispatch will retry while
 * REC stays RUNNING); its line goes into the history after the record.
 * An exit status. */
int commit_record(const struct registry *reg, const char *job, const struct record *was,
		  enum status was_status, struct record *rec, const struct record *ended);

#endif
