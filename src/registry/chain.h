/* chain: where the chains of dispatch --after lead (SPEC §5d) — the
 * records' `after` keys followed from a list, at most CHAIN_DEPTH records
 * deep, each record read once, for one that leads back to the job. */
#ifndef JOBREG_CHAIN_H
#define JOBREG_CHAIN_H

#include "registry/registry.h"
#include "util/sys.h"

#define CHAIN_DEPTH 16

/* Does JOB's list AFTER ("b,c") lead back to JOB?  1 with the jobs it goes
 * through in THROUGH ("b", "b, c"), else 0.  A record that cannot be read
 * leads nowhere, silently: the chain is for people, not a decision. */
int chain_loops(const struct registry *reg, const char *job, const char *after,
		struct buf *through);

#endif
