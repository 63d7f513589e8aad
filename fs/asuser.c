/* asuser.c -- running a piece of work with a user's file-system rights.
 *
 * Why a thread of its own: the file-system identity (setfsuid, setfsgid)
 * is per thread in the kernel, but the umask and the supplementary groups
 * are not: umask() changes what every thread shares, and glibc's
 * setgroups() changes every thread. A short-lived thread that unshares its
 * file-system attributes (CLONE_FS: cwd, root, umask) and drops its groups
 * with the raw system call can take the user's identity entirely, and
 * nothing it changed outlives it: no restore step that could be missed,
 * and the other threads never run with its umask or as the user.
 *
 * With a file-system uid other than 0 the kernel also clears CAP_CHOWN,
 * CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER and CAP_FSETID from the
 * thread's effective set (capabilities(7)): what the work does, the user
 * could have done.
 */
#include "fs/fs.h"
#include "fs/asuser.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

struct as_user {
    uid_t uid;
    gid_t gid;
    mode_t mask;
    int (*fn)(void *);
    void *arg;
    int rc;
};

/* Gives the calling thread umask MASK, of its own, and makes it act as
 * UID:GID without supplementary groups when we are root and UID is not.
 * Returns 0 or an errno value. */
static int become(uid_t uid, gid_t gid, mode_t mask)
{
    /* Refused only by a filter (seccomp) that would refuse FUSE's mount
     * too: the process's umask then applies, unchanged. */
    if (unshare(CLONE_FS) == 0)
        umask(mask);
    if (geteuid() != 0 || uid == 0)
        return 0;
    if (syscall(SYS_setgroups, 0, NULL) != 0)
        return errno;
    (void)setfsgid(gid);
    (void)setfsuid(uid);
    /* setfsuid() reports no error; an invalid id (-1) changes nothing and
     * returns the id in force, which says whether the change took. */
    if ((gid_t)setfsgid((gid_t)-1) != gid || (uid_t)setfsuid((uid_t)-1) != uid)
        return EPERM;
    return 0;
}

static void *as_user_main(void *p)
{
    struct as_user *a = p;
    if ((a->rc = become(a->uid, a->gid, a->mask)) == 0)
        a->rc = a->fn(a->arg);
    return NULL;
}

int ofs_as_user(uid_t uid, gid_t gid, mode_t mask, int (*fn)(void *), void *arg)
{
    struct as_user a = {uid, gid, mask, fn, arg, 0};
    pthread_t t;
    int rc = pthread_create(&t, NULL, as_user_main, &a);
    if (rc)
        return rc;
    pthread_join(t, NULL);
    return a.rc;
}
