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

/* One value WORD into OUT, quoted as shquote_argv() quotes a word after
 * the first, uncut (the audit log's values, SPEC §3c). */
void shquote_word(struct buf *out, const char *word);
/* The other way, for readers of such text: the word at S (up to END or a
 * space), unquoted into OUT ('…', $'…' with the escapes written above,
 * and plain bytes, run together as a shell reads them).  Returns where
 * the word ends. */
const char *shquote_unquote(const char *s, const char *end, struct buf *out);

#endif
