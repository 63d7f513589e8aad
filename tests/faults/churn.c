/* churn.c -- the writer of the rewrite-and-evict test: one process that
 * rewrites, adds, removes and (through the byte bound) evicts entries as
 * fast as readers can follow, while keeping a known set of names live the
 * whole time, so readers through the mount can check a readdir pass.
 *
 *   churn STORE SECONDS STABLE_N MAX_TOTAL
 *
 * Names: "stable-0000".."stable-(N-1)" are live throughout (rewritten, never
 * evicted or removed); "held" is rewritten every few milliseconds (readers
 * keep handles on it); "c-00000".. come and go. Every value is
 * self-describing (content.h), of at most MAX_TOTAL / 4 bytes.
 *
 * The bound evicts the oldest entries store-wide, so a stable name would be
 * evicted in turn. The writer keeps an exact model of the store's version
 * order and sizes; before a write that would evict a stable name (or
 * "held"), it first rewrites that name (same size: no eviction of its own),
 * which makes it the newest. The model is checked against the store's own
 * figures as it goes. Prints what it did; exit 0, or 1 when the store
 * disagreed with the model or a call failed.
 */
#include "store/store.h"
#include "content.h"

#include <errno.h>

#include <time.h>
#include <unistd.h>

#define POOL 3000u /* churn names */

struct slot {
    unsigned id; /* name id */
    uint64_t size;
    int alive;
};

static struct slot *order; /* version order, oldest first */
static size_t head, tail, cap;
static size_t *pos;        /* name id -> index in order, or SIZE_MAX */
static uint64_t *sizes;    /* name id -> fixed size (stable names) */
static uint64_t live_bytes, max_total;
static unsigned nstable;
static uint64_t rng = 0x2545F4914F6CDD1Dull, seq;

static uint64_t next(void)
{
    rng = ct_mix(rng);
    return rng;
}

static int is_kept(unsigned id) /* stable names and "held" */
{
    return id <= nstable;
}

static void name_of(unsigned id, char *buf, size_t n)
{
    if (id < nstable)
        snprintf(buf, n, "stable-%04u", id);
    else if (id == nstable)
        snprintf(buf, n, "held");
    else
        snprintf(buf, n, "c-%05u", id - nstable - 1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void model_drop(unsigned id)
{
    if (pos[id] == SIZE_MAX)
        return;
    order[pos[id]].alive = 0;
    live_bytes -= order[pos[id]].size;
    pos[id] = SIZE_MAX;
}

static void model_add(unsigned id, uint64_t size)
{
    if (tail == cap) {
        /* compact the dead prefix, or grow */
        size_t n = 0;
        for (size_t i = head; i < tail; i++)
            if (order[i].alive) {
                order[n] = order[i];
                pos[order[n].id] = n;
                n++;
            }
        head = 0;
        tail = n;
        if (tail > cap / 2) {
            cap *= 2;
            if (!(order = realloc(order, cap * sizeof *order)))
                abort();
        }
    }
    order[tail] = (struct slot){id, size, 1};
    pos[id] = tail++;
    live_bytes += size;
}

/* The first kept name the store would evict to write SIZE bytes under ID,
 * or UINT_MAX when it would evict none. */
static unsigned would_evict_kept(unsigned id, uint64_t size)
{
    uint64_t bytes = live_bytes - (pos[id] != SIZE_MAX ? order[pos[id]].size : 0);
    for (size_t i = head; i < tail && bytes + size > max_total; i++) {
        if (!order[i].alive || order[i].id == id)
            continue;
        if (is_kept(order[i].id))
            return order[i].id;
        bytes -= order[i].size;
    }
    return UINT32_MAX;
}

/* Applies the store's eviction to the model. Returns how many it evicted. */
static unsigned model_evict(uint64_t need)
{
    unsigned n = 0;
    while (live_bytes + need > max_total && head < tail) {
        if (order[head].alive) {
            pos[order[head].id] = SIZE_MAX;
            live_bytes -= order[head].size;
            n++;
        }
        head++;
    }
    return n;
}

static int put(store *st, unsigned id, uint64_t size, uint64_t *evicted)
{
    char key[32];
    size_t len;
    name_of(id, key, sizeof key);
    unsigned char *v = ct_make(key, ++seq, (size_t)size, &len);
    int rc;
    if (!v)
        return ENOMEM;
    if (len != size) {
        free(v);
        return EINVAL;
    }
    rc = store_put(st, NULL, key, v, len, NULL, NULL);
    free(v);
    if (rc) {
        fprintf(stderr, "churn: put '%s': %s\n", key, store_strerror(rc));
        return rc;
    }
    model_drop(id);
    *evicted += model_evict(size);
    model_add(id, size);
    return 0;
}

int main(int argc, char **argv)
{
    store *st;
    store_limits lim;
    store_stats s;
    uint64_t puts = 0, rescues = 0, removes = 0, evicted = 0, checks = 0;
    double end, last_held = 0;
    int rc;
    if (argc != 5) {
        fprintf(stderr, "usage: churn STORE SECONDS STABLE_N MAX_TOTAL\n");
        return 2;
    }
    end = now() + atof(argv[2]);
    nstable = (unsigned)strtoul(argv[3], NULL, 10);
    max_total = strtoull(argv[4], NULL, 10);
    unsigned names = nstable + 1 + POOL;
    cap = 4 * names;
    order = calloc(cap, sizeof *order);
    pos = malloc(names * sizeof *pos);
    sizes = calloc(names, sizeof *sizes);
    if (!order || !pos || !sizes)
        return 1;
    for (unsigned i = 0; i < names; i++)
        pos[i] = SIZE_MAX;
    if ((rc = store_open(&st, argv[1], STORE_CREATE | STORE_NOSYNC))) {
        fprintf(stderr, "churn: open: %s\n", store_strerror(rc));
        return 1;
    }
    lim = (store_limits){max_total, max_total / 4, 0};
    if ((rc = store_limits_set(st, &lim, NULL)) || (rc = store_stats_get(st, &s)) || s.entries) {
        fprintf(stderr, "churn: needs a fresh store (%s)\n", store_strerror(rc));
        return 1;
    }
    /* The kept names: small stable ones, and "held" at 200 KB, all of which
     * must fit well inside the bound. */
    for (unsigned i = 0; i < nstable; i++)
        sizes[i] = 100 + next() % 700;
    sizes[nstable] = 200000;
    for (unsigned i = 0; i <= nstable; i++)
        if ((rc = put(st, i, sizes[i], &evicted)))
            return 1;
    while (now() < end) {
        unsigned id, k;
        uint64_t size;
        if (now() - last_held > 0.005) {
            id = nstable;
            last_held = now();
            size = sizes[id];
        } else if (next() % 10 == 0) {
            id = (unsigned)(next() % nstable); /* a stable rewrite */
            size = sizes[id];
        } else {
            id = nstable + 1 + (unsigned)(next() % POOL);
            size = 1000 + next() % 30000;
            if (next() % 15 == 0 && pos[id] != SIZE_MAX) {
                char key[32];
                name_of(id, key, sizeof key);
                if ((rc = store_remove(st, NULL, key))) {
                    fprintf(stderr, "churn: rm '%s': %s\n", key, store_strerror(rc));
                    return 1;
                }
                model_drop(id);
                removes++;
                continue;
            }
        }
        /* Keep the kept names alive: rewrite any the write would evict. */
        while ((k = would_evict_kept(id, size)) != UINT32_MAX) {
            if ((rc = put(st, k, sizes[k], &evicted)))
                return 1;
            rescues++;
            puts++;
        }
        if ((rc = put(st, id, size, &evicted)))
            return 1;
        puts++;
        if (puts % 64 == 0) {
            checks++;
            if ((rc = store_stats_get(st, &s)) || s.bytes != live_bytes) {
                fprintf(stderr, "churn: store holds %" PRIu64 " bytes, model %" PRIu64 "\n",
                        s.bytes, live_bytes);
                return 1;
            }
        }
        usleep(300);
    }
    store_stats_get(st, &s);
    printf("churn: %" PRIu64 " puts (%" PRIu64 " to keep stable names live), %" PRIu64
           " removes, %" PRIu64 " evictions (store: %" PRIu64 "), %" PRIu64 " live, model checks %"
           PRIu64 "\n", puts, rescues, removes, evicted, s.evictions, s.entries, checks);
    store_close(st);
    return s.bytes == live_bytes ? 0 : 1;
}
