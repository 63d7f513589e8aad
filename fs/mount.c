/* mount.c -- mounts the session so that -o auto_unmount survives SIGKILL
 * on a loaded machine (see fs.h).
 *
 * With auto_unmount, libfuse 3.14 (lib/mount.c, fuse_mount_fusermount)
 * makes a socket pair, closes its first end and receives /dev/fuse into
 * that lowest free slot: the daemon holds /dev/fuse at fd N and the socket
 * to fusermount3 at N+1. fusermount3 waits for that socket to close, then
 * unmounts only if opening the mount point fails with ENOTCONN.
 *
 * When the daemon dies, the kernel releases its files newest first (exit's
 * task_work list is last-in, first-out, with cond_resched() between
 * items): the socket goes before /dev/fuse. On a busy machine the dying
 * daemon can be preempted right there; fusermount3 then opens the mount
 * point while the connection is still alive, its request is aborted a
 * moment later with ECONNABORTED, and it leaves the dead mount in place.
 * test_kill.sh saw that in 6 of 7 runs with one CPU hog on two cores.
 *
 * So the socket is moved to a slot below /dev/fuse, reserved before the
 * mount: released after it, the socket closes only once the connection is
 * aborted, and fusermount3 sees ENOTCONN.
 */
#include "fs/fs.h"
#include "fs/mount.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The two lowest free descriptors, which the socket pair will take. */
static int two_free(int from, int out[2])
{
    if ((out[0] = fcntl(from, F_DUPFD_CLOEXEC, 0)) < 0)
        return -1;
    if ((out[1] = fcntl(from, F_DUPFD_CLOEXEC, 0)) < 0) {
        close(out[0]);
        return -1;
    }
    close(out[0]);
    close(out[1]);
    return 0;
}

static int is_stream_socket(int fd)
{
    struct stat sb;
    int type = 0;
    socklen_t len = sizeof type;
    return fstat(fd, &sb) == 0 && S_ISSOCK(sb.st_mode)
           && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

/* A descriptor on /dev/null above stdio. Like fuse_session_mount(), first
 * fills a closed 0, 1 or 2 with /dev/null for good: fuse_daemonize() later
 * points those at /dev/null, which would close a socket moved there. */
static int reserve(void)
{
    int fd;
    do
        fd = open("/dev/null", O_RDWR);
    while (fd >= 0 && fd <= 2);
    if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int ofs_mount(struct fuse_session *se, const char *mountpoint)
{
    int spare = reserve(), slot[2] = {-1, -1}, rc;
    if (spare >= 0 && two_free(spare, slot) != 0)
        slot[0] = slot[1] = -1;
    rc = fuse_session_mount(se, mountpoint);
    /* Only the layout predicted above is touched: /dev/fuse in the first
     * slot, a stream socket (fusermount3's, kept with auto_unmount) in the
     * second. Without auto_unmount there is no socket, and nothing moves. */
    if (rc == 0 && slot[0] >= 0 && fuse_session_fd(se) == slot[0] && is_stream_socket(slot[1])
        && dup3(slot[1], spare, O_CLOEXEC) == spare) {
        close(slot[1]);
        return 0;
    }
    if (spare >= 0)
        close(spare);
    return rc;
}
