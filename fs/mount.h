/* mount.h -- mounting (mount.c). Used by main.c. */
#ifndef OFFLOADFS_FS_MOUNT_H
#define OFFLOADFS_FS_MOUNT_H

#include "fs/fs.h"

/* fuse_session_mount(SE, MOUNTPOINT), and with -o auto_unmount, the socket
 * fusermount3 watches moved below /dev/fuse, so a killed daemon closes it
 * only after the connection is aborted: fusermount3 then finds the mount
 * dead and removes it (mount.c says why the order matters). Returns
 * fuse_session_mount()'s result. */
int ofs_mount(struct fuse_session *se, const char *mountpoint);

#endif
