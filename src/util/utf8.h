/* utf8: the text checks of SPEC §3 — valid UTF-8, and a note — and the
 * one escaping of text for the screen and for JSON. */
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
/* The length of the character at S (LEN > 0 bytes there) that text may
 * hold as it is: printable ASCII, or well-formed UTF-8 other than the C1
 * controls (U+0080-U+009F); 0 for a control character, or a byte that
 * begins no sequence. */
size_t utf8_printable(const char *s, size_t len);
/* A note is valid UTF-8 with no control character (C0, DEL, or C1:
 * U+0080-U+009F, whose CSI a terminal obeys as ESC [), at most NOTE_MAX
 * bytes: the rule note S breaks, for a message ("invalid UTF-8"); NULL if
 * none. */
const char *note_problem(const char *s);

/* How text_escape() writes what a terminal or a JSON reader must not get
 * raw. */
enum escape {
	ESCAPE_TEXT,   /* for people: C0 and DEL as \x1b, C1 as \u009b, a
			* byte that begins no UTF-8 sequence as \xff */
	ESCAPE_JSON,   /* the inside of a JSON string: \" \\ \n \t \r, the
			* other C0, DEL and C1 as \u001b, a byte that begins
			* no UTF-8 sequence as \ufffd: always valid JSON */
};
struct buf;
/* Append S (LEN bytes, NUL bytes included) to OUT, escaped HOW: every
 * output of the registry's text (a record, a history line, a place, a
 * message) goes through here, so that no writer of a shared registry can
 * drive a reader's terminal. */
void text_escape(struct buf *out, const char *s, size_t len, enum escape how);

#endif
