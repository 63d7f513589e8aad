/* ops.h -- the FUSE low-level handlers (ops.c). Used by main.c. */
#ifndef OFFLOADFS_FS_OPS_H
#define OFFLOADFS_FS_OPS_H

#include "fs/fs.h"

/* The low-level operation table handed to fuse_session_new(). Static
 * storage; never NULL. */
const struct fuse_lowlevel_ops *ofs_ops(void);

#endif
