/* lookup.c -- one answer for every reader: a key the local store does not
 * hold live is asked of the store's remote through tier/, in the mount's
 * order (fs/ops.c do_lookup, fs/lookup.c): live here, else the remote's
 * object, else a tombstone (here or there), else never written.
 *
 * Why it is shaped so:
 * - The local answer comes first and costs no request; only a name that
 *   is not live here reaches the network, so a store without a remote, or
 *   a key live here, behaves exactly as before.
 * - A removal made here whose tombstone is still pending is this host's
 *   answer ("removed") without asking: the remote still holds the object
 *   only because it could not be told yet.
 * - A remote that cannot answer is its own error (AL_EUNREACHABLE): a
 *   reader must not be told "evicted" (run the tool again) or "never
 *   written" for a result that may well be there.
 * - Bytes come as the daemon fetches them: the first OFS-sized piece with
 *   the lookup (one round trip for small results), the rest pinned to the
 *   lookup's ETag, so a result replaced meanwhile is never a mix of two. */
#include "agentlink/internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "tier/tier.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bytes fetched with the lookup itself; the rest in one more GET. */
#define FIRST_BYTES (1024u * 1024u)
/* A result replaced between the two GETs is looked up again, this often. */
#define CHANGED_TRIES 3

static void entry_from_info(al_entry *e, const remote_info *in)
{
    if (!e)
        return;
    memset(e, 0, sizeof *e);
    e->size = in->length;
    e->created_ns = (uint64_t)(in->created > 0 ? in->created : 0) * 1000000000u;
    e->original_size = in->size;
    e->truncated = in->size > in->length;
    if (in->tool && strlen(in->tool) < sizeof e->tool) {
        e->has_tool = 1;
        memcpy(e->tool, in->tool, strlen(in->tool) + 1);
    }
    e->where = AL_WHERE_REMOTE;
}

/* The tombstone's time into E (reason "removed": only rm, drop-referenced
 * and gc write tombstones on the remote). When its HEAD fails, a local
 * tombstone already in E (LOCAL_RC AL_EEVICTED) stays. */
static void entry_from_remote_tomb(al_tier *at, const char *ns, const char *key, int local_rc,
                                   al_entry *e)
{
    int64_t when = 0;
    int rc = tier_tomb_get(al_tier_tier(at), al_tier_conn(at), ns, key, &when);
    if (!e || (rc && local_rc == AL_EEVICTED))
        return;
    memset(e, 0, sizeof *e);
    e->gone_ns = (uint64_t)(when > 0 ? when : 0) * 1000000000u;
    e->gone_reason = AL_REASON_REMOVED;
}

/* The remote's error RC as the caller's code: AL_EUNREACHABLE (the
 * connection's message recorded), or ENOMEM. */
static int unreachable(al_tier *at, int rc)
{
    if (rc == ENOMEM)
        return ENOMEM;
    al_tier_fail(at, rc);
    return AL_EUNREACHABLE;
}

/* Opens the tier of ST for a read. Returns 1 when the remote is to be
 * asked (then *ATP is usable), 0 when the local answer RC stands (no
 * remote, or a removal here not yet sent), or a negative/errno code in
 * *ERR. */
static int ask_remote(store *st, al_tier **tp, const char *ns, const char *key, int rc,
                      const al_entry *e, int *err)
{
    int has = 0;
    *err = 0;
    if (rc != AL_ENOTFOUND && rc != AL_EEVICTED)
        return 0;
    int urc = al_tier_use(st, tp, &has);
    if (urc) {
        /* The remote's configuration is unusable: the answer is unknown. */
        *err = urc == AL_EREMOTE ? AL_EUNREACHABLE : urc;
        return 0;
    }
    if (!has)
        return 0;
    if (rc == AL_EEVICTED && e && e->gone_reason == AL_REASON_REMOVED &&
        tier_tomb_pending(al_tier_tier(*tp), ns, key))
        return 0;
    return 1;
}

int al_tier_find(store *st, al_tier **tp, const char *ns, const char *key, int rc, al_entry *e,
                 void **data, size_t *len)
{
    int err;
    if (!ask_remote(st, tp, ns, key, rc, e, &err))
        return err ? err : rc;
    al_tier *at = *tp;
    for (int tries = 0;; tries++) {
        remote_info in;
        common_buf b = {0};
        uint64_t got = 0;
        int r = tier_lookup_first(al_tier_tier(at), al_tier_conn(at), ns, key,
                                  data ? FIRST_BYTES : 0, common_buf_sink, &b, &got, &in);
        if (r == 0 && data && in.length > got)
            r = tier_get(al_tier_tier(at), al_tier_conn(at), ns, key, in.etag, got,
                         in.length - got, common_buf_sink, &b, NULL);
        if (r == 0 && data && (b.failed || b.len != in.length))
            r = b.failed ? ENOMEM : REMOTE_ECHANGED; /* a short body: ask again */
        if (r == 0) {
            entry_from_info(e, &in);
            if (data) {
                common_buf_addc(&b, '\0'); /* the NUL after the bytes; never NULL */
                if (b.failed) {
                    remote_info_clear(&in);
                    common_buf_release(&b);
                    return ENOMEM;
                }
                *data = b.p;
                *len = b.len - 1;
                al_cache_keep(st, ns, key, b.p, b.len - 1, &in); /* read once, kept */
            }
            remote_info_clear(&in);
            return 0;
        }
        remote_info_clear(&in);
        common_buf_release(&b);
        if (r == REMOTE_ECHANGED && tries + 1 < CHANGED_TRIES)
            continue;
        if (r == REMOTE_ENOTFOUND)
            return rc; /* the remote knows nothing of it: the local answer */
        if (r == TIER_ETOMB) {
            entry_from_remote_tomb(at, ns, key, rc, e);
            return AL_EEVICTED;
        }
        return unreachable(at, r);
    }
}

int al_tier_remove_key(store *st, al_tier **tp, const char *ns, const char *key, int rc, al_entry *e)
{
    int err;
    if (!ask_remote(st, tp, ns, key, rc, e, &err))
        return err ? err : rc;
    al_tier *at = *tp;
    remote_info in;
    int r = tier_lookup(al_tier_tier(at), al_tier_conn(at), ns, key, &in);
    remote_info_clear(&in);
    if (r == REMOTE_ENOTFOUND)
        return rc;
    if (r == TIER_ETOMB) {
        entry_from_remote_tomb(at, ns, key, rc, e);
        return AL_EEVICTED;
    }
    if (r == 0)
        r = tier_remove(al_tier_tier(at), al_tier_conn(at), ns, key);
    return r ? unreachable(at, r) : 0;
}

/* ---- names only the remote holds ------------------------------------- */

static int names_add(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    al_rnames *r = arg;
    if (store_name_check(name, strlen(name)) != 0)
        return 0; /* not a key any reader could ask for */
    al_rname *v = common_array_grow(r->v, r->n, &r->cap, sizeof *v, 256);
    if (!v)
        return ENOMEM;
    r->v = v;
    if (!(r->v[r->n].name = strdup(name)))
        return ENOMEM;
    r->v[r->n].size = size;
    r->v[r->n].mtime = mtime;
    r->n++;
    return 0;
}

static int rname_cmp(const void *a, const void *b)
{
    return strcmp(((const al_rname *)a)->name, ((const al_rname *)b)->name);
}

int al_tier_names(store *st, al_tier **tp, const char *ns, al_rnames *out)
{
    int has = 0, rc = al_tier_use(st, tp, &has);
    memset(out, 0, sizeof *out);
    if (rc)
        return rc == AL_EREMOTE ? AL_EUNREACHABLE : rc;
    if (!has)
        return 0;
    al_tier *at = *tp;
    rc = tier_list(al_tier_tier(at), al_tier_conn(at), ns, NULL, names_add, out);
    if (rc) {
        al_rnames_release(out);
        return unreachable(at, rc);
    }
    /* A server need not send its keys in order: the merge with the local
     * listing needs byte order, and a name sent twice is listed once. */
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, rname_cmp);
    /* Removed here, the tombstone not yet sent: gone for this host. */
    size_t kept = 0;
    for (size_t i = 0; i < out->n; i++) {
        if ((kept > 0 && strcmp(out->v[kept - 1].name, out->v[i].name) == 0) ||
            tier_tomb_pending(al_tier_tier(at), ns, out->v[i].name))
            free(out->v[i].name);
        else
            out->v[kept++] = out->v[i];
    }
    out->n = kept;
    return 0;
}

void al_rnames_release(al_rnames *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].name);
    free(r->v);
    memset(r, 0, sizeof *r);
}

int al_rnames_emit(al_rnames *r, const char *upto, al_list_fn fn, void *ctx)
{
    while (r->next < r->n) {
        const al_rname *n = &r->v[r->next];
        int cmp = upto ? strcmp(n->name, upto) : -1;
        if (cmp > 0)
            return 0;
        r->next++;
        if (cmp == 0)
            continue; /* live here: listed with the local entry */
        al_entry e;
        memset(&e, 0, sizeof e);
        e.size = n->size;
        e.original_size = n->size;
        e.created_ns = (uint64_t)(n->mtime > 0 ? n->mtime : 0) * 1000000000u;
        e.where = AL_WHERE_REMOTE;
        int rc = fn(n->name, &e, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- streaming a result to a sink ------------------------------------- */

typedef struct stream_ctx {
    al_sink_fn fn;
    void *arg;
    uint64_t sent;
    int failed; /* the caller's sink said stop */
    common_buf copy; /* the bytes for a cached copy, while they may fit */
    uint64_t copy_max; /* most bytes a copy may have (0: none kept) */
} stream_ctx;

static int sink_stream(void *arg, const void *data, size_t n)
{
    stream_ctx *sc = arg;
    if (n && sc->fn(sc->arg, data, n)) {
        sc->failed = 1;
        return 1;
    }
    sc->sent += n;
    if (sc->copy_max && sc->sent <= sc->copy_max)
        common_buf_add(&sc->copy, data, n);
    else if (sc->copy.p || sc->copy.failed) {
        common_buf_release(&sc->copy); /* too big to keep: not kept */
        sc->copy_max = 0;
    }
    return 0;
}

/* The remote part of al_store_get_stream(): as al_tier_find(), the bytes to
 * SC as they come. */
static int stream_remote(store *st, al_tier **tp, const char *ns, const char *key, int rc,
                         al_entry *e, stream_ctx *sc)
{
    int err;
    if (!ask_remote(st, tp, ns, key, rc, e, &err))
        return err ? err : rc;
    al_tier *at = *tp;
    for (int tries = 0;; tries++) {
        remote_info in;
        uint64_t got = 0;
        int r = tier_lookup_first(al_tier_tier(at), al_tier_conn(at), ns, key, FIRST_BYTES,
                                  sink_stream, sc, &got, &in);
        if (r == 0 && in.length > sc->sent)
            r = tier_get(al_tier_tier(at), al_tier_conn(at), ns, key, in.etag, sc->sent,
                         in.length - sc->sent, sink_stream, sc, NULL);
        if (r == 0 && sc->sent != in.length)
            r = REMOTE_ECHANGED;
        if (r == 0) {
            entry_from_info(e, &in);
            if (sc->copy_max && !sc->copy.failed && sc->copy.len == in.length)
                al_cache_keep(st, ns, key, sc->copy.p ? sc->copy.p : "", sc->copy.len, &in);
        }
        common_buf_release(&sc->copy);
        remote_info_clear(&in);
        if (r == 0)
            return 0;
        if (sc->failed)
            return EIO; /* the caller's sink failed: it said why */
        if (r == REMOTE_ECHANGED && sc->sent > 0)
            return AL_EGONE; /* replaced after bytes went out: no mix of two */
        if (r == REMOTE_ECHANGED && tries + 1 < CHANGED_TRIES)
            continue;
        if (r == REMOTE_ENOTFOUND)
            return rc;
        if (r == TIER_ETOMB) {
            entry_from_remote_tomb(at, ns, key, rc, e);
            return AL_EEVICTED;
        }
        return unreachable(at, r);
    }
}

int al_store_get_stream(al_store *h, const char *key, al_sink_fn fn, void *arg, al_entry *e)
{
    store *st;
    al_tier **tp;
    al_entry tmp;
    store_entry se;
    store_tomb t;
    void *data = NULL;
    size_t len = 0;
    int rc;
    if (!h || !fn)
        return EINVAL;
    if ((rc = al_key_check(key)))
        return rc;
    if (!e)
        e = &tmp;
    memset(e, 0, sizeof *e);
    if ((rc = al_store_lock(h, 0, &st, &tp)))
        return rc;
    const char *ns = al_store_namespace(h);
    rc = store_get(st, ns, key, &data, &len, &se, &t);
    if (rc == 0 && al_cache_check(st, tp, ns, key, se.version, 1, e)) {
        free(data); /* a cached copy of a version the remote no longer holds */
        data = NULL;
        rc = STORE_ENOTFOUND;
    }
    if (rc == 0) { /* here: bounded by max_result_bytes, handed on whole */
        e->size = se.size;
        e->created_ns = se.created_ns;
        e->original_size = se.original_size;
        e->truncated = se.truncated;
        rc = len && fn(arg, data, len) ? EIO : 0;
    } else {
        if (rc == STORE_EEVICTED) {
            e->gone_ns = t.when_ns;
            e->gone_reason = t.reason == STORE_REASON_REMOVED ? AL_REASON_REMOVED : AL_REASON_EVICTED;
        }
        rc = al_err_from_store(rc);
        if (rc == AL_ENOTFOUND || rc == AL_EEVICTED) {
            store_limits lim;
            stream_ctx sc = {fn, arg, 0, 0, {0}, 0};
            if (store_limits_get(st, &lim) == 0) /* a bigger copy is not kept */
                sc.copy_max = lim.max_total_bytes / 2 < lim.max_result_bytes
                                  ? lim.max_total_bytes / 2 : lim.max_result_bytes;
            rc = stream_remote(st, tp, ns, key, rc, e, &sc);
            common_buf_release(&sc.copy);
        }
    }
    al_store_unlock(h);
    free(data);
    return rc;
}
