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
