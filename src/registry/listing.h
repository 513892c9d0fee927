/* listing: the entries of the registry directory (SPEC §4), for get -a and
 * the sweeps — names only, one readdir(3) pass, sorted.
 *
 * A job is listed when its record is, and also when its ".JOB.lock" is
 * and DIR/JOB exists: readdir can miss a record renamed over meanwhile
 * (tmpfs does), but lock files are never renamed over, so a job whose
 * record exists for the whole listing is never left out. */
#ifndef JOBREG_LISTING_H
#define JOBREG_LISTING_H

#include <stddef.h>

#include "registry/registry.h"

struct listing {
	char **jobs;              /* jobs with a record, sorted by id */
	size_t njobs;
	char **unsure;            /* jobs whose entry did not say it is a regular
				   * file; a sweep's listing only */
	size_t nunsure;
	char **temps;             /* ".X.tmp", and 0.1's ".X.tmp.XXXXXX" */
	size_t ntemps;
	char **runs;              /* ".X.run" */
	size_t nruns;
	char **locks;             /* ".X.lock" */
	size_t nlocks;
	char **runfiles;          /* ".X.history", ".X.log", ".X.faillog" */
	size_t nrunfiles;
	char **places;            /* ".X.wait.N", ".X.coalesce" (SPEC §5a) */
	size_t nplaces;
	char **slots;             /* ".NAME.slot.K" (slots.h), listed always */
	size_t nslots;
	int jobs_only;            /* LIST_JOBS */
};

/* Every kind of entry (a sweep), or only jobs, locks and slots (get -a:
 * no cost for the histories and logs beside the records). */
enum list_what { LIST_ALL, LIST_JOBS };

/* Read REG's directory into L (a missing registry lists nothing).  An
 * exit status. */
int reg_list(const struct registry *reg, enum list_what what, struct listing *l);
void listing_free(struct listing *l);

/* The job of a place file NAME (".X.wait.N", ".X.coalesce"), malloc'd;
 * NULL when NAME is no such file or X is no job id. */
char *listing_place_job(const char *name);
/* Is NAME among the N sorted NAMES? */
int listing_has(char *const *names, size_t n, const char *name);
/* The first of the N sorted NAMES not below KEY. */
size_t listing_lower_bound(char *const *names, size_t n, const char *key);

#endif
