#include "registry/chain.h"
#include "util/msg.h"

#include <stdlib.h>
#include <string.h>

struct walk {
	const struct registry *reg;
	const char *job;
	char *path[CHAIN_DEPTH];   /* the records followed to here */
	size_t depth;
	struct buf seen;           /* "\nNAME\n" of each record read */
};

/* Depth first along LIST, each record read once. */
static int walk_list(struct walk *w, const char *list)
{
	struct buf key = {0};
	int back = 0;
	for (const char *p = list; !back && *p; p += *p == ',') {
		size_t n = strcspn(p, ",");
		char *name = xstrndup(p, n);
		p += n;
		buf_reset(&key);
		buf_addf(&key, "\n%s\n", name);
		if (strcmp(name, w->job) == 0) {
			back = 1;
		} else if (w->depth < CHAIN_DEPTH && valid_job_id(name) &&
			   !(w->seen.data && strstr(w->seen.data, key.data))) {
			struct record rec;
			int found = 0;
			buf_adds(&w->seen, key.data + (w->seen.len ? 1 : 0));
			if (reg_read_record(w->reg, name, &rec, &found) == 0 && found &&
			    record_get(&rec, "after")) {
				w->path[w->depth++] = name;
				name = NULL;
				back = walk_list(w, record_get(&rec, "after"));
				if (!back)
					free(w->path[--w->depth]);
			}
			record_free(&rec);
		}
		free(name);
	}
	buf_free(&key);
	return back;
}

int chain_loops(const struct registry *reg, const char *job, const char *after,
		struct buf *through)
{
	struct walk w = { .reg = reg, .job = job };
	struct buf dropped = {0};
	struct buf *was = message_hold(&dropped);
	int back = walk_list(&w, after);
	message_hold(was);
	message_release(&dropped, 0);
	buf_free(&dropped);
	for (size_t i = 0; i < w.depth; i++) {
		if (back)
			buf_addf(through, "%s%s", i ? ", " : "", w.path[i]);
		free(w.path[i]);
	}
	buf_free(&w.seen);
	return back;
}
