/* handle_lock.h -- the al_store handle's state, its lock and its store
 * (handle_lock.c): what handle.c (the API over the handle) and the files
 * beside it that lock a handle (lookup.c, sync.c, through internal.h's
 * al_store_lock()) both stand on. Private to agentlink/: the command and
 * the proxy see the handle only through agentlink.h and internal.h.
 *
 * Caveats
 * =======
 * - Every field but the ones set at open (DIR, NS, MOUNT, PATH, DATAFILE,
 *   VERIFY) is read and written with MU held.
 * - ST may be closed and opened again by al_store_attach() (a data file
 *   replaced under the handle, a fork): never keep it across an unlock,
 *   except while BUSY counts you (an upload, a remote lookup without the
 *   lock), which keeps it open until you are done. */
#ifndef OFFLOADFS_AGENTLINK_HANDLE_LOCK_H
#define OFFLOADFS_AGENTLINK_HANDLE_LOCK_H

#include "agentlink/internal.h"
#include "store/store.h"

#include <pthread.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct al_store {
    pthread_mutex_t mu;
    char *dir, *ns, *mount;
    char *path;     /* DIR, absolute: made so at open, a later chdir() must
                     * not move the handle to another store */
    char *datafile; /* PATH/data.mdb */
    store *st;      /* NULL until first needed */
    unsigned verify; /* STORE_VERIFY (library handles) or 0 (the CLI) */
    dev_t dev;
    ino_t ino;
    pid_t pid;      /* the process ST was opened in */
    al_tier *tier;  /* the remote tier (tier_use.c), NULL until a write asks */
    unsigned busy;  /* uploads and remote lookups running without MU, on ST and TIER */
    pthread_cond_t idle; /* signalled when BUSY drops to 0 */
};

/* With H->mu held: makes sure H->st is an open store on the directory's
 * current data file (opening it, or again after the data file was
 * replaced -- waiting, on H->idle, for the uploads still reading the old
 * one -- or after a fork). CREATE: a missing store is made; without it a
 * missing store is AL_ENOSTORE. Returns 0; AL_ENOSTORE; ENOTDIR (a file
 * where the directory should be); the errno of a data file stat() cannot
 * see (EACCES); store errors as AL_E* codes (al_err_from_store()). On an
 * error H->st is NULL. */
int al_store_attach(al_store *h, int create);

#pragma GCC visibility pop

#endif
