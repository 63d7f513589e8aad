/* conn.h -- the mount's way to its remote (conn.c): the tier handle
 * (fs->tier), each thread's connection, the check at mount. A leaf: it
 * calls no other file of fs/. Used by main.c, ops.c, lookup.c, listing.c
 * and window.c. Everything here goes through tier/reader.h. */
#ifndef OFFLOADFS_FS_CONN_H
#define OFFLOADFS_FS_CONN_H

#include "fs/fs.h"
#include "tier/reader.h"

/* -o remote_retries=0 asks for no retry: fs->remote_retries takes this. */
#define OFS_REMOTE_NO_RETRY TIER_NO_RETRY

/* Before mounting: when the store STORE_ABS (opened through FILES: see
 * ofs_pin_open()) names a remote, checks its configuration and access
 * once (tier_check()) and says on stderr what is wrong. Returns 1
 * (nothing may be mounted) when the configuration is unusable (no
 * credentials, a bad URL or profile); 0 otherwise, also after a warning
 * for a refused access, a missing bucket or a remote that does not answer
 * (the mount serves local results and retries the remote per request). */
int ofs_conn_probe(const char *files, const char *store_abs);

/* After fs->st is open: sets fs->tier and fs->conn when the store names a
 * remote (both NULL when it names none), with fs->remote_stall and
 * fs->remote_retries as the requests' bounds, and logs the remote and its
 * bound (tier_bound_ms()). Returns 0, or an errno value after logging why
 * (the mount then runs without its remote). */
int ofs_conn_open(struct ofs *fs);

/* Releases fs->conn (this thread's connection with it; the other threads'
 * went as they ended) and fs->tier; after the session loop ended, and
 * after everything that uses them. Safe when ofs_conn_open() found no
 * remote. */
void ofs_conn_close(struct ofs *fs);

/* This thread's connection (made on first use, freed as the thread ends),
 * or NULL without a remote or memory. */
tier_conn *ofs_conn_get(struct ofs *fs);

/* What to log for failure RC of the last call on C (may be NULL): C's
 * message, or RC's description when it has none. Valid until the next
 * call on C. Never NULL. */
const char *ofs_conn_why(const tier_conn *c, int rc);

#endif
