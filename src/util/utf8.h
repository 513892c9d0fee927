/* utf8: the text checks of SPEC §3 (UTF-8, a note) and the one escaping
 * of text for the screen and for JSON. */
#ifndef JOBREG_UTF8_H
#define JOBREG_UTF8_H

#include <stddef.h>

#define NOTE_MAX 4096

/* Is S (LEN bytes) valid UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF)? */
int utf8_valid(const char *s, size_t len);
/* The length of the well-formed sequence at S (LEN > 0); 0 if none. */
size_t utf8_seq(const char *s, size_t len);
/* The same for a character text may hold as it is; 0 for a control
 * character (C0, DEL, C1: U+0080-U+009F) or a byte that begins none. */
size_t utf8_printable(const char *s, size_t len);
/* The rule note S breaks, for a message ("invalid UTF-8"); NULL if none.
 * A note is at most NOTE_MAX bytes of UTF-8 with no control character
 * (not C1 either: a terminal obeys its CSI as ESC [). */
const char *note_problem(const char *s);

/* How text_escape() writes what a terminal or JSON must not get raw. */
enum escape {
	ESCAPE_TEXT,   /* for people: C0 and DEL as \x1b, C1 as \u009b, a
			* byte that begins no UTF-8 sequence as \xff */
	ESCAPE_JSON,   /* the inside of a JSON string: \" \\ \n \t \r, the
			* other C0, DEL and C1 as \u001b, a byte that begins
			* no UTF-8 sequence as \ufffd: always valid JSON */
};
struct buf;
/* Append S (LEN bytes, NULs included) to OUT, escaped HOW.  All output
 * of registry text goes through here, so that no writer of a shared
 * registry can drive a reader's terminal. */
void text_escape(struct buf *out, const char *s, size_t len, enum escape how);

#endif
