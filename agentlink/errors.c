/* errors.c -- the AL_E* codes: translation from the store's codes (the
 * one place that translates), their messages, and removal reasons. */
#include "agentlink/internal.h"
#include "store/store.h"

/* The AL_E* codes that mirror the store's sit at the same offset, so the
 * translation is arithmetic; these checks keep the two headers in step. */
_Static_assert(AL_ENOTFOUND - AL_ERR_BASE == STORE_ENOTFOUND - STORE_ERR_BASE, "ENOTFOUND");
_Static_assert(AL_EEVICTED - AL_ERR_BASE == STORE_EEVICTED - STORE_ERR_BASE, "EEVICTED");
_Static_assert(AL_ETOOBIG - AL_ERR_BASE == STORE_ETOOBIG - STORE_ERR_BASE, "ETOOBIG");
_Static_assert(AL_ENOSTORE - AL_ERR_BASE == STORE_ENOSTORE - STORE_ERR_BASE, "ENOSTORE");
_Static_assert(AL_ELIMITS - AL_ERR_BASE == STORE_ELIMITS - STORE_ERR_BASE, "ELIMITS");
_Static_assert(AL_ELMDB - AL_ERR_BASE == STORE_ELMDB - STORE_ERR_BASE, "ELMDB");
_Static_assert(AL_ENAME_EMPTY - AL_ERR_BASE == STORE_ENAME_EMPTY - STORE_ERR_BASE, "ENAME_EMPTY");
_Static_assert(AL_ENAME_DOT - AL_ERR_BASE == STORE_ENAME_DOT - STORE_ERR_BASE, "ENAME_DOT");

/* Store codes live in (STORE_ERR_BASE - 40, STORE_ERR_BASE); ours go on
 * below that at AL_ERR_BASE - 40. */
#define MIRRORED 40

int al_err_from_store(int rc)
{
    if (rc < STORE_ERR_BASE && rc > STORE_ERR_BASE - MIRRORED)
        return AL_ERR_BASE + (rc - STORE_ERR_BASE);
    return rc;
}

int al_err_is_name(int err)
{
    return err <= AL_ENAME_EMPTY && err >= AL_ENAME_DOT;
}

const char *al_strerror(int err)
{
    switch (err) {
    case AL_ENOSTORE: return "no store there yet (agentlink init or a first write creates it)";
    case AL_EEVICTED: return "was evicted or removed";
    case AL_ECONFIG: return "offload policy refused";
    case AL_ESIZE: return "expected a size: a whole number of bytes >= 1, optionally followed by K, M or G";
    case AL_ETOOL: return "tool name must be 1 to 255 bytes of UTF-8 without control characters";
    case AL_EMOUNT: return "mount must be an absolute path";
    case AL_ELIMITS: return "limits refused: each must be at least 64 bytes, max_total_bytes at "
                            "most 16 TiB, and max_result_bytes no more than max_total_bytes";
    case AL_ENOTMOUNT: return "is not a path directly under the mount";
    case AL_EMOUNT_NONE: return "no offloadfs mount there says which store it serves";
    case AL_EMOUNT_OTHER: return "the mount serves another store or namespace";
    case AL_EUPLOAD: return "stored here, but not yet on the remote: pending (agentlink sync sends it)";
    case AL_EREMOTE: return "the remote refused or failed";
    case AL_EUNREACHABLE: return "the store's remote could not be reached or refused, so the answer is unknown";
    default: break;
    }
    if (err < AL_ERR_BASE && err > AL_ERR_BASE - MIRRORED)
        return store_strerror(STORE_ERR_BASE + (err - AL_ERR_BASE));
    if (err > 0 || err == 0)
        return store_strerror(err);
    return "unknown agentlink error";
}

const char *al_reason_name(int reason)
{
    return reason == AL_REASON_REMOVED ? "removed" : "evicted";
}
