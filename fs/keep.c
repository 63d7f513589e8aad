/* keep.c -- the daemon's cached copies of remote results (keep.h). */
#include "fs/fs.h"
#include "fs/counters.h"
#include "fs/keep.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes the copy from a child process with a store handle of its own,
 * opened through the pinned files (pin.h), and waits for it: LMDB keeps a
 * write transaction's pages on its own free list for the next one, so a
 * copy of N bytes written here would leave the daemon N bytes bigger for
 * good; the child's go with it. The child only writes the copy (its store
 * handle is its own: store_open() in a child never shares the parent's
 * environment), hands its code back in a shared page (it must not log:
 * another thread may have held stdio's lock at the fork) and leaves with
 * _exit(). Returns the store's code, or -1 when there is no child (no
 * pinned files, fork() failed): the caller writes in-process then. */
static int put_in_child(struct ofs *fs, const char *key, const char *etag, const store_meta *m,
                        const void *data, uint64_t len)
{
    int status, rc = STORE_ELMDB;
    pid_t pid = -1, w;
    int *out = MAP_FAILED;
    if (fs->pin.held && fs->pin.files[0])
        out = mmap(NULL, sizeof *out, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (out != MAP_FAILED)
        *out = STORE_ELMDB; /* until the child's store says (0 would be success) */
    if (out == MAP_FAILED || (pid = fork()) < 0) {
        if (out != MAP_FAILED)
            munmap(out, sizeof *out);
        return -1;
    }
    if (pid == 0) {
        store *st;
        *out = store_open(&st, fs->pin.files, STORE_NOSYNC | STORE_NOWAKE);
        if (*out == 0) {
            *out = store_put_cached(st, fs->ns, key, data, (size_t)len, m, etag, NULL);
            store_close(st);
        }
        _exit(0);
    }
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    /* Not its exit status: a tool (valgrind's leak check at exit) may set
     * that for a child that wrote its code. */
    if (w == pid && WIFEXITED(status))
        rc = *out;
    munmap(out, sizeof *out);
    return rc;
}

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
    int rc = len >= OFS_KEEP_CHILD_MIN ? put_in_child(fs, key, etag, &m, data, len) : -1;
    if (rc == -1)
        rc = store_put_cached(fs->st, fs->ns, key, data, (size_t)len, &m, etag, NULL);
    if (rc == 0)
        ofs_count(&fs->count.cache_copies, 1);
    else if (fs->debug)
        fuse_log(FUSE_LOG_DEBUG, "offloadfs: no cached copy of '%s': %s\n", key, store_strerror(rc));
    return rc == 0;
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
