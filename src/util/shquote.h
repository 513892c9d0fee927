/* shquote: a command line as a shell would read it back, for the cmd=
 * of a record (SPEC §5 step 5) — for people, never run by anything. */
#ifndef JOBREG_SHQUOTE_H
#define JOBREG_SHQUOTE_H

#include "util/sys.h"

#define SHQUOTE_MAX 1024   /* cmd= is cut to this many bytes */

/* ARGV (NULL-terminated) into OUT: words quoted only where needed ('…'),
 * one with a byte a record cannot hold as bash's $'…'.  Cut on a character
 * boundary to SHQUOTE_MAX bytes: always UTF-8 with no control byte. */
void shquote_argv(struct buf *out, char *const *argv);

#endif
