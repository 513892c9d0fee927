/* outfile: write a command's whole output to a file atomically (-o), so a
 * reader such as node_exporter's textfile collector sees the old file or
 * the new one, never a part (atomic.h).  The data goes to a temp file
 * ".NAME.XXXXXX" in FILE's own directory (NAME cut to fit NAME_MAX; made
 * with O_CREAT|O_EXCL; it ends in random letters, not in ".prom", so the
 * collector skips it).  A new FILE gets mode 0666 & ~umask; one that is
 * replaced keeps its mode, and its group where we may give it.  On any
 * failure the temp file is removed and FILE is left as it was.  An
 * existing FILE must be a regular file: a symlink, directory or device
 * (/dev/stdout) is refused, not replaced.
 *
 * Returns 0, or an exit status after printing one line: 73 when the file
 * cannot be created there (no such directory, not a regular file in its
 * place, a read-only file system), 77 permission denied, 74 an I/O error. */
#ifndef JOBREG_OUTFILE_H
#define JOBREG_OUTFILE_H

#include <stddef.h>

int outfile_write(const char *path, const char *data, size_t len);

#endif
