/* errmap.c -- store and tier codes to errno values (errmap.h). */
#include "fs/errmap.h"
#include "store/store.h"
#include "tier/reader.h"

#include <errno.h>

/* A tier code's errno: the remote's answers a reader can act on keep
 * their meaning (not there, removed, that version gone); a failure of the
 * remote is EIO, as a failure of the disk would be. */
static int tier_errno(int rc)
{
    switch (rc) {
    case TIER_ENOTFOUND:
        return ENOENT;
    case TIER_ETOMB:
    case TIER_ECHANGED:
        return ENODATA;
    default: /* EFAILED, EDENIED, ENOBUCKET, ECONFIG, ENONE, EUNSENT */
        return EIO;
    }
}

int ofs_errno(int rc)
{
    if (rc >= 0)
        return rc;
    if (rc <= TIER_ERR_BASE && rc > TIER_ERR_BASE - 1000)
        return tier_errno(rc);
    switch (rc) {
    case STORE_ENOTFOUND:
    case STORE_ENAME_EMPTY:
    case STORE_ENAME_UTF8:
    case STORE_ENAME_SLASH:
    case STORE_ENAME_CTRL:
    case STORE_ENAME_DOT:
        return ENOENT;
    case STORE_ENAME_LONG:
        return ENAMETOOLONG;
    case STORE_EEVICTED:
    case STORE_EGONE:
        return ENODATA;
    case STORE_ERDONLY:
        return EROFS;
    case STORE_EREADERS:
        return EAGAIN;
    case STORE_EFULL:
        return ENOSPC;
    case STORE_ETOOBIG:
        return EFBIG;
    case STORE_ELIMITS:
        return EINVAL;
    default: /* ECORRUPT, EVERSION, ENOSTORE, ELMDB, ELOGGONE, unknown */
        return EIO;
    }
}
