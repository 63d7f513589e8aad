/* dir.h -- walking up from a directory to the root through "..", by
 * device and inode.
 *
 * Why not path strings: the same directory is reached through symlinks,
 * "..", relative paths and bind mounts, and a string compare misses each
 * of them; opening ".." from an open directory follows what the kernel
 * resolves. The command uses it to refuse an import directory inside a
 * store, the daemon to refuse a store inside its mountpoint. */
#ifndef OFFLOADFS_COMMON_DIR_H
#define OFFLOADFS_COMMON_DIR_H

#include <sys/stat.h>

/* 1 when A and B are the same file (device and inode), else 0. */
int common_same_file(const struct stat *a, const struct stat *b);

/* Called for one directory of the walk: FD is it, open with O_PATH (valid
 * only during the call: fstatat() and openat() on it work), ST its
 * fstat(), LEVEL how many ".." above the start it is (0: the start).
 * Returns 0 to go on up, nonzero to stop the walk with that value. */
typedef int (*common_dir_fn)(void *arg, int fd, const struct stat *st, unsigned level);

/* Opens PATH relative to DFD (AT_FDCWD, or an open directory with PATH
 * ".") and calls FN(ARG, ...) for it and for each directory above it, up
 * to and including the root. Returns the first nonzero value FN returned,
 * else 0: FN said 0 everywhere, or a directory could not be opened or
 * stat'ed (the walk stops there, silently: what cannot be looked at
 * cannot be compared). Opens at most two descriptors at a time and
 * closes them; changes nothing. */
int common_dir_walk_up(int dfd, const char *path, common_dir_fn fn, void *arg);

#endif
