/* health: SPEC §2 Health. */
#include "record/health.h"

enum health health_judge(const struct health_facts *f)
{
	/* A notifier with notify_after N sees FAILED only from the Nth
	 * failure in a row; below it, the next word that applies. */
	unsigned long long failed_from = f->notify_after > 1 ? f->notify_after : 1;
	if (f->stale)
		return HEALTH_STALE;
	if (f->overdue)
		return HEALTH_OVERDUE;
	if (f->consecutive_failures >= failed_from)
		return HEALTH_FAILED;
	if (f->late)
		return HEALTH_LATE;
	if (f->last_success_warning)
		return HEALTH_WARNING;
	return HEALTH_OK;
}
