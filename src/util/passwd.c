#include "util/passwd.h"
#include "util/sys.h"
#include "util/utf8.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

int passwd_name(uid_t uid, struct buf *out)
{
	struct buf text = {0};
	char chunk[4096];
	ssize_t n;
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0)
		return 0;
	while ((n = read_full(fd, chunk, sizeof chunk)) > 0 && text.len < (1u << 24))
		buf_add(&text, chunk, (size_t)n);
	close_fd(fd);
	for (char *line = text.data; line && *line && !found;) {
		char *nl = strchr(line, '\n'), *colon1 = strchr(line, ':');
		char *colon2 = colon1 ? strchr(colon1 + 1, ':') : NULL;
		char *colon3 = colon2 ? strchr(colon2 + 1, ':') : NULL;
		unsigned long long id;
		if (colon3 && (!nl || colon3 < nl) && colon1 > line &&
		    parse_digits(colon2 + 1, (size_t)(colon3 - colon2 - 1), UINT_MAX, &id) == 0 &&
		    id == (unsigned long long)uid) {
			/* A name a record cannot hold is no name here. */
			size_t len = (size_t)(colon1 - line);
			found = utf8_valid(line, len);
			for (size_t i = 0; i < len && found; i++)
				found = (unsigned char)line[i] > ' ' && line[i] != 0x7f;
			if (found)
				buf_add(out, line, len);
		}
		line = nl ? nl + 1 : NULL;
	}
	buf_free(&text);
	return found;
}
