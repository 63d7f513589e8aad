/* asuser.h -- work on a thread acting as another user (asuser.c). Used by
 * pin.c and wake.c. */
#ifndef OFFLOADFS_FS_ASUSER_H
#define OFFLOADFS_FS_ASUSER_H

#include "fs/fs.h"

/* Runs FN(ARG) on a new thread of its own and waits for it. That thread
 * has umask MASK, its own (unshare(CLONE_FS); where a seccomp filter
 * refuses that, the process's umask applies unchanged) and, when we are
 * root and UID is not 0, acts on files as UID:GID (setfsuid, setfsgid)
 * with no supplementary groups and none of root's file capabilities:
 * whatever FN creates is UID's, and FN can do nothing UID could not. The
 * calling thread's identity and umask never change; FN must not call
 * umask(). Not root, or UID 0: FN runs with our own identity.
 * Returns FN's result, or the errno value of a thread that could not be
 * started (EAGAIN) or could not take the identity (EPERM). */
int ofs_as_user(uid_t uid, gid_t gid, mode_t mask, int (*fn)(void *), void *arg);

#endif
