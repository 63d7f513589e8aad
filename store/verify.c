/* verify.c -- walks LMDB's pages before LMDB trusts them (see verify.h).
 *
 * The layout below is LMDB 0.9's on-disk format on a 64-bit host (mdb.c:
 * MDB_page, MDB_node, MDB_db, MDB_meta), read with memcpy at fixed offsets
 * from a read-only mapping of data.mdb of its own, never through LMDB.
 */
#include "store/verify.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* MDB_page: pgno(8) pad(2) flags(2) lower(2) upper(2) ptrs[] */
#define PG_FLAGS 10u
#define PG_LOWER 12u
#define PG_UPPER 14u
#define PG_HDR VERIFY_PAGE_HDR
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define P_META 0x08u
/* MDB_node: lo(2) hi(2) flags(2) ksize(2) key, data */
#define NODE_HDR 8u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
/* MDB_db: pad(4) flags(2) depth(2) branch leaf overflow entries root (8 each) */
#define DB_LEN 48u
/* MDB_meta, after the page header: magic version address mapsize dbs[2]
 * last_pg txnid */
#define META_DBS 24u
#define META_LAST (META_DBS + 2 * DB_LEN)
#define META_TXNID (META_LAST + 8)
#define META_LEN (META_TXNID + 8)
/* MDB_meta's first fields: magic(4) version(4) */
#define META_MAGIC 0xBEEFC0DEu
#define META_VERSION 1u
#define MIN_PSIZE 512u
#define MAX_PSIZE 65536u
#define MAX_DEPTH 32u /* LMDB's CURSOR_STACK */
#define MAX_KEY 511u
#define NUM_METAS 2u
#define NO_ROOT UINT64_MAX /* P_INVALID */

enum tree { T_FREE, T_MAIN, T_NAMED };

typedef struct db_rec {
    unsigned flags, depth;
    uint64_t root;
} db_rec;

typedef struct vctx {
    const unsigned char *map;
    uint64_t psize, last; /* page size; last page of the snapshot */
    unsigned char *seen;  /* one bit per page: claimed once already */
    uint16_t *ends;       /* per 2-byte slot of a page: end / 2 of the node
                           * starting there, 0 for none; zero between pages */
    const char *const *names;
    unsigned nnames;
    unsigned maxlevel; /* named trees are walked this deep (1: roots only) */
    db_rec named[16]; /* catalog records found, in NAMES order */
    unsigned char found[16];
    char *why;
    size_t whylen;
} vctx;

static uint16_t u16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Records why the snapshot is refused; returns STORE_ECORRUPT. */
static int bad(vctx *v, uint64_t pgno, const char *fmt, ...)
{
    if (v->why && v->whylen) {
        va_list ap;
        int n = snprintf(v->why, v->whylen, "page %llu: ", (unsigned long long)pgno);
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < v->whylen)
            vsnprintf(v->why + n, v->whylen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return STORE_ECORRUPT;
}

static void db_read(const unsigned char *p, db_rec *d)
{
    d->flags = u16(p + 4);
    d->depth = u16(p + 6);
    d->root = u64(p + 40);
}

/* Claims N pages from PGNO: each must lie in the snapshot and be claimed
 * by nothing else. */
static int claim(vctx *v, uint64_t pgno, uint64_t n, uint64_t from)
{
    if (pgno < NUM_METAS || n == 0 || pgno > v->last || n - 1 > v->last - pgno)
        return bad(v, from, "refers to page %llu (+%llu), outside the file",
                   (unsigned long long)pgno, (unsigned long long)n);
    for (uint64_t p = pgno; p < pgno + n; p++) {
        if (v->seen[p >> 3] & (1u << (p & 7)))
            return bad(v, from, "refers to page %llu, already in use",
                       (unsigned long long)p);
        v->seen[p >> 3] |= (unsigned char)(1u << (p & 7));
    }
    return 0;
}

/* Pages an overflow value of SIZE bytes spans (LMDB's OVPAGES). */
static uint64_t ov_pages(vctx *v, uint64_t size)
{
    return (PG_HDR - 1 + size) / v->psize + 1;
}

/* A free-list record: count, then that many page numbers, descending. */
static int free_record(vctx *v, const unsigned char *d, uint64_t dsize, uint64_t from)
{
    uint64_t n, prev = UINT64_MAX;
    int rc;
    if (dsize < 8 || dsize % 8)
        return bad(v, from, "free-list record of %llu bytes", (unsigned long long)dsize);
    n = u64(d);
    if (n > dsize / 8 - 1)
        return bad(v, from, "free-list record counts %llu pages in %llu bytes",
                   (unsigned long long)n, (unsigned long long)dsize);
    for (uint64_t i = 1; i <= n; i++) {
        uint64_t pg = u64(d + 8 * i);
        if (pg >= prev)
            return bad(v, from, "free-list record out of order");
        if ((rc = claim(v, pg, 1, from)))
            return rc;
        prev = pg;
    }
    return 0;
}

/* A catalog record: a named database we know, with flags 0. */
static int catalog_record(vctx *v, const unsigned char *key, unsigned ksize,
                          const unsigned char *d, uint64_t from)
{
    for (unsigned i = 0; i < v->nnames; i++)
        if (strlen(v->names[i]) == ksize && memcmp(v->names[i], key, ksize) == 0) {
            if (v->found[i])
                return bad(v, from, "database '%s' twice in the catalog", v->names[i]);
            v->found[i] = 1;
            db_read(d, &v->named[i]);
            return 0;
        }
    return bad(v, from, "catalog names a database that is not the store's");
}

/* One leaf node of tree KIND, whose header is at N (inside page PG), its
 * extent in the page already checked (spans()). */
static int leaf_node(vctx *v, enum tree kind, const unsigned char *n, uint64_t pg)
{
    unsigned flags = u16(n + 4), ksize = u16(n + 6);
    uint64_t dsize = u16(n) | (uint64_t)u16(n + 2) << 16;
    const unsigned char *key = n + NODE_HDR, *d = key + ksize;
    if (kind == T_MAIN) {
        if (flags != F_SUBDATA || dsize != DB_LEN)
            return bad(v, pg, "catalog node is not a database record");
        return catalog_record(v, key, ksize, d, pg);
    }
    if (flags & ~F_BIGDATA)
        return bad(v, pg, "leaf node flags 0x%x", flags);
    if (kind == T_FREE && ksize != 8)
        return bad(v, pg, "free-list key of %u bytes", ksize);
    if (!(flags & F_BIGDATA))
        return kind == T_FREE ? free_record(v, d, dsize, pg) : 0;
    uint64_t ov = u64(d), npages = ov_pages(v, dsize);
    int rc = claim(v, ov, npages, pg);
    if (rc || kind != T_FREE)
        return rc;
    return free_record(v, v->map + ov * v->psize + PG_HDR, dsize, pg);
}

static int walk(vctx *v, enum tree kind, uint64_t pg, unsigned level, unsigned depth);

/* Bytes the node at N takes in its page, before rounding up to even. */
static uint64_t node_len(const unsigned char *n, int branch)
{
    uint64_t dsize = u16(n) | (uint64_t)u16(n + 2) << 16;
    if (branch)
        return NODE_HDR + u16(n + 6);
    return NODE_HDR + u16(n + 6) + (u16(n + 4) & F_BIGDATA ? 8 : dsize);
}

/* Checks that the NKEYS nodes of page P lie between UPPER and the page's
 * end and that no two overlap: LMDB packs them, and deleting a node whose
 * size reaches into its neighbour makes LMDB move bytes past the page
 * (mdb_node_del). Before any node is followed. With the nodes placed by
 * offset in v->ends, a walk from UPPER jumps from each node to its end and
 * steps over free slots: it meets every node exactly when none starts
 * inside another, in time linear in the nodes of a packed page. */
static int spans(vctx *v, const unsigned char *p, uint64_t pg, unsigned nkeys,
                 unsigned upper, int branch)
{
    unsigned i, met = 0, at = upper / 2;
    int rc = 0;
    for (i = 0; i < nkeys && !rc; i++) {
        unsigned off = u16(p + PG_HDR + 2 * i);
        uint64_t len;
        if (off < upper)
            rc = bad(v, pg, "node %u at offset %u, below the free space", i, off);
        else if (off & 1 || off > v->psize - NODE_HDR || u16(p + off + 6) > MAX_KEY
                 || (len = node_len(p + off, branch)) > v->psize - off)
            rc = bad(v, pg, "node at offset %u runs past the page", off);
        else if (v->ends[off / 2])
            rc = bad(v, pg, "two nodes at offset %u", off);
        else
            v->ends[off / 2] = (uint16_t)((off + len + 1) / 2);
    }
    while (!rc && met < nkeys && at < v->psize / 2)
        if (v->ends[at]) {
            at = v->ends[at];
            met++;
        } else
            at++;
    if (!rc && met < nkeys)
        rc = bad(v, pg, "%u of its %u nodes overlap others", nkeys - met, nkeys);
    while (i--) {
        unsigned off = u16(p + PG_HDR + 2 * i);
        if (off < v->psize)
            v->ends[off / 2] = 0;
    }
    return rc;
}

/* One node of page P (page number PG), at offset OFF. */
static int node(vctx *v, enum tree kind, const unsigned char *p, uint64_t pg,
                unsigned off, int branch, unsigned level, unsigned depth)
{
    const unsigned char *n = p + off;
    if (!branch)
        return leaf_node(v, kind, n, pg);
    uint64_t child = u16(n) | (uint64_t)u16(n + 2) << 16 | (uint64_t)u16(n + 4) << 32;
    int rc = claim(v, child, 1, pg);
    if (rc || (kind == T_NAMED && level >= v->maxlevel))
        return rc;
    return walk(v, kind, child, level + 1, depth);
}

/* Checks page PG at LEVEL (1 = root) of a tree of DEPTH, then its nodes. */
static int walk(vctx *v, enum tree kind, uint64_t pg, unsigned level, unsigned depth)
{
    const unsigned char *p = v->map + pg * v->psize;
    int branch = level < depth;
    unsigned flags = u16(p + PG_FLAGS), lower = u16(p + PG_LOWER), upper = u16(p + PG_UPPER);
    unsigned nkeys, minkeys = branch ? (kind == T_FREE ? 1 : 2) : 1;
    int rc;
    if (u64(p) != pg)
        return bad(v, pg, "page says it is page %llu", (unsigned long long)u64(p));
    if (flags != (branch ? P_BRANCH : P_LEAF))
        return bad(v, pg, "%s page has flags 0x%x", branch ? "branch" : "leaf", flags);
    if (lower < PG_HDR || lower & 1 || upper < lower || upper > v->psize)
        return bad(v, pg, "bounds %u..%u", lower, upper);
    nkeys = (lower - PG_HDR) / 2;
    if (nkeys < minkeys) /* LMDB frees an emptied leaf, and a root with it */
        return bad(v, pg, "%s page with %u keys", branch ? "branch" : "leaf", nkeys);
    if ((rc = spans(v, p, pg, nkeys, upper, branch)))
        return rc;
    for (unsigned i = 0; i < nkeys; i++)
        if ((rc = node(v, kind, p, pg, u16(p + PG_HDR + 2 * i), branch, level, depth)))
            return rc;
    return 0;
}

/* Walks the tree described by D. */
static int tree(vctx *v, enum tree kind, const db_rec *d, const char *name)
{
    if (d->root == NO_ROOT)
        return d->depth == 0 ? 0 : bad(v, 0, "empty '%s' with depth %u", name, d->depth);
    if (d->depth == 0 || d->depth > MAX_DEPTH)
        return bad(v, d->root, "'%s' has depth %u", name, d->depth);
    int rc = claim(v, d->root, 1, 0);
    return rc ? rc : walk(v, kind, d->root, 1, d->depth);
}

/* Checks the meta page of snapshot TXNID and walks every tree from it. */
static int snapshot(vctx *v, const unsigned char *meta, uint64_t filesize)
{
    db_rec freedb, main;
    int rc;
    v->psize = u32(meta + META_DBS);
    v->last = u64(meta + META_LAST);
    db_read(meta + META_DBS, &freedb);
    db_read(meta + META_DBS + DB_LEN, &main);
    if (v->last >= filesize / v->psize)
        return bad(v, 0, "meta says the file has %llu pages, it has %llu",
                   (unsigned long long)v->last + 1, (unsigned long long)(filesize / v->psize));
    if (freedb.flags != MDB_INTEGERKEY || main.flags != 0)
        return bad(v, 0, "core database flags 0x%x, 0x%x", freedb.flags, main.flags);
    if ((rc = tree(v, T_FREE, &freedb, "free list")) || (rc = tree(v, T_MAIN, &main, "catalog")))
        return rc;
    for (unsigned i = 0; i < v->nnames; i++) {
        if (!v->found[i])
            continue;
        if (v->named[i].flags != 0)
            return bad(v, 0, "database '%s' has flags 0x%x", v->names[i], v->named[i].flags);
        if ((rc = tree(v, T_NAMED, &v->named[i], v->names[i])))
            return rc;
    }
    return 0;
}

/* Begins a read transaction and copies its meta page into META, read twice
 * the same and naming that transaction (a writer two commits ahead rewrites
 * the page in place). FD reads the two meta pages, which exist in any file
 * LMDB opened. */
static int pin_snapshot(vctx *v, MDB_env *env, int fd, MDB_txn **txn,
                        unsigned char meta[META_LEN])
{
    uint64_t id = 0;
    for (int tries = 0; tries < 1000; tries++) {
        unsigned char again[META_LEN];
        off_t at = 0;
        int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, txn);
        if (rc)
            return rc == MDB_INVALID || rc == MDB_CORRUPTED ? STORE_ECORRUPT : rc;
        id = mdb_txn_id(*txn);
        at = (off_t)((id & 1) * v->psize + PG_HDR);
        if (pread(fd, meta, META_LEN, at) == META_LEN && u64(meta + META_TXNID) == id
            && pread(fd, again, META_LEN, at) == META_LEN && !memcmp(meta, again, META_LEN))
            return 0;
        mdb_txn_abort(*txn);
    }
    /* A writer cannot commit twice between two lines a thousand times in a
     * row: the meta page names another transaction than the lock file. */
    return bad(v, id & 1, "meta page is not that of transaction %llu", (unsigned long long)id);
}

/* Walks the snapshot TXN pinned, with META its meta page: the file is
 * measured and mapped only now, so it holds every page of the snapshot
 * (LMDB writes them before the meta page that names them). */
static int walk_pinned(vctx *v, int fd, const unsigned char *meta)
{
    struct stat sb;
    void *map;
    int rc;
    if (fstat(fd, &sb))
        return errno;
    map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return errno;
    v->map = map;
    v->seen = calloc((size_t)sb.st_size / v->psize / 8 + 1, 1);
    v->ends = calloc(v->psize / 2, sizeof *v->ends);
    rc = v->seen && v->ends ? snapshot(v, meta, (uint64_t)sb.st_size) : ENOMEM;
    free(v->seen);
    free(v->ends);
    v->seen = NULL;
    v->ends = NULL;
    munmap(map, (size_t)sb.st_size);
    return rc;
}

int store_verify_env(MDB_env *env, const char *const *names, unsigned nnames, int full,
                     char *why, size_t whylen)
{
    vctx v = {.names = names, .nnames = nnames, .why = why, .whylen = whylen,
              .maxlevel = full ? MAX_DEPTH : 1};
    unsigned char meta[META_LEN];
    mdb_filehandle_t fd;
    MDB_stat ms;
    MDB_txn *txn;
    struct stat sb;
    int rc;
    if (nnames > sizeof v.found)
        return EINVAL;
    if (why && whylen)
        why[0] = '\0';
    if (mdb_env_get_fd(env, &fd) || mdb_env_stat(env, &ms) || fstat(fd, &sb))
        return STORE_ECORRUPT;
    if (ms.ms_psize < 512 || (uint64_t)sb.st_size < NUM_METAS * ms.ms_psize)
        return bad(&v, 0, "page size %u, file of %lld bytes", ms.ms_psize, (long long)sb.st_size);
    v.psize = ms.ms_psize;
    if ((rc = pin_snapshot(&v, env, fd, &txn, meta)))
        return rc;
    rc = u32(meta + META_DBS) != ms.ms_psize ? bad(&v, 0, "meta page size differs")
                                            : walk_pinned(&v, fd, meta);
    mdb_txn_abort(txn);
    return rc;
}

/* The page size the meta page at OFF of FD names: 0 when there is no
 * meta page there (LMDB judges that: a new or foreign file), 1 when it names
 * an impossible one, else the size. */
static uint64_t meta_psize(int fd, off_t off)
{
    unsigned char m[PG_HDR + META_DBS + 4];
    uint32_t ps;
    if (pread(fd, m, sizeof m, off) != (ssize_t)sizeof m || !(u16(m + PG_FLAGS) & P_META)
        || u32(m + PG_HDR) != META_MAGIC || u32(m + PG_HDR + 4) != META_VERSION)
        return 0;
    ps = u32(m + PG_HDR + META_DBS);
    return ps < MIN_PSIZE || ps > MAX_PSIZE || (ps & (ps - 1)) ? 1 : ps;
}

int store_verify_header(const char *datafile)
{
    int fd = open(datafile, O_RDONLY | O_CLOEXEC), rc = 0;
    uint64_t first, second;
    if (fd < 0)
        return 0; /* LMDB says what is wrong */
    first = meta_psize(fd, 0);
    if (first == 1)
        rc = STORE_ECORRUPT;
    else if (first && (second = meta_psize(fd, (off_t)first)) && second != first)
        rc = STORE_ECORRUPT;
    close(fd);
    return rc;
}

const void *store_verify_map_base(const void *inpage, size_t psize)
{
    const unsigned char *page;
    if (!inpage || psize != (size_t)sysconf(_SC_PAGESIZE))
        return NULL;
    page = (const unsigned char *)((uintptr_t)inpage & ~(uintptr_t)(psize - 1));
    return page - u64(page) * psize;
}

int store_verify_value_page(const void *data, size_t size, const void *base, size_t mapsize,
                            size_t psize)
{
    uintptr_t at = (uintptr_t)data - (uintptr_t)base;
    const unsigned char *hdr = (const unsigned char *)data - PG_HDR;
    /* Only a value at offset 16 of a page of the map is on an overflow
     * page: a small value sits inside its leaf, and a page this transaction
     * wrote is a private copy outside the map. */
    if (!base || (uintptr_t)data < (uintptr_t)base || at >= mapsize || at % psize != PG_HDR)
        return 0;
    if (u16(hdr + PG_FLAGS) != P_OVERFLOW || u64(hdr) != at / psize
        || u32(hdr + PG_LOWER) != (PG_HDR - 1 + size) / psize + 1)
        return STORE_ECORRUPT;
    return 0;
}
