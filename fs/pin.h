/* pin.h -- opening and pinning the store directory (pin.c). Used by main.c. */
#ifndef OFFLOADFS_FS_PIN_H
#define OFFLOADFS_FS_PIN_H

#include "fs/fs.h"

/* Opens the store directory named GIVEN (as given on the command line) and
 * pins its files, as fs/pin.c says (the privilege model). Run by root: the
 * path is walked without letting the kernel follow a link, and every
 * directory and link on it must belong to root or to the store directory's
 * owner; lock.mdb and data.mdb must be regular files of that owner with one
 * link (a missing lock.mdb is created as the owner); P->files is then a
 * private directory of links to exactly those files. Run by anyone else:
 * the directory is opened as given and P->files is P->dir. Fills ABS
 * (PATH_MAX bytes) with the directory's real path, for messages. A missing
 * data.mdb is not an error here (store_open() says STORE_ENOSTORE).
 * Returns 0, or 1 with the reason (the subject first) in WHY (LEN bytes)
 * and nothing held. On success call ofs_pin_release() once the store is
 * open, and ofs_pin_close() at the end. */
int ofs_pin_open(struct ofs_pin *p, const char *given, char *abs, char *why, size_t len);

/* Removes the private directory of links and closes the files' pins: LMDB
 * holds its own descriptors once the store is open. P->files becomes
 * P->dir. Keeps the directory. Safe to call again. */
void ofs_pin_release(struct ofs_pin *p);

/* ofs_pin_release(), and closes the directory. Safe on a zero-filled pin
 * and to call again. */
void ofs_pin_close(struct ofs_pin *p);

#endif
