/* proc: the Linux-only facts jobreg uses: from /proc the boot id, a
 * process's start time, this process's namespaces and the processes holding
 * a file open (the only module that reads /proc); a pid's pidfd. */
#ifndef JOBREG_PROC_H
#define JOBREG_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* This boot's id (NULL when the kernel has none) and the inodes of
 * /proc/self/ns/pid and /proc/self/ns/time (0 when it has no such
 * namespace), read once.  Returns 0, or -1 with errno when they could not
 * be read. */
int proc_identity(const char **boot_id, unsigned long long *pid_ns, unsigned long long *time_ns);

/* The start time of PID > 0 (field 22 of /proc/PID/stat).  Returns 1 and sets
 * *start for a live process, 0 for a zombie, -1 with errno: ENOENT or
 * ESRCH for no such process (or one hidepid=2 hides), EACCES or EPERM for
 * one hidden otherwise. */
int pid_start_time(long pid, unsigned long long *start);

/* The pids, ascending, at most MAX, in a malloc'd *PIDS, of the processes
 * that hold a lock on the file DEV, INO (by /proc/PID/fd and fdinfo, those
 * we may look into; where fdinfo does not tell, an open descriptor counts),
 * only the lock LOCKER took unless it is 0 (a flock is shared by every
 * descriptor of one open, so fork's children hold it too).  Returns 0, or
 * -1 with errno when /proc cannot be read. */
int lock_sharers(dev_t dev, ino_t ino, long locker, size_t max, long **pids, size_t *count);

/* A pidfd of PID (pidfd_open(2), close-on-exec), or -1 where the kernel
 * has none or PID cannot be one. */
int pid_fd(long pid);

/* Does PID run the same program as this process (its /proc/PID/exe, the
 * same file as ours)?  1 or 0; 0 also when it cannot be told. */
int same_program(long pid);

#endif
