/* keep.c -- the daemon's cached copies of remote results (keep.h). */
#include "fs/fs.h"
#include "fs/counters.h"
#include "fs/keep.h"

#include <string.h>

int ofs_keep_copy(struct ofs *fs, const char *key, const char *etag, const store_entry *meta,
                  const void *data, uint64_t len)
{
    store_meta m = {0};
    uint64_t have;
    ofs_count(&fs->count.cache_misses, 1);
    if (!fs->keep || !etag[0] || strlen(etag) > STORE_ETAG_MAX)
        return 0;
    if (ofs_keep_find(fs, key, etag, &have))
        return 1;
    if (meta) {
        m.tool = meta->has_tool ? meta->tool : NULL;
        m.created_ns = meta->created_ns;
        m.original_size = meta->original_size > len ? meta->original_size : 0;
        m.truncated = meta->original_size > len;
    }
    int rc = store_put_cached(fs->st, fs->ns, key, data, (size_t)len, &m, etag, NULL);
    if (rc == 0) {
        ofs_count(&fs->count.cache_copies, 1);
        return 1;
    }
    if (fs->debug)
        fuse_log(FUSE_LOG_DEBUG, "offloadfs: no cached copy of '%s': %s\n", key, store_strerror(rc));
    return 0;
}

int ofs_keep_find(struct ofs *fs, const char *key, const char *etag, uint64_t *version)
{
    char have[STORE_ETAG_MAX + 1];
    store_entry e;
    if (store_lookup(fs->st, fs->ns, key, &e, NULL) != 0 ||
        store_cached(fs->st, e.version, have, sizeof have) != 1 || strcmp(have, etag) != 0)
        return 0;
    *version = e.version;
    return 1;
}

uint64_t ofs_keep_max(struct ofs *fs)
{
    store_limits l;
    if (!fs->keep || store_limits_get(fs->st, &l) != 0)
        return 0;
    return l.max_result_bytes < l.max_total_bytes / 2 ? l.max_result_bytes : l.max_total_bytes / 2;
}

void ofs_keep_drop(struct ofs *fs, const char *key, uint64_t version)
{
    if (fs->keep)
        (void)store_cache_drop(fs->st, fs->ns, key, version);
}
