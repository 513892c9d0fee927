/* write: the write of a job's record that every writer makes (jobreg-set,
 * and jobreg-dispatch at a run's start, between attempts and at its end),
 * with the bookkeeping of runs that goes with it, in one place:
 *
 * - Lost runs (SPEC §2): when the record replaced is STALE and this write
 *   does not record that run's end (a takeover, a reset to PENDING, DONE
 *   with no exit status), the run was lost: failures, lost and
 *   consecutive_failures + 1 in the new record, and a LOST line in the
 *   history.  Not when its owner renews it (the same run goes on), nor
 *   between two attempts of a dispatch (the failed one is counted, and no
 *   run was going).
 * - The history (§3a): the write that ends a run with a known result adds
 *   its line (a DONE record that names no run, set by hand over PENDING,
 *   has no start and no line).
 *
 * The crash rule of §3a — after a crash at any instant a run is in the
 * history at most once, with the outcome its record gave it, and at most
 * the last run is missing — comes from the order of the two writes and
 * from a line being keyed by its run:
 * - an ended run: the record first, then its line; a crash between leaves
 *   the last run missing, and the next write that leaves that DONE record
 *   puts the line in (from the record, which still says how it ended);
 * - an attempt that dispatch will retry: the record (RUNNING, with
 *   retry_at) first, then the attempt's line; a crash between leaves that
 *   attempt missing, and the next write that leaves the record between
 *   attempts puts its FAILED line in (how it failed is not in that
 *   record: the line has no exit or signal);
 * - a lost run: its LOST line first, then the record; a crash between
 *   leaves the record STALE, which the next writer accounts again — the
 *   same line, or the result an operator gives it (set --exit), replacing
 *   it.
 * Call with the job lock held. */
#ifndef JOBREG_WRITE_H
#define JOBREG_WRITE_H

#include "record/record.h"
#include "registry/registry.h"
#include "record/status.h"

/* Replace JOB's record, WAS when the writer read it under the same job
 * lock (NULL: there was none) with its derived status WAS_STATUS, by REC.  ENDED, if not NULL, is the run this write ends with a
 * known result, as a DONE record (REC itself, or a copy: an attempt
 * dispatch will retry ends as a DONE copy while REC stays RUNNING); its
 * line goes into the history after the record.  Returns an exit status. */
int commit_record(const struct registry *reg, const char *job, const struct record *was,
		  enum status was_status, struct record *rec, const struct record *ended);

#endif
