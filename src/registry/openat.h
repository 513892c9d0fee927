/* openat: opening one entry of the registry directory (SPEC §1, §4, §6),
 * relative to its descriptor, with ENTRY_FLAGS; it must be a regular file.
 * A call meeting ESTALE (a file handle an NFS server no longer knows) is
 * tried again with a fresh lookup, STALE_TRIES times in all.  No
 * messages: the callers report, with errno as these leave it. */
#ifndef JOBREG_OPENAT_H
#define JOBREG_OPENAT_H

#include <sys/stat.h>
#include <sys/types.h>

#define ENTRY_FLAGS (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
#define STALE_TRIES 4
/* What entry_open() returns for a symlink, directory, FIFO, socket or
 * device where a regular file was expected (exit 77). */
#define ENTRY_NOT_REGULAR (-2)

/* After a failed call: is it ESTALE and may it be tried again?  Counts in
 * *tries (start at 0) and keeps errno. */
int estale_again(int *tries);

/* openat(DIR, NAME, FLAGS | ENTRY_FLAGS, 0666) and fstat into *st.
 * 0 with *fd open on a regular file; -1 with errno (ENOENT: there is
 * none) and *fd -1; or ENTRY_NOT_REGULAR. */
int entry_open(int dir, const char *name, int flags, int *fd, struct stat *st);

/* The mode for the files we create in a directory of mode DIR_MODE: in a
 * group-writable one, 0666 & ~umask plus g+rw (SPEC §1); 0 when that is
 * what creating them gives anyway. */
mode_t entry_share_mode(mode_t dir_mode);
/* fchmod our own new file on FD to MODE (nothing when MODE is 0). */
int entry_share(int fd, mode_t mode);

#endif
