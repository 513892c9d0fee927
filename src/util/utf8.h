/* utf8: the text checks of SPEC §3 — valid UTF-8, and a note. */
#ifndef JOBREG_UTF8_H
#define JOBREG_UTF8_H

#include <stddef.h>

#define NOTE_MAX 4096

/* Is S (LEN bytes) valid UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF)? */
int utf8_valid(const char *s, size_t len);
/* The length of the well-formed sequence at S (LEN > 0 bytes there), as
 * utf8_valid() judges; 0 when the first byte begins none. */
size_t utf8_seq(const char *s, size_t len);
/* A note is valid UTF-8 with no control bytes, at most NOTE_MAX bytes:
 * the rule note S breaks, for a message ("invalid UTF-8"); NULL if none. */
const char *note_problem(const char *s);

#endif
