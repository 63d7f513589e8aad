/* importdir.h -- the checks `agentlink import DIR` makes on DIR before
 * it lists or moves anything. Part of the CLI; not installed. */
#ifndef OFFLOADFS_AGENTLINK_CLI_IMPORTDIR_H
#define OFFLOADFS_AGENTLINK_CLI_IMPORTDIR_H

/* Decides whether the directory open at DFD (named DIR in messages) may be
 * imported from into the store directory STORE_DIR (may be NULL, or not
 * exist yet). It may not when it is STORE_DIR, when it holds an LMDB
 * environment (a data.mdb or lock.mdb entry of any type: any LMDB
 * environment, not only offloadfs stores), or when one of its parents is
 * STORE_DIR or holds one: import moves files, and moving an LMDB file
 * destroys the environment it belongs to. Directories are compared by
 * device and inode, walking up through "..", so symlinks, "..", bind
 * mounts and relative paths cannot hide the store. Touches nothing.
 * Returns 0 (go on), 1 (refused: *WHY is the message you own, without the
 * "agentlink: " prefix, e.g. "cannot import directory 'S': it is the store
 * 'S' itself; ..."), or ENOMEM. */
int cli_importdir_check(int dfd, const char *dir, const char *store_dir, char **why);

#endif
