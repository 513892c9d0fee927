#include "util/utf8.h"
#include "util/sys.h"

#include <stdint.h>
#include <string.h>

size_t utf8_seq(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0], min, cp;
	size_t more;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		more = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		more = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		more = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len - 1 < more)
		return 0;
	for (size_t i = 1; i <= more; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return more + 1;
}

size_t utf8_printable(const char *s, size_t len)
{
	unsigned char c = (unsigned char)s[0];
	/* U+0080-U+009F, the C1 controls, are C2 80 to C2 9F. */
	if (c < 0x20 || c == 0x7f || (c == 0xc2 && len > 1 && (unsigned char)s[1] < 0xa0))
		return 0;
	return utf8_seq(s, len);
}

int utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + len;
	while (s < end) {
		/* Records are mostly ASCII: eight bytes at a time through it. */
		uint64_t word;
		if ((size_t)(end - s) >= sizeof word) {
			memcpy(&word, s, sizeof word);
			if (!(word & 0x8080808080808080u)) {
				s += sizeof word;
				continue;
			}
		}
		size_t n = utf8_seq((const char *)s, (size_t)(end - s));
		if (!n)
			return 0;
		s += n;
	}
	return 1;
}

/* NOTE_MAX as a string, for the message. */
#define TEXT_OF(n) #n
#define NUMBER_TEXT(n) TEXT_OF(n)

const char *note_problem(const char *s)
{
	size_t len = strlen(s);
	if (len > NOTE_MAX)
		return "longer than " NUMBER_TEXT(NOTE_MAX) " bytes";
	if (!utf8_valid(s, len))
		return "invalid UTF-8";
	for (size_t i = 0, n; i < len; i += n)
		if ((n = utf8_printable(s + i, len - i)) == 0)
			return "a newline or other control character";
	return NULL;
}

void text_escape(struct buf *out, const char *s, size_t len, enum escape how)
{
	static const char hex[] = "0123456789abcdef";
	const char *end = s + len;
	int json = how == ESCAPE_JSON;
	while (s < end) {
		/* The plain bytes up to the next one to look at, at once. */
		size_t plain = 0;
		while (s + plain < end && (unsigned char)s[plain] >= 0x20 &&
		       (unsigned char)s[plain] < 0x7f &&
		       (!json || (s[plain] != '"' && s[plain] != '\\')))
			plain++;
		buf_add(out, s, plain);
		s += plain;
		if (s == end)
			break;
		unsigned char c = (unsigned char)*s;
		size_t n = utf8_printable(s, (size_t)(end - s));
		if (c >= 0x80 && n) {
			buf_add(out, s, n);   /* a character past ASCII */
			s += n;
			continue;
		}
		/* Past ASCII, the only sequence not printable is a C1 control. */
		int c1 = utf8_seq(s, (size_t)(end - s)) == 2;
		if (c1)
			c = (unsigned char)s[1];
		s += c1 ? 2 : 1;
		if (json && c >= 0x80 && !c1) {
			buf_adds(out, "\\ufffd");
		} else if (json && (c == '"' || c == '\\')) {
			buf_addc(out, '\\');
			buf_addc(out, (char)c);
		} else if (json && (c == '\n' || c == '\t' || c == '\r')) {
			buf_addc(out, '\\');
			buf_adds(out, c == '\n' ? "n" : c == '\t' ? "t" : "r");
		} else if (json || c1) {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			buf_add(out, u, sizeof u);
		} else {
			char x[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
			buf_add(out, x, sizeof x);
		}
	}
}

