/* bucket.c -- the in-memory server's state: buckets of objects kept sorted
 * by key (so a listing is a walk from a binary search), the faults and the
 * counters, under one process-wide lock. Objects are immutable versions
 * shared by reference: a GET reads one without the lock while a PUT
 * replaces it, as a server serves an old version to a reader already
 * under way. A test program is one server, so the state is global here;
 * no program but a test links this file. */
#include "remote/mem/mem_int.h"
#include "common/array.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slot {
    char *key;
    mem_obj *o;
} slot;

typedef struct rule {
    remote_mem_fault f; /* name and replace point into copies below */
    char *name;
    void *replace;
    unsigned seen;
} rule;

struct remote_mem {
    char name[64];
    int live;
    int reverse;
    slot *v;
    size_t n, cap;
    rule *rules;
    size_t nrules;
    unsigned long req[REMOTE_MEM_OPS];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static remote_mem **buckets; /* never freed: a test may keep a pointer */
static size_t nbuckets;

void remote_mem_lock(void) { pthread_mutex_lock(&lock); }
void remote_mem_unlock(void) { pthread_mutex_unlock(&lock); }

static remote_mem *find_any(const char *name)
{
    for (size_t i = 0; i < nbuckets; i++)
        if (strcmp(buckets[i]->name, name) == 0)
            return buckets[i];
    return NULL;
}

remote_mem *remote_mem_find(const char *name)
{
    remote_mem *m = find_any(name);
    return m && m->live ? m : NULL;
}

/* ---- objects ---------------------------------------------------------- */
static uint64_t fnv64(const unsigned char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

mem_obj *remote_mem_obj_new(const void *data, unsigned char *owned, size_t len, const remote_meta *meta,
                            int64_t mtime, unsigned parts)
{
    mem_obj *o = calloc(1, sizeof *o);
    if (!o) {
        free(owned);
        return NULL;
    }
    o->refs = 1;
    o->data = owned ? owned : malloc(len + 1);
    if (o->data && !owned && len)
        memcpy(o->data, data, len);
    o->len = len;
    o->mtime = mtime ? mtime : (int64_t)time(NULL);
    if (meta) {
        o->tool = meta->tool ? strdup(meta->tool) : NULL;
        o->call_id = meta->call_id ? strdup(meta->call_id) : NULL;
        o->size = meta->size;
        o->created = meta->created > 0 ? meta->created : 0;
    }
    if (!o->data || (meta && ((meta->tool && !o->tool) || (meta->call_id && !o->call_id)))) {
        o->refs = 1;
        remote_mem_obj_unref(o);
        return NULL;
    }
    /* The same bytes, the same ETag (S3's is their MD5; a multipart
     * upload's, a hash of the parts' with "-PARTS"). */
    char parts_s[16] = "";
    if (parts)
        snprintf(parts_s, sizeof parts_s, "-%u", parts);
    snprintf(o->etag, sizeof o->etag, "\"%016llx%016llx%s\"",
             (unsigned long long)fnv64(o->data, len, 1469598103934665603ull),
             (unsigned long long)fnv64(o->data, len, 0x84222325cbf29ce4ull) ^ len, parts_s);
    return o;
}

static void obj_free(mem_obj *o)
{
    free(o->data);
    free(o->tool);
    free(o->call_id);
    free(o);
}

void remote_mem_obj_unref(mem_obj *o)
{
    if (!o)
        return;
    remote_mem_lock();
    unsigned left = --o->refs;
    remote_mem_unlock();
    if (!left)
        obj_free(o);
}

/* The index of KEY in M, or where it would go (*FOUND 0). */
static size_t find_key(const remote_mem *m, const char *key, int *found)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->v[mid].key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

mem_obj *remote_mem_obj_ref(remote_mem *m, const char *key)
{
    int found;
    size_t i = find_key(m, key, &found);
    if (!found)
        return NULL;
    m->v[i].o->refs++;
    return m->v[i].o;
}

int remote_mem_obj_set(remote_mem *m, const char *key, mem_obj *o)
{
    int found;
    size_t i = find_key(m, key, &found);
    if (found) {
        mem_obj *old = m->v[i].o;
        m->v[i].o = o;
        if (--old->refs == 0)
            obj_free(old); /* no reader holds it: freed under the lock, which obj_free never takes */
        return 0;
    }
    slot *v = common_array_grow(m->v, m->n, &m->cap, sizeof *v, 64);
    if (!v)
        return ENOMEM;
    m->v = v;
    char *k = strdup(key);
    if (!k)
        return ENOMEM;
    memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof *m->v);
    m->v[i].key = k;
    m->v[i].o = o;
    m->n++;
    return 0;
}

static void slot_drop(remote_mem *m, size_t i)
{
    free(m->v[i].key);
    if (--m->v[i].o->refs == 0)
        obj_free(m->v[i].o);
}

void remote_mem_obj_del(remote_mem *m, const char *key)
{
    int found;
    size_t i = find_key(m, key, &found);
    if (!found)
        return;
    slot_drop(m, i);
    memmove(m->v + i, m->v + i + 1, (m->n - i - 1) * sizeof *m->v);
    m->n--;
}

int remote_mem_obj_list(remote_mem *m, const char *prefix, const char *after, unsigned max,
                        mem_entry **out, size_t *n, int *more)
{
    size_t plen = strlen(prefix), cnt = 0;
    mem_entry *v = calloc(max ? max : 1, sizeof *v);
    *out = NULL;
    *n = 0;
    *more = 0;
    if (!v)
        return ENOMEM;
    for (size_t k = 0; k < m->n; k++) {
        const slot *s = &m->v[m->reverse ? m->n - 1 - k : k];
        if (strncmp(s->key, prefix, plen) != 0 || !s->key[plen])
            continue;
        if (after && (m->reverse ? strcmp(s->key, after) >= 0 : strcmp(s->key, after) <= 0))
            continue;
        if (cnt == max) {
            *more = 1;
            break;
        }
        if (!(v[cnt].key = strdup(s->key))) {
            remote_mem_entries_free(v, cnt);
            return ENOMEM;
        }
        v[cnt].size = s->o->len;
        v[cnt++].mtime = s->o->mtime;
    }
    *out = v;
    *n = cnt;
    return 0;
}

void remote_mem_entries_free(mem_entry *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].key);
    free(v);
}

int remote_mem_obj_info(const mem_obj *o, remote_info *info)
{
    memset(info, 0, sizeof *info);
    info->length = o->len;
    info->mtime = o->mtime;
    info->size = o->size < o->len ? o->len : o->size; /* as remote_info_finish() (remote/answer.c) */
    info->created = o->created ? o->created : o->mtime;
    info->etag = strdup(o->etag);
    info->tool = o->tool ? strdup(o->tool) : NULL;
    info->call_id = o->call_id ? strdup(o->call_id) : NULL;
    if (!info->etag || (o->tool && !info->tool) || (o->call_id && !info->call_id)) {
        remote_info_clear(info);
        return ENOMEM;
    }
    return 0;
}

/* ---- buckets ---------------------------------------------------------- */
static void empty(remote_mem *m)
{
    for (size_t i = 0; i < m->n; i++)
        slot_drop(m, i);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
    for (size_t i = 0; i < m->nrules; i++) {
        free(m->rules[i].name);
        free(m->rules[i].replace);
    }
    free(m->rules);
    m->rules = NULL;
    m->nrules = 0;
    memset(m->req, 0, sizeof m->req);
    m->reverse = 0;
}

remote_mem *remote_mem_bucket(const char *name)
{
    if (!name || strlen(name) >= sizeof buckets[0]->name)
        return NULL;
    remote_mem_lock();
    remote_mem *m = find_any(name);
    if (!m) {
        remote_mem **v = realloc(buckets, (nbuckets + 1) * sizeof *v);
        if (v) {
            buckets = v;
            if ((m = calloc(1, sizeof *m))) {
                snprintf(m->name, sizeof m->name, "%s", name);
                buckets[nbuckets++] = m;
            }
        }
    }
    if (m)
        m->live = 1;
    remote_mem_unlock();
    return m;
}

void remote_mem_bucket_drop(const char *name)
{
    remote_mem_lock();
    remote_mem *m = find_any(name);
    if (m) {
        empty(m);
        m->live = 0;
    }
    remote_mem_unlock();
}

void remote_mem_reset(void)
{
    remote_mem_lock();
    for (size_t i = 0; i < nbuckets; i++) {
        empty(buckets[i]);
        buckets[i]->live = 0;
    }
    remote_mem_unlock();
}

/* ---- faults and counters ---------------------------------------------- */
int remote_mem_fault_add(remote_mem *m, const remote_mem_fault *f)
{
    if (!m || !f || f->op < REMOTE_MEM_ANY || f->op >= REMOTE_MEM_OPS)
        return EINVAL;
    rule r = {*f, NULL, NULL, 0};
    if (f->name && !(r.name = strdup(f->name)))
        return ENOMEM;
    if (f->replace && !(r.replace = malloc(f->replace_len ? f->replace_len : 1))) {
        free(r.name);
        return ENOMEM;
    }
    if (f->replace && f->replace_len)
        memcpy(r.replace, f->replace, f->replace_len);
    r.f.name = r.name;
    r.f.replace = r.replace;
    remote_mem_lock();
    rule *v = realloc(m->rules, (m->nrules + 1) * sizeof *v);
    if (v) {
        m->rules = v;
        m->rules[m->nrules++] = r;
    }
    remote_mem_unlock();
    if (!v) {
        free(r.name);
        free(r.replace);
        return ENOMEM;
    }
    return 0;
}

void remote_mem_fault_clear(remote_mem *m)
{
    remote_mem_lock();
    for (size_t i = 0; i < m->nrules; i++) {
        free(m->rules[i].name);
        free(m->rules[i].replace);
    }
    free(m->rules);
    m->rules = NULL;
    m->nrules = 0;
    remote_mem_unlock();
}

void remote_mem_list_reverse(remote_mem *m, int on)
{
    remote_mem_lock();
    m->reverse = on != 0;
    remote_mem_unlock();
}

int remote_mem_attempt(const char *bucket, remote_mem_op op, const char *name, mem_act *a)
{
    memset(a, 0, sizeof *a);
    remote_mem *m = remote_mem_find(bucket);
    if (!m)
        return 0;
    m->req[op]++;
    int chosen = 0;
    for (size_t i = 0; i < m->nrules; i++) {
        rule *r = &m->rules[i];
        if ((r->f.op != REMOTE_MEM_ANY && r->f.op != op) ||
            (r->name && strncmp(name ? name : "", r->name, strlen(r->name)) != 0))
            continue;
        r->seen++;
        if (chosen || r->seen <= r->f.skip || (r->f.times && r->seen > r->f.skip + r->f.times))
            continue;
        chosen = 1;
        a->err = r->f.err;
        a->delay_ms = r->f.delay_ms;
        a->cut = r->f.cut;
        a->repeat_token = r->f.repeat_token;
        a->hook = r->f.hook;
        a->hook_arg = r->f.hook_arg;
        if (r->replace) {
            if (!(a->replace = malloc(r->f.replace_len ? r->f.replace_len : 1)))
                return ENOMEM;
            memcpy(a->replace, r->replace, r->f.replace_len);
            a->replace_len = r->f.replace_len;
        }
    }
    return 0;
}

unsigned long remote_mem_requests(const remote_mem *m, remote_mem_op op)
{
    unsigned long n = 0;
    remote_mem_lock();
    for (int i = 1; i < REMOTE_MEM_OPS; i++)
        if (op == REMOTE_MEM_ANY || op == (remote_mem_op)i)
            n += m->req[i];
    remote_mem_unlock();
    return n;
}

void remote_mem_requests_reset(remote_mem *m)
{
    remote_mem_lock();
    memset(m->req, 0, sizeof m->req);
    remote_mem_unlock();
}

/* ---- objects behind the requests' back -------------------------------- */
int remote_mem_put(remote_mem *m, const char *key, const void *data, size_t len, const remote_meta *meta,
                   int64_t mtime)
{
    mem_obj *o = remote_mem_obj_new(data, NULL, len, meta, mtime, 0);
    if (!o)
        return ENOMEM;
    remote_mem_lock();
    int rc = m->live ? remote_mem_obj_set(m, key, o) : REMOTE_ENOBUCKET;
    remote_mem_unlock();
    if (rc)
        remote_mem_obj_unref(o);
    return rc;
}

int remote_mem_get(remote_mem *m, const char *key, void **data, size_t *len, remote_info *info)
{
    int rc = 0;
    if (data)
        *data = NULL;
    remote_mem_lock();
    mem_obj *o = m->live ? remote_mem_obj_ref(m, key) : NULL;
    if (o && info)
        rc = remote_mem_obj_info(o, info); /* under the lock: remote_mem_set_mtime() writes mtime */
    remote_mem_unlock();
    if (!o)
        return REMOTE_ENOTFOUND;
    if (!rc && data) {
        if ((*data = malloc(o->len + 1))) {
            memcpy(*data, o->data, o->len);
            ((char *)*data)[o->len] = '\0';
        } else {
            rc = ENOMEM;
        }
    }
    if (len)
        *len = o->len;
    if (rc && info)
        remote_info_clear(info);
    remote_mem_obj_unref(o);
    return rc;
}

int remote_mem_set_mtime(remote_mem *m, const char *key, int64_t mtime)
{
    remote_mem_lock();
    mem_obj *o = m->live ? remote_mem_obj_ref(m, key) : NULL;
    if (o) {
        o->mtime = mtime; /* the one field changed in place: listings read it under the lock */
        o->refs--;
    }
    remote_mem_unlock();
    return o ? 0 : REMOTE_ENOTFOUND;
}

void remote_mem_remove(remote_mem *m, const char *key)
{
    remote_mem_lock();
    if (m->live)
        remote_mem_obj_del(m, key);
    remote_mem_unlock();
}

size_t remote_mem_count(const remote_mem *m)
{
    remote_mem_lock();
    size_t n = m->n;
    remote_mem_unlock();
    return n;
}
