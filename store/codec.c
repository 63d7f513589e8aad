/* codec.c -- the compression setting of later writes (the "codec" record;
 * the frames themselves are frame.c's). */
#include "store/store_int.h"

#include <errno.h>

int store_compression_get(store *st, unsigned *out)
{
    rec_state s;
    int rc = store_state_read(st, &s);
    if (!rc)
        *out = s.compression;
    return rc;
}

int store_compression_set(store *st, unsigned compression)
{
    rec_state s;
    tx t;
    int rc;
    if (compression != STORE_COMPRESS_NONE && compression != STORE_COMPRESS_ZSTD)
        return EINVAL;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)) || s.compression == compression)
        return store_tx_end(&t, rc);
    s.compression = compression;
    return store_tx_end(&t, store_state_save(&t, &s));
}
