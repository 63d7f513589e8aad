/* notify.c -- after each writing commit, the daemons serving the store are
 * woken (read-your-writes, store/wake.h) with this environment's memory of
 * those found late. Apart from wake.c so that wake.c depends on nothing of
 * the store's: it gets the path and its memory from here. */
#include "store/store_int.h"
#include "store/wake.h"

int store_wake_after_commit(store *st, int rc, uint64_t generation)
{
    if (rc == 0 && !(st->se->flags & STORE_NOWAKE))
        (void)store_wake_run(store_path(st), generation, STORE_WAKE_TIMEOUT_MS, st->se->wake, NULL);
    return rc;
}
