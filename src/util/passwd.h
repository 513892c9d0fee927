/* passwd: a user's name from /etc/passwd, for paused_by, cancel_by and the
 * audit log's user (SPEC §3c).  Read by hand: getpwuid(3) and
 * getpwuid_r(3) would load NSS modules into a static binary. */
#ifndef JOBREG_PASSWD_H
#define JOBREG_PASSWD_H

#include <sys/types.h>

struct buf;
/* The name of UID into OUT: 1 if found (a name a record cannot hold, with
 * a space or a control byte, is none); 0 and OUT untouched if not. */
int passwd_name(uid_t uid, struct buf *out);

#endif
