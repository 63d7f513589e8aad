/* handle.c -- the al_store handle over the store: open (over the settings
 * settings.c resolves), put/get/stat/list/remove, drop-referenced, offload.
 *
 * The handle's state, its lock and the store it attaches (opened lazily,
 * opened again after a replaced data file or a fork) are handle_lock.c's,
 * below this file and lookup.c, which both lock a handle.
 *
 * Uploads run without the handle's lock (tier_use.c): a write commits with
 * it held, lets it go for the upload, and takes it again to record the
 * outcome; BUSY counts those uploads. The store (which the tier reads the
 * bytes from) is closed only when none runs: a replaced data file waits
 * for them (IDLE). */
#include "agentlink/handle_lock.h"
#include "agentlink/internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/settings.h"
#include "store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *join(const char *a, const char *b)
{
    common_buf buf = {0};
    char *out = NULL;
    common_buf_adds(&buf, a);
    common_buf_adds(&buf, b);
    common_buf_detach(&buf, &out, NULL);
    return out;
}

/* *OUT = DIR made absolute against the working directory (DIR itself when
 * it is absolute), yours to free. The working directory may be gone
 * (getcwd() fails): then DIR as it is, as before any chdir(). */
static int absolute(const char *dir, char **out)
{
    char *cwd;
    if (dir[0] == '/' || !(cwd = getcwd(NULL, 0))) {
        *out = strdup(dir);
        return *out ? 0 : ENOMEM;
    }
    *out = join(cwd, "/");
    free(cwd);
    if (*out) {
        char *full = join(*out, dir);
        free(*out);
        *out = full;
    }
    return *out ? 0 : ENOMEM;
}

int al_store_open(al_store **out, const char *dir, const char *ns,
                  const char *mount, const al_policy *pol)
{
    /* A handle may live long: it checks every page once, at open. */
    return al_store_open_checked(out, dir, ns, mount, pol, 1);
}

int al_store_open_checked(al_store **out, const char *dir, const char *ns,
                          const char *mount, const al_policy *pol, int full)
{
    common_settings set = {0};
    al_store *h = NULL;
    int rc, set_rc;
    size_t n;

    if (!out)
        return EINVAL;
    *out = NULL;
    if (dir && !*dir)
        return EINVAL;
    /* The name and the mount are refused first, whatever the store. */
    set_rc = common_settings_resolve(&set, dir, ns, mount, al_policy_common(pol));
    if ((rc = store_name_check(set.ns, strlen(set.ns)))) {
        rc = al_err_from_store(rc);
        goto done;
    }
    if (set.mount[0] != '/') {
        rc = AL_EMOUNT;
        goto done;
    }
    if ((rc = set_rc)) /* no default store: HOME unset; or ENOMEM */
        goto done;

    rc = ENOMEM;
    h = calloc(1, sizeof *h);
    if (!h)
        goto done;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->idle, NULL);
    h->verify = full ? STORE_VERIFY : 0;
    if (!(h->dir = strdup(common_settings_store(&set))) || !(h->ns = strdup(set.ns)) ||
        !(h->mount = strdup(set.mount)))
        goto fail;
    n = strlen(h->mount);
    while (n > 1 && h->mount[n - 1] == '/')
        h->mount[--n] = '\0';
    if ((rc = absolute(h->dir, &h->path)))
        goto fail;
    rc = ENOMEM;
    if (!(h->datafile = join(h->path, "/data.mdb")))
        goto fail;
    /* Open now when there is a store, so a damaged or foreign one is
     * reported at once; a missing one waits for the first write. */
    rc = al_store_attach(h, 0);
    if (rc && rc != AL_ENOSTORE)
        goto fail;
    *out = h;
    common_settings_release(&set);
    return 0;
fail:
    al_store_close(h);
done:
    common_settings_release(&set);
    return rc;
}

void al_store_close(al_store *h)
{
    if (!h)
        return;
    if (h->pid == getpid())
        al_tier_free(h->tier);
    else /* a fork's child leaves the parent's connections */
        al_tier_forget(h->tier);
    store_close(h->st);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->idle);
    free(h->dir);
    free(h->path);
    free(h->ns);
    free(h->mount);
    free(h->datafile);
    free(h);
}

int al_store_path_of(const al_store *h, const char *key, char **path)
{
    common_buf b = {0};
    int rc;
    *path = NULL;
    if ((rc = al_key_check(key)))
        return rc;
    common_buf_adds(&b, h->mount);
    if (strcmp(h->mount, "/") != 0)
        common_buf_addc(&b, '/');
    common_buf_adds(&b, key);
    return common_buf_detach(&b, path, NULL);
}

int al_store_key_of(const al_store *h, const char *ref, char **key)
{
    size_t m = strlen(h->mount);
    const char *k = ref;
    int rc;
    if (!ref || !key)
        return EINVAL;
    *key = NULL;
    if (strchr(ref, '/')) {
        if (strcmp(h->mount, "/") == 0)
            k = ref + 1;
        else if (strncmp(ref, h->mount, m) == 0 && ref[m] == '/')
            k = ref + m + 1;
        else
            return AL_ENOTMOUNT;
        if (strchr(k, '/') || !*k)
            return AL_ENOTMOUNT;
    }
    if ((rc = al_key_check(k)))
        return rc;
    *key = strdup(k);
    return *key ? 0 : ENOMEM;
}

static void entry_from(al_entry *e, const store_entry *se)
{
    if (!e)
        return;
    memset(e, 0, sizeof *e);
    e->size = se->size;
    e->created_ns = se->created_ns;
    e->original_size = se->original_size;
    e->truncated = se->truncated;
    e->has_tool = se->has_tool;
    if (se->has_tool) {
        size_t n = strnlen(se->tool, sizeof se->tool - 1);
        if (n > sizeof e->tool - 1)
            n = sizeof e->tool - 1;
        memcpy(e->tool, se->tool, n);
    }
}

static void entry_from_tomb(al_entry *e, const store_tomb *t)
{
    if (!e)
        return;
    memset(e, 0, sizeof *e);
    e->gone_ns = t->when_ns;
    e->gone_reason = t->reason == STORE_REASON_REMOVED ? AL_REASON_REMOVED : AL_REASON_EVICTED;
}

/* Writes with h->mu held. ORIG is the length of the value DATA was kept
 * from (LEN when DATA is the whole value; more when a cutter cut it).
 * *CUT gets the cut copy when the value was cut here (yours), else NULL:
 * the stored bytes are *CUT or DATA. On 0 or AL_EUPLOAD, *U is what
 * put_upload() sends (U->ref NULL: nothing) and KEY is held in flight
 * (*HELD 1: drop it after). */
static int put_locked(al_store *h, const char *key, const void *data, size_t len,
                      uint64_t orig, const char *tool, al_entry *e, void **cut,
                      size_t *stored_len, al_upload *u, int *held)
{
    store_limits lim;
    store_entry se;
    store_meta meta = {tool, 0, orig, 0};
    int rc, tries = 0;

    *cut = NULL;
    *stored_len = len;
    *held = 0;
    u->ref = NULL;
    if ((rc = al_store_attach(h, 1)))
        return rc;
    /* In flight from before the commit: a catch-up of another writer must
     * not send this version while we do (inflight.c). */
    if ((rc = al_inflight_hold(h->dev, h->ino, h->ns, key)))
        return rc;
    *held = 1;
again:
    if ((rc = store_limits_get(h->st, &lim)))
        return al_err_from_store(rc);
    free(*cut);
    *cut = NULL;
    if ((rc = al_cut(data, len, lim.max_result_bytes, cut, stored_len)))
        return rc;
    meta.truncated = *cut != NULL || orig > len;
    rc = store_put(h->st, h->ns, key, *cut ? *cut : data, *stored_len, &meta, &se);
    if (rc == STORE_ETOOBIG && tries++ < 3)
        goto again; /* the limit was lowered between our read and the write */
    if (rc) {
        free(*cut);
        *cut = NULL;
        return al_err_from_store(rc);
    }
    entry_from(e, &se);
    /* On a store with a remote: there too before returning (AL_EUPLOAD:
     * stored here and pending, everything else as for a success). */
    rc = al_tier_upload_begin(h->st, &h->tier, h->dev, h->ino, h->ns, key, se.version, u);
    if (rc == 0 && u->ref)
        h->busy++;
    return rc;
}

/* put_locked() with the lock taken for it, then the upload without the
 * lock, then the outcome recorded with it again. */
static int put_upload(al_store *h, const char *key, const void *data, size_t len,
                      uint64_t orig, const char *tool, al_entry *e, void **cut,
                      size_t *stored_len)
{
    al_upload u;
    int held;
    pthread_mutex_lock(&h->mu);
    int rc = put_locked(h, key, data, len, orig, tool, e, cut, stored_len, &u, &held);
    dev_t dev = h->dev;
    ino_t ino = h->ino;
    pthread_mutex_unlock(&h->mu);
    if (u.ref) {
        al_tier_upload_run(&u);
        pthread_mutex_lock(&h->mu);
        rc = al_tier_upload_end(h->tier, &u);
        if (--h->busy == 0)
            pthread_cond_broadcast(&h->idle);
        pthread_mutex_unlock(&h->mu);
    }
    if (held)
        al_inflight_drop(dev, ino, h->ns, key);
    return rc;
}

int al_store_put(al_store *h, const char *key, const void *data, size_t len,
                 const char *tool, al_entry *e, char **path)
{
    void *cut = NULL;
    size_t stored;
    int rc;

    if (path)
        *path = NULL;
    if (!h || (!data && len > 0))
        return EINVAL;
    if ((rc = al_key_check(key)))
        return rc;
    if (tool && (rc = al_tool_check(tool)))
        return rc;
    if (path && (rc = al_store_path_of(h, key, path)))
        return rc;
    rc = put_upload(h, key, data ? data : "", len, (uint64_t)len, tool, e, &cut, &stored);
    free(cut);
    if (rc && rc != AL_EUPLOAD && path) {
        free(*path);
        *path = NULL;
    }
    return rc;
}

int al_store_cutter(al_store *h, al_cutter **out)
{
    uint64_t max = STORE_DEFAULT_MAX_RESULT;
    int rc;
    if (!h || !out)
        return EINVAL;
    rc = al_store_max_result(h, &max, NULL);
    if (rc && rc != AL_ENOSTORE)
        return rc;
    return al_cutter_new(out, max);
}

int al_store_put_cutter(al_store *h, const char *key, al_cutter *c,
                        const char *tool, al_entry *e, char **path)
{
    const void *kept;
    void *cut = NULL;
    size_t len, stored;
    int rc;

    if (path)
        *path = NULL;
    if (!h || !c)
        return EINVAL;
    if ((rc = al_key_check(key)))
        return rc;
    if (tool && (rc = al_tool_check(tool)))
        return rc;
    if ((rc = al_cutter_finish(c, &kept, &len, NULL)))
        return rc;
    if (path && (rc = al_store_path_of(h, key, path)))
        return rc;
    rc = put_upload(h, key, kept, len, al_cutter_total(c), tool, e, &cut, &stored);
    free(cut);
    if (rc && rc != AL_EUPLOAD && path) {
        free(*path);
        *path = NULL;
    }
    return rc;
}

static int lookup_locked(al_store *h, const char *key, al_entry *e)
{
    store_entry se;
    store_tomb t;
    int rc = al_store_attach(h, 0);
    if (rc)
        return rc;
    rc = store_lookup(h->st, h->ns, key, &se, &t);
    if (rc == 0)
        entry_from(e, &se);
    else if (rc == STORE_EEVICTED)
        entry_from_tomb(e, &t);
    return al_err_from_store(rc);
}

/* al_tier_find() for KEY, whose local answer was RC, called with h->mu
 * held and returning with it held, but with it let go while the remote is
 * asked (a borrowed tier: al_tier_borrow()); the store stays open
 * meanwhile (BUSY). */
static int find_unlocked(al_store *h, const char *key, int rc, al_entry *e, void **data,
                         size_t *len)
{
    al_tier *b;
    int r = al_tier_borrow(h->st, &h->tier, &b);
    if (r)
        return r;
    if (!b) /* no remote, or unusable: answered without the network */
        return al_tier_find(h->st, &h->tier, h->ns, key, rc, e, data, len);
    store *st = h->st;
    h->busy++;
    pthread_mutex_unlock(&h->mu);
    rc = al_tier_find(st, &b, h->ns, key, rc, e, data, len);
    pthread_mutex_lock(&h->mu);
    al_tier_return(h->tier, b);
    if (--h->busy == 0)
        pthread_cond_broadcast(&h->idle);
    return rc;
}

/* al_cache_check() for live VERSION of KEY, called with h->mu held and
 * returning with it held, let go while the remote is asked, as
 * find_unlocked() does. */
static int check_unlocked(al_store *h, const char *key, uint64_t version, int hit, al_entry *e)
{
    al_tier *b;
    if (store_cached(h->st, version, NULL, 0) <= 0)
        return 0; /* written here: no remote to ask */
    int r = al_tier_borrow(h->st, &h->tier, &b);
    if (r)
        return 0; /* no memory to ask with: the copy is the answer */
    if (!b)
        return al_cache_check(h->st, &h->tier, h->ns, key, version, hit, e);
    store *st = h->st;
    h->busy++;
    pthread_mutex_unlock(&h->mu);
    r = al_cache_check(st, &b, h->ns, key, version, hit, e);
    pthread_mutex_lock(&h->mu);
    al_tier_return(h->tier, b);
    if (--h->busy == 0)
        pthread_cond_broadcast(&h->idle);
    return r;
}

/* The local answer RC for KEY (E filled), then the remote's when it is
 * not live here, or live as a cached copy of a version the remote no
 * longer holds (lookup.c, cache.c): one answer with the mount. */
static int stat_locked(al_store *h, const char *key, al_entry *e)
{
    al_entry tmp;
    store_entry se;
    int rc = lookup_locked(h, key, e ? e : &tmp);
    if (rc == 0 && store_lookup(h->st, h->ns, key, &se, NULL) == 0)
        rc = check_unlocked(h, key, se.version, 0, e ? e : &tmp);
    if (rc == AL_ENOTFOUND || rc == AL_EEVICTED)
        rc = find_unlocked(h, key, rc, e ? e : &tmp, NULL, NULL);
    return rc;
}

int al_store_stat(al_store *h, const char *key, al_entry *e)
{
    int rc;
    if (!h)
        return EINVAL;
    if ((rc = al_key_check(key)))
        return rc;
    pthread_mutex_lock(&h->mu);
    rc = stat_locked(h, key, e);
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int al_store_get(al_store *h, const char *key, void **data, size_t *len,
                 al_entry *e)
{
    store_entry se;
    store_tomb t;
    int rc;

    if (!h || !data || !len)
        return EINVAL;
    *data = NULL;
    *len = 0;
    if ((rc = al_key_check(key)))
        return rc;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 0);
    if (rc == 0) {
        al_entry tmp;
        rc = store_get(h->st, h->ns, key, data, len, &se, &t);
        if (rc == 0)
            entry_from(e, &se);
        else if (rc == STORE_EEVICTED)
            entry_from_tomb(e ? e : &tmp, &t);
        rc = al_err_from_store(rc);
        /* a cached copy serves while the remote holds its version (cache.c) */
        if (rc == 0 && (rc = check_unlocked(h, key, se.version, 1, e ? e : &tmp))) {
            free(*data);
            *data = NULL;
            *len = 0;
        }
        /* not live here: the remote's object, or its tombstone (lookup.c) */
        if (rc == AL_ENOTFOUND || rc == AL_EEVICTED)
            rc = find_unlocked(h, key, rc, e ? e : &tmp, data, len);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int al_store_remove(al_store *h, const char *key, al_entry *e)
{
    int rc;
    if (!h)
        return EINVAL;
    if ((rc = al_key_check(key)))
        return rc;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 0);
    if (rc == 0) {
        rc = al_err_from_store(store_remove(h->st, h->ns, key));
        /* Not live here: say when and why, unless the remote holds it
         * (evicted here, or another host's): then its tombstone there. */
        if (rc == AL_EEVICTED || rc == AL_ENOTFOUND) {
            al_entry tmp;
            lookup_locked(h, key, e ? e : &tmp);
            rc = al_tier_remove_key(h->st, &h->tier, h->ns, key, rc, e ? e : &tmp);
        } else if (rc == 0) /* every host must answer ENODATA: a tombstone on the remote */
            rc = al_tier_after_remove(h->st, &h->tier, h->ns, key);
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

typedef struct list_ctx {
    al_list_fn fn;
    void *ctx;
    al_rnames *remote; /* names only the remote may hold, merged in; or NULL */
} list_ctx;

static int list_cb(const char *key, size_t keylen, const store_entry *se, void *ctx)
{
    list_ctx *lc = ctx;
    al_entry e;
    (void)keylen;
    int rc = lc->remote ? al_rnames_emit(lc->remote, key, lc->fn, lc->ctx) : 0;
    if (rc)
        return rc;
    entry_from(&e, se);
    return lc->fn(key, &e, lc->ctx);
}

/* Lists the live keys here merged with the remote's names (lookup.c), in
 * byte order, with h->mu held and the store attached. A failed remote
 * listing is returned after the local keys were listed. */
static int list_merged(al_store *h, list_ctx *lc)
{
    al_rnames rn;
    int rrc = al_tier_names(h->st, &h->tier, h->ns, &rn);
    if (rrc && rrc != AL_EUNREACHABLE)
        return rrc;
    lc->remote = &rn;
    int rc = al_err_from_store(store_list(h->st, h->ns, NULL, list_cb, lc));
    if (rc == 0)
        rc = al_rnames_emit(&rn, NULL, lc->fn, lc->ctx);
    lc->remote = NULL;
    al_rnames_release(&rn);
    return rc ? rc : rrc;
}

int al_store_list(al_store *h, al_list_fn fn, void *ctx)
{
    list_ctx lc = {fn, ctx, NULL};
    int rc;
    if (!h || !fn)
        return EINVAL;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 0);
    if (rc == 0)
        rc = list_merged(h, &lc);
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int al_store_stats(al_store *h, al_stats *out)
{
    store_stats s;
    int rc;
    if (!h || !out)
        return EINVAL;
    pthread_mutex_lock(&h->mu);
    unsigned how = STORE_COMPRESS_NONE;
    rc = al_store_attach(h, 0);
    if (rc == 0)
        rc = al_err_from_store(store_stats_get(h->st, &s));
    if (rc == 0)
        rc = al_err_from_store(store_compression_get(h->st, &how));
    pthread_mutex_unlock(&h->mu);
    if (rc)
        return rc;
    out->entries = s.entries;
    out->bytes = s.bytes;
    out->max_total_bytes = s.max_total_bytes;
    out->max_result_bytes = s.max_result_bytes;
    out->evictions = s.evictions;
    out->removals = s.removals;
    out->tombstones = s.tombstones;
    out->file_bytes = s.file_bytes;
    out->stored_bytes = s.stored_bytes;
    out->compression = how == STORE_COMPRESS_ZSTD ? AL_COMPRESS_ZSTD : AL_COMPRESS_NONE;
    out->pending = s.pending;
    return 0;
}

int al_store_cache_stats(al_store *h, al_cache_stats *out)
{
    store_stats s;
    int rc;
    if (!h || !out)
        return EINVAL;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 0);
    if (rc == 0)
        rc = al_err_from_store(store_stats_get(h->st, &s));
    pthread_mutex_unlock(&h->mu);
    if (rc)
        return rc;
    out->entries = s.cached_entries;
    out->bytes = s.cached_bytes;
    out->hits = s.cache_hits;
    out->misses = s.cache_misses;
    return 0;
}

const char *al_store_remote_message(const al_store *h)
{
    return h ? al_tier_message(h->tier) : "";
}

/* Reads the store's figures into *S under the handle's lock. Returns 0 or
 * an AL_* error. */
static int stats_locked(al_store *h, store_stats *s)
{
    pthread_mutex_lock(&h->mu);
    int rc = al_store_attach(h, 0);
    if (rc == 0)
        rc = al_err_from_store(store_stats_get(h->st, s));
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int al_store_max_result(al_store *h, uint64_t *in_force, uint64_t *configured)
{
    store_stats s;
    int rc;
    if (!h)
        return EINVAL;
    if ((rc = stats_locked(h, &s)))
        return rc;
    if (in_force)
        *in_force = s.max_result_bytes;
    if (configured)
        *configured = s.max_result_configured;
    return 0;
}

int al_store_puts(al_store *h, uint64_t *puts)
{
    store_stats s;
    int rc;
    if (!h || !puts)
        return EINVAL;
    if ((rc = stats_locked(h, &s)) == 0)
        *puts = s.puts;
    return rc;
}

int al_store_set_compression(al_store *h, unsigned compression)
{
    int rc;
    if (!h || (compression != AL_COMPRESS_NONE && compression != AL_COMPRESS_ZSTD))
        return EINVAL;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 1);
    if (rc == 0)
        rc = al_err_from_store(store_compression_set(
            h->st, compression == AL_COMPRESS_ZSTD ? STORE_COMPRESS_ZSTD : STORE_COMPRESS_NONE));
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int al_store_init(al_store *h, uint64_t max_total_bytes,
                  uint64_t max_result_bytes, uint64_t *nevicted)
{
    store_limits lim = {max_total_bytes, max_result_bytes, 0};
    int rc;
    if (nevicted)
        *nevicted = 0;
    if (!h)
        return EINVAL;
    if (max_total_bytes > AL_MAX_TOTAL_LIMIT || max_result_bytes > AL_MAX_TOTAL_LIMIT
        || (max_total_bytes && max_total_bytes < AL_MIN_LIMIT)
        || (max_result_bytes && max_result_bytes < AL_MIN_LIMIT))
        return AL_ELIMITS;
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 1);
    if (rc == 0 && (max_total_bytes || max_result_bytes))
        rc = al_err_from_store(store_limits_set(h->st, &lim, nevicted));
    pthread_mutex_unlock(&h->mu);
    return rc;
}

/* ---- drop-referenced ---------------------------------------------------- */
typedef struct drop_ctx {
    const char *text;
    size_t len, plen;   /* PLEN: length of MOUNT "/" */
    size_t *pos;        /* offsets where MOUNT "/" starts */
    size_t npos, cappos;
    char **best;        /* longest live key found at each offset */
    size_t *bestlen;
    int oom;
} drop_ctx;

static int drop_cb(const char *key, const al_entry *e, void *ctx)
{
    drop_ctx *d = ctx;
    size_t kl = strlen(key);
    (void)e;
    for (size_t i = 0; i < d->npos; i++) {
        size_t at = d->pos[i] + d->plen;
        if (at + kl > d->len || kl <= d->bestlen[i] || memcmp(d->text + at, key, kl) != 0)
            continue;
        char *k = strdup(key);
        if (!k) {
            d->oom = 1;
            return ENOMEM;
        }
        free(d->best[i]);
        d->best[i] = k;
        d->bestlen[i] = kl;
    }
    return 0;
}

/* Drops KEY, not live here (the local answer RC), from the remote when it
 * holds it; E gets its entry before removal. 0, RC, AL_EEVICTED or
 * AL_EUNREACHABLE (al_tier_remove_key()). h->mu held. */
static int drop_remote(al_store *h, const char *key, int rc, al_entry *e)
{
    int r = al_tier_find(h->st, &h->tier, h->ns, key, rc, e, NULL, NULL);
    return r ? r : al_tier_remove_key(h->st, &h->tier, h->ns, key, rc, e);
}

int al_store_drop_referenced(al_store *h, const void *text, size_t len,
                             al_list_fn fn, void *ctx, size_t *ndropped)
{
    drop_ctx d = {0};
    list_ctx lc = {drop_cb, &d, NULL};
    char *prefix = NULL;
    size_t dropped = 0;
    int rc = 0, remote_rc = 0;

    if (ndropped)
        *ndropped = 0;
    if (!h || (!text && len > 0))
        return EINVAL;
    prefix = strcmp(h->mount, "/") == 0 ? strdup("/") : join(h->mount, "/");
    if (!prefix)
        return ENOMEM;
    d.text = text;
    d.len = len;
    d.plen = strlen(prefix);
    for (const char *p = text, *end = (const char *)text + len;
         p && p < end; p++) {
        p = memmem(p, (size_t)(end - p), prefix, d.plen);
        if (!p)
            break;
        size_t *np = common_array_grow(d.pos, d.npos, &d.cappos, sizeof *np, 16);
        if (!np) {
            rc = ENOMEM;
            goto cleanup;
        }
        d.pos = np;
        d.pos[d.npos++] = (size_t)(p - (const char *)text);
    }
    if (d.npos == 0)
        goto cleanup;
    d.best = calloc(d.npos, sizeof *d.best);
    d.bestlen = calloc(d.npos, sizeof *d.bestlen);
    if (!d.best || !d.bestlen) {
        rc = ENOMEM;
        goto cleanup;
    }
    pthread_mutex_lock(&h->mu);
    rc = al_store_attach(h, 0);
    if (rc == 0) /* with the remote's names: a key evicted here is removed there too */
        rc = list_merged(h, &lc);
    if (rc == AL_EUNREACHABLE) {
        remote_rc = rc; /* the keys live here still go; the error is kept */
        rc = 0;
    }
    if (rc == AL_ENOSTORE)
        rc = 0; /* no store: nothing is referenced */
    for (size_t i = 0; rc == 0 && i < d.npos; i++) {
        store_entry se;
        al_entry e;
        int r;
        if (!d.best[i])
            continue;
        /* The same key may be referenced many times: remove it once. */
        for (size_t j = i + 1; j < d.npos; j++)
            if (d.best[j] && strcmp(d.best[j], d.best[i]) == 0) {
                free(d.best[j]);
                d.best[j] = NULL;
            }
        store_tomb t;
        if ((r = al_err_from_store(store_lookup(h->st, h->ns, d.best[i], &se, &t))) != 0) {
            memset(&e, 0, sizeof e);
            if (r == AL_EEVICTED)
                entry_from_tomb(&e, &t);
            /* not live here: the remote's (lookup.c), or gone since the listing */
            if ((r = drop_remote(h, d.best[i], r, &e)) == 0) {
                dropped++;
                if (fn)
                    rc = fn(d.best[i], &e, ctx);
            } else if (r != AL_ENOTFOUND && r != AL_EEVICTED) {
                remote_rc = r;
            }
            continue;
        }
        r = store_remove(h->st, h->ns, d.best[i]);
        if (r == STORE_ENOTFOUND || r == STORE_EEVICTED)
            continue;
        if (r) {
            rc = al_err_from_store(r);
            break;
        }
        dropped++;
        entry_from(&e, &se);
        if ((r = al_tier_after_remove(h->st, &h->tier, h->ns, d.best[i])))
            remote_rc = r; /* removed here; the others still go, the error is kept */
        if (fn)
            rc = fn(d.best[i], &e, ctx);
    }
    pthread_mutex_unlock(&h->mu);
    if (rc == 0)
        rc = remote_rc;
cleanup:
    if (ndropped)
        *ndropped = dropped;
    for (size_t i = 0; d.best && i < d.npos; i++)
        free(d.best[i]);
    free(d.best);
    free(d.bestlen);
    free(d.pos);
    free(prefix);
    return rc;
}

/* ---- offload -------------------------------------------------------------- */
/* Stores LEN bytes at DATA, kept from a value of ORIG bytes, under KEY
 * (whose path is PATH) and builds the pointer text into *OUT. */
static int offload_store(al_store *h, const al_policy *pol, const char *tool,
                         const char *key, const char *path, const void *data,
                         size_t len, uint64_t orig, char **out, size_t *outlen)
{
    al_preview pv;
    al_entry e;
    void *cut = NULL;
    size_t stored;
    int rc;

    rc = put_upload(h, key, data, len, orig, tool, &e, &cut, &stored);
    if (rc && rc != AL_EUPLOAD)
        return rc;
    al_policy_preview(pol, &pv);
    /* The pointer is built from exactly the bytes handed to the store. */
    int prc = al_pointer_text(path, tool, cut ? cut : data, stored, orig, &pv, out, outlen);
    free(cut);
    if (!prc && rc == AL_EUPLOAD) /* pending: what another host answers until it is sent */
        (void)al_pointer_add_pending(out, outlen); /* no memory: the pointer without it */
    return prc ? prc : rc;
}

int al_offload(al_store *h, const al_policy *pol, const char *tool,
               const void *call_id, size_t call_id_len, const void *data,
               size_t len, char **out, size_t *outlen, int *offloaded)
{
    char *key = NULL, *path = NULL;
    int rc;

    if (offloaded)
        *offloaded = 0;
    if (!out || !h || (!data && len > 0) || (!call_id && call_id_len > 0))
        return EINVAL;
    *out = NULL;
    if (tool && (rc = al_tool_check(tool)))
        return rc;
    if (!al_policy_decide(pol, tool, data, len, NULL, NULL)) {
        char *copy = malloc(len + 1);
        if (!copy)
            return ENOMEM;
        if (len)
            memcpy(copy, data, len);
        copy[len] = '\0';
        *out = copy;
        if (outlen)
            *outlen = len;
        return 0;
    }
    if ((rc = al_key_derive(call_id, call_id_len, &key)))
        return rc;
    if ((rc = al_store_path_of(h, key, &path)))
        goto cleanup;
    rc = offload_store(h, pol, tool, key, path, data, len, (uint64_t)len, out, outlen);
    if ((rc == 0 || rc == AL_EUPLOAD) && offloaded)
        *offloaded = 1;
cleanup:
    free(path);
    free(key);
    return rc;
}

int al_offload_cutter(al_store *h, const al_policy *pol, const char *tool,
                      const void *call_id, size_t call_id_len, al_cutter *c,
                      char **out, size_t *outlen)
{
    char *key = NULL, *path = NULL;
    const void *kept;
    size_t len;
    int rc;

    if (!out || !h || !c || (!call_id && call_id_len > 0))
        return EINVAL;
    *out = NULL;
    if (tool && (rc = al_tool_check(tool)))
        return rc;
    if ((rc = al_cutter_finish(c, &kept, &len, NULL)))
        return rc;
    if ((rc = al_key_derive(call_id, call_id_len, &key)))
        return rc;
    if ((rc = al_store_path_of(h, key, &path)) == 0)
        rc = offload_store(h, pol, tool, key, path, kept, len, al_cutter_total(c), out,
                           outlen);
    free(path);
    free(key);
    return rc;
}
