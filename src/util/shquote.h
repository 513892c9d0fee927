/* shquote: a command line as a shell would read it back, for the cmd=
 * of a record (SPEC §5 step 5) — for people, never run by anything. */
#ifndef JOBREG_SHQUOTE_H
#define JOBREG_SHQUOTE_H

#include "util/sys.h"

#define SHQUOTE_MAX 1024   /* cmd= is cut to this many bytes */

/* ARGV (NULL-terminated) into OUT, words separated by a space: a word
 * quoted only where it needs it ('…', '' for an empty one), one with a
 * byte a record cannot hold (control bytes, invalid UTF-8) as bash's
 * $'…'.  Cut on a character boundary to at most SHQUOTE_MAX bytes, so
 * it is always valid UTF-8 with no control byte. */
void shquote_argv(struct buf *out, char *const *argv);

#endif
