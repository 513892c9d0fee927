#include "util/shquote.h"
#include "util/utf8.h"

#include <string.h>

/* Bytes a shell reads as themselves anywhere in a word; '=' too, but in
 * the first word, where it would make an assignment. */
static int plain_byte(unsigned char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("@%+:,./_-", c) || (c == '=' && !first) || c >= 0x80;
}

/* WORD as $'…': escapes for what a record cannot hold, and for \ and '. */
static void add_escaped(struct buf *out, const char *word, size_t len)
{
	buf_adds(out, "$'");
	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		n = utf8_printable(word + i, len - i);
		if (n == 1 && (word[i] == '\\' || word[i] == '\''))
			buf_addc(out, '\\');
		if (n) {
			buf_add(out, word + i, n);
			continue;
		}
		switch (word[i]) {
		case '\t': buf_adds(out, "\\t"); break;
		case '\n': buf_adds(out, "\\n"); break;
		case '\r': buf_adds(out, "\\r"); break;
		case '\033': buf_adds(out, "\\e"); break;
		default: buf_addf(out, "\\x%02X", (unsigned char)word[i]);
		}
	}
	buf_addc(out, '\'');
}

static void add_word(struct buf *out, const char *word, int first)
{
	size_t len = strlen(word);
	int escape = 0, quote = len == 0;
	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		n = utf8_printable(word + i, len - i);
		escape |= !n;
		quote |= !plain_byte((unsigned char)word[i], first);
	}
	if (escape) {
		add_escaped(out, word, len);
	} else if (!quote) {
		buf_add(out, word, len);
	} else {
		buf_addc(out, '\'');
		for (const char *q; (q = strchr(word, '\'')); word = q + 1) {
			buf_add(out, word, (size_t)(q - word));
			buf_adds(out, "'\\''");
		}
		buf_adds(out, word);
		buf_addc(out, '\'');
	}
}

void shquote_argv(struct buf *out, char *const *argv)
{
	size_t start = out->len;
	for (int i = 0; argv[i]; i++) {
		if (i > 0)
			buf_addc(out, ' ');
		add_word(out, argv[i], i == 0);
	}
	buf_add(out, "", 0);
	if (out->len - start > SHQUOTE_MAX) {
		/* What was written is valid UTF-8: a cut before a byte that
		 * does not continue a sequence is on a character boundary. */
		size_t cut = start + SHQUOTE_MAX;
		while (cut > start && ((unsigned char)out->data[cut] & 0xc0) == 0x80)
			cut--;
		out->len = cut;
		out->data[cut] = '\0';
	}
}

void shquote_word(struct buf *out, const char *word)
{
	add_word(out, word, 0);
	buf_add(out, "", 0);
}

/* The value of hex digit C, or -1. */
static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The inside of $'…' from S: its escapes into OUT; returns past the '. */
static const char *unescape(const char *s, const char *end, struct buf *out)
{
	static const char from[] = "tnre\\'", to[] = "\t\n\r\033\\'";
	while (s < end && *s != '\'') {
		const char *e = s + 1 < end && *s == '\\' ? strchr(from, s[1]) : NULL;
		if (e && s[1]) {
			buf_addc(out, to[e - from]);
			s += 2;
		} else if (s + 3 < end && *s == '\\' && s[1] == 'x' && hex(s[2]) >= 0 &&
			   hex(s[3]) >= 0) {
			buf_addc(out, (char)(hex(s[2]) * 16 + hex(s[3])));
			s += 4;
		} else {
			buf_addc(out, *s++);
		}
	}
	return s < end ? s + 1 : s;
}

const char *shquote_unquote(const char *s, const char *end, struct buf *out)
{
	buf_add(out, "", 0);
	while (s < end && *s != ' ') {
		if (*s == '\'') {
			const char *q = memchr(s + 1, '\'', (size_t)(end - s - 1));
			const char *stop = q ? q : end;
			buf_add(out, s + 1, (size_t)(stop - s - 1));
			s = q ? q + 1 : end;
		} else if (*s == '\\' && s + 1 < end) {
			buf_addc(out, s[1]);
			s += 2;
		} else if (*s == '$' && s + 1 < end && s[1] == '\'') {
			s = unescape(s + 2, end, out);
		} else {
			buf_addc(out, *s++);
		}
	}
	return s;
}
