/* mreader.c -- readers through a real offloadfs mount, for the fault and
 * load tests. Every value was written by loadwriter or churn (content.h),
 * so any bytes read can be checked without asking the writers.
 *
 *   mreader load MNT MAX_RESULT STOPFILE
 *       until STOPFILE exists: list the mount (no name twice in one pass),
 *       open and read a few listed names whole, in random-sized pieces, and
 *       check every byte (I1); a listed name that has gone since answers
 *       ENODATA, never ENOENT and never other bytes (I5); a never-written
 *       name answers ENOENT.
 *   mreader final MNT MAX_RESULT LOG...
 *       after the writers: every key a writer's LOG acknowledged reads back
 *       exactly (own keys: the last acknowledged value; shared keys: one of
 *       the acknowledged values), or answers ENODATA (evicted or removed);
 *       never ENOENT; a key whose last acknowledged call was a removal does
 *       not read back; the listing holds only acknowledged keys.
 *   mreader hold MNT KEY STOPFILE
 *       until STOPFILE exists: keep a handle on KEY and read random pieces
 *       of it; every piece must be bytes of the version the handle was
 *       opened on (no torn read) or fail with ENODATA (then reopen).
 *   mreader split MNT STORE PREFIX N
 *       a deterministic version of the next: one listing pass split around
 *       a write (see mode_split); prints what it saw, exit 1 when a name
 *       was listed twice.
 *   mreader readdir MNT STOPFILE PREFIX N
 *       until STOPFILE exists: list the mount in passes, slowly; in each
 *       pass no name may appear twice and each of PREFIX0000..PREFIX(N-1)
 *       (kept live throughout by the writer) exactly once.
 *
 * Prints a summary line; one line per violation on stderr. Exit 0 when no
 * violation was seen, 1 otherwise, 2 on usage errors.
 */
#include "agentlink/agentlink.h"
#include "content.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int violations;
static uint64_t rng = 88172645463325252ull;
static uint64_t max_result;

static uint64_t next(void)
{
    rng = ct_mix(rng);
    return rng;
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
    va_list ap;
    if (violations++ > 50)
        return;
    fputs("mreader: VIOLATION: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* A name listed twice or missed in one readdir pass: a known daemon bug
 * (doc/faults.md), counted apart so the scripts can gate it. */
static int rd_violations;
static void rd_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rd_bad(const char *fmt, ...)
{
    va_list ap;
    if (rd_violations++ > 20)
        return;
    fputs("mreader: READDIR VIOLATION: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int stopped(const char *stopfile)
{
    return access(stopfile, F_OK) == 0;
}

static void pause_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The bytes a value with this header must hold once stored: the value
 * itself, or its cut when it was longer than max_result_bytes. */
static unsigned char *expected(const char *key, uint64_t seed, uint64_t len, size_t *outlen)
{
    size_t n;
    unsigned char *orig = ct_make(key, seed, (size_t)len, &n);
    void *cut = NULL;
    size_t cutlen;
    if (!orig)
        return NULL;
    if (n != len) {
        free(orig);
        return NULL;
    }
    if (len <= max_result) {
        *outlen = n;
        return orig;
    }
    if (al_cut(orig, n, max_result, &cut, &cutlen)) {
        free(orig);
        return NULL;
    }
    free(orig);
    *outlen = cutlen;
    return cut;
}

enum { V_OK, V_GONE, V_BAD };

/* Reads the open file FD (named NAME) whole in random pieces and checks it.
 * *SEED gets the value's seed. Returns V_OK, V_GONE (ENODATA) or V_BAD. */
static int verify_fd(int fd, const char *name, uint64_t *seed, uint64_t *bytes)
{
    struct stat sb;
    unsigned char *buf, *want;
    size_t got = 0, wantlen;
    char key[256], xa[8];
    uint64_t len;
    ssize_t r;
    if (fstat(fd, &sb)) {
        if (errno == ENODATA)
            return V_GONE;
        bad("fstat '%s': %s", name, strerror(errno));
        return V_BAD;
    }
    if (!(buf = malloc((size_t)sb.st_size + 1)))
        abort();
    while (got <= (size_t)sb.st_size) {
        size_t piece = 1 + (size_t)(next() % 300000);
        r = pread(fd, buf + got, piece > (size_t)sb.st_size + 1 - got ? (size_t)sb.st_size + 1 - got : piece,
                  (off_t)got);
        if (r < 0) {
            int e = errno;
            free(buf);
            if (e == ENODATA)
                return V_GONE;
            bad("read '%s' at %zu: %s", name, got, strerror(e));
            return V_BAD;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got != (size_t)sb.st_size) {
        bad("'%s': read %zu bytes, st_size %jd", name, got, (intmax_t)sb.st_size);
        free(buf);
        return V_BAD;
    }
    if (ct_parse(buf, got, key, seed, &len)) {
        bad("'%s': no header in %zu bytes", name, got);
        free(buf);
        return V_BAD;
    }
    if (strcmp(key, name)) {
        bad("'%s' holds the value of key '%s'", name, key);
        free(buf);
        return V_BAD;
    }
    if (!(want = expected(key, *seed, len, &wantlen))) {
        bad("'%s': cannot rebuild seed %" PRIu64 " len %" PRIu64, name, *seed, len);
        free(buf);
        return V_BAD;
    }
    if (wantlen != got || memcmp(want, buf, got)) {
        size_t i = 0;
        while (i < got && i < wantlen && want[i] == buf[i])
            i++;
        bad("'%s' (seed %" PRIu64 "): %zu bytes, want %zu; first difference at %zu", name,
            *seed, got, wantlen, i);
        free(want);
        free(buf);
        return V_BAD;
    }
    /* The attributes agree with the bytes. */
    r = fgetxattr(fd, "user.offload.truncated", xa, sizeof xa - 1);
    if (r < 0 && errno == ENODATA) {
        free(want);
        free(buf);
        return V_GONE;
    }
    if (r != 1 || xa[0] != (len > max_result ? '1' : '0')) {
        bad("'%s': user.offload.truncated is wrong for %" PRIu64 " bytes", name, len);
        free(want);
        free(buf);
        return V_BAD;
    }
    *bytes += got;
    free(want);
    free(buf);
    return V_OK;
}

/* Opens MNT/NAME and verifies it. Returns V_OK, V_GONE, V_BAD, or -ENOENT
 * style: *ERR gets the open errno (0 when it opened). */
static int verify_name(const char *mnt, const char *name, uint64_t *seed, uint64_t *bytes, int *err)
{
    char path[4096];
    int fd, v;
    snprintf(path, sizeof path, "%s/%s", mnt, name);
    *err = 0;
    if ((fd = open(path, O_RDONLY)) < 0) {
        *err = errno;
        return errno == ENODATA ? V_GONE : V_BAD;
    }
    v = verify_fd(fd, name, seed, bytes);
    close(fd);
    return v;
}

/* ---- names of one listing pass ------------------------------------------- */
struct names {
    char **v;
    size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
    memset(ns, 0, sizeof *ns);
}

/* Lists MNT once into NS (sorted); SLOW_EVERY > 0 pauses every that many
 * entries. Reports a name seen twice. Returns 0, or -1 when opendir failed. */
static int list_pass(const char *mnt, struct names *ns, unsigned slow_every)
{
    DIR *d = opendir(mnt);
    struct dirent *de;
    size_t k = 0;
    if (!d) {
        bad("opendir '%s': %s", mnt, strerror(errno));
        return -1;
    }
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (de->d_type != DT_REG)
            bad("'%s' listed with d_type %d", de->d_name, de->d_type);
        if (ns->n == ns->cap) {
            ns->cap = ns->cap ? 2 * ns->cap : 1024;
            if (!(ns->v = realloc(ns->v, ns->cap * sizeof *ns->v)))
                abort();
        }
        ns->v[ns->n++] = strdup(de->d_name);
        if (slow_every && ++k % slow_every == 0)
            pause_us(2000);
        errno = 0;
    }
    if (errno)
        bad("readdir '%s': %s", mnt, strerror(errno));
    closedir(d);
    if (ns->n)
        qsort(ns->v, ns->n, sizeof *ns->v, cmp_str);
    for (size_t i = 1; i < ns->n; i++)
        if (!strcmp(ns->v[i], ns->v[i - 1]))
            rd_bad("'%s' listed twice in one readdir pass", ns->v[i]);
    return 0;
}

static int has_name(const struct names *ns, const char *name)
{
    return ns->n && bsearch(&name, ns->v, ns->n, sizeof *ns->v, cmp_str) != NULL;
}

/* ---- modes --------------------------------------------------------------- */
static int mode_load(const char *mnt, const char *stopfile)
{
    uint64_t passes = 0, reads = 0, gone = 0, bytes = 0, never = 0;
    char path[4096];
    struct stat sb;
    rng ^= (uint64_t)getpid();
    while (!stopped(stopfile)) {
        struct names ns = {0};
        if (list_pass(mnt, &ns, 0))
            break;
        passes++;
        for (int i = 0; i < 8 && ns.n; i++) {
            const char *name = ns.v[next() % ns.n];
            uint64_t seed;
            int err, v = verify_name(mnt, name, &seed, &bytes, &err);
            if (v == V_GONE)
                gone++;
            else if (v == V_OK)
                reads++;
            else if (err)
                bad("open of listed '%s': %s (want success or ENODATA)", name, strerror(err));
        }
        snprintf(path, sizeof path, "%s/never-written-%d-%" PRIu64, mnt, getpid(), passes % 64);
        if (stat(path, &sb) == 0 || errno != ENOENT)
            bad("never-written '%s': %s (want ENOENT)", path, strerror(errno));
        else
            never++;
        names_free(&ns);
    }
    printf("reader %d: passes %" PRIu64 " verified %" PRIu64 " (%" PRIu64 " bytes) enodata %" PRIu64
           " enoent-ok %" PRIu64 " readdir_violations %d violations %d\n", getpid(), passes, reads,
           bytes, gone, never, rd_violations, violations);
    return violations ? 1 : 0;
}

struct key_state {
    char *key;
    int last_rm;      /* own keys: the last call was a removal */
    int own;
    uint64_t *seeds;  /* acknowledged seeds, in order */
    size_t nseeds;
};

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const struct key_state *)a)->key, ((const struct key_state *)b)->key);
}

static int mode_final(const char *mnt, int nlogs, char **logs)
{
    struct key_state *ks = NULL;
    size_t nk = 0, cap = 0;
    uint64_t live = 0, gone = 0, bytes = 0;
    char line[1024];
    for (int i = 0; i < nlogs; i++) {
        FILE *f = fopen(logs[i], "r");
        if (!f) {
            bad("cannot read log '%s'", logs[i]);
            continue;
        }
        while (fgets(line, sizeof line, f)) {
            char op[8], key[300];
            uint64_t seed = 0;
            if (sscanf(line, "%7s %299s %" SCNu64, op, key, &seed) < 2 || !strcmp(op, "err"))
                continue;
            struct key_state *k = NULL;
            for (size_t j = 0; j < nk; j++) /* logs are small: a few thousand lines */
                if (!strcmp(ks[j].key, key)) {
                    k = &ks[j];
                    break;
                }
            if (!k) {
                if (nk == cap) {
                    cap = cap ? 2 * cap : 256;
                    if (!(ks = realloc(ks, cap * sizeof *ks)))
                        abort();
                }
                k = &ks[nk++];
                memset(k, 0, sizeof *k);
                k->key = strdup(key);
                k->own = key[0] == 'w';
            }
            if (!strcmp(op, "rm")) {
                k->last_rm = 1;
                continue;
            }
            k->last_rm = 0;
            if (!(k->seeds = realloc(k->seeds, (k->nseeds + 1) * sizeof *k->seeds)))
                abort();
            k->seeds[k->nseeds++] = seed;
        }
        fclose(f);
    }
    if (nk)
        qsort(ks, nk, sizeof *ks, cmp_key);
    for (size_t j = 0; j < nk; j++) {
        struct key_state *k = &ks[j];
        uint64_t seed;
        int err, v = verify_name(mnt, k->key, &seed, &bytes, &err);
        if (v == V_GONE) {
            gone++;
            continue;
        }
        if (v != V_OK) {
            if (err)
                bad("acknowledged key '%s': %s (want its bytes or ENODATA)", k->key, strerror(err));
            continue;
        }
        live++;
        if (k->own && k->last_rm)
            bad("'%s' was removed last, yet reads back (seed %" PRIu64 ")", k->key, seed);
        else if (k->own && (!k->nseeds || k->seeds[k->nseeds - 1] != seed))
            bad("'%s' holds seed %" PRIu64 ", not its last acknowledged write", k->key, seed);
        else if (!k->own) {
            size_t i = 0;
            while (i < k->nseeds && k->seeds[i] != seed)
                i++;
            if (i == k->nseeds)
                bad("'%s' holds seed %" PRIu64 ", never acknowledged", k->key, seed);
        }
    }
    /* The listing holds acknowledged keys only, each readable. */
    struct names ns = {0};
    list_pass(mnt, &ns, 0);
    for (size_t i = 0; i < ns.n; i++) {
        struct key_state k = {.key = ns.v[i]};
        if (!nk || !bsearch(&k, ks, nk, sizeof *ks, cmp_key))
            bad("'%s' is listed but no writer acknowledged it", ns.v[i]);
    }
    for (int i = 0; i < 16; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/never-%d", mnt, i);
        if (stat(path, &sb) == 0 || errno != ENOENT)
            bad("never-written '%s': %s (want ENOENT)", path, strerror(errno));
    }
    printf("final: %zu acknowledged keys: %" PRIu64 " live and byte-exact (%" PRIu64
           " bytes), %" PRIu64 " evicted or removed (ENODATA), %zu listed, violations %d\n",
           nk, live, bytes, gone, ns.n, violations);
    names_free(&ns);
    for (size_t j = 0; j < nk; j++) {
        free(ks[j].key);
        free(ks[j].seeds);
    }
    free(ks);
    return violations ? 1 : 0;
}

static int mode_hold(const char *mnt, const char *key, const char *stopfile)
{
    char path[4096];
    uint64_t pieces = 0, gone = 0, opens = 0, versions = 0, short_then_enodata = 0;
    ino_t last_ino = 0;
    snprintf(path, sizeof path, "%s/%s", mnt, key);
    rng ^= (uint64_t)getpid();
    while (!stopped(stopfile)) {
        unsigned char hdr[512], buf[65536];
        char k[256];
        uint64_t seed, len;
        struct stat sb;
        int fd = open(path, O_RDONLY);
        ssize_t r;
        if (fd < 0) {
            if (errno != ENODATA)
                bad("open '%s': %s", path, strerror(errno));
            pause_us(1000);
            continue;
        }
        opens++;
        if (fstat(fd, &sb) || (r = pread(fd, hdr, sizeof hdr, 0)) < 0) {
            if (errno != ENODATA)
                bad("first read of '%s': %s", path, strerror(errno));
            gone++;
            close(fd);
            continue;
        }
        if (sb.st_ino != last_ino) {
            versions++;
            last_ino = sb.st_ino;
        }
        if (ct_parse(hdr, (size_t)r, k, &seed, &len) || strcmp(k, key) || len != (uint64_t)sb.st_size) {
            bad("'%s': bad header (%zd bytes, st_size %jd)", path, r, (intmax_t)sb.st_size);
            close(fd);
            continue;
        }
        /* Random pieces of this version, with pauses so that rewrites and
         * evictions land between them. */
        for (int i = 0; i < 40 && !stopped(stopfile); i++) {
            uint64_t off = next() % (len + 100);
            size_t want = 1 + (size_t)(next() % sizeof buf);
            /* A short read is allowed (the kernel fills the page cache in
             * several requests; one failing after the version went ends the
             * read early), but the next read must then fail with ENODATA:
             * an early end of file would silently truncate the value. */
            size_t exp = off >= len ? 0 : (len - off < want ? (size_t)(len - off) : want), got = 0;
            int gone_now = 0;
            while (got < exp || (exp == 0 && got == 0)) {
                r = pread(fd, buf + got, want - got, (off_t)(off + got));
                if (r < 0 && errno == ENODATA) {
                    gone_now = 1;
                    if (got)
                        short_then_enodata++;
                    break;
                }
                if (r < 0) {
                    bad("read '%s' at %" PRIu64 ": %s", path, off + got, strerror(errno));
                    break;
                }
                if (r == 0)
                    break;
                got += (size_t)r;
            }
            r = (ssize_t)got;
            if (gone_now) {
                gone++;
                if (!got)
                    break;
            } else if (got != exp) {
                bad("'%s' at %" PRIu64 ": end of file after %zu bytes, want %zu (value is %"
                    PRIu64 " bytes)", path, off, got, exp, len);
                break;
            }
            size_t hl = (size_t)((unsigned char *)memchr(hdr, '\n', sizeof hdr) - hdr) + 1;
            for (size_t j = 0; j < (size_t)r; j++) {
                uint64_t at = off + j;
                unsigned char w = at < hl ? hdr[at] : ct_byte(seed, at);
                if (buf[j] != w) {
                    bad("torn read: '%s' seed %" PRIu64 " byte %" PRIu64 " differs", path, seed, at);
                    break;
                }
            }
            pieces++;
            if (gone_now)
                break;
            if (next() % 4 == 0)
                pause_us((long)(next() % 3000));
        }
        close(fd);
    }
    printf("hold '%s': %" PRIu64 " opens, %" PRIu64 " versions, %" PRIu64 " pieces checked, %" PRIu64
           " ENODATA (%" PRIu64 " after a short read), violations %d\n", key, opens, versions,
           pieces, gone, short_then_enodata, violations);
    return violations ? 1 : 0;
}

static int mode_readdir(const char *mnt, const char *stopfile, const char *prefix, unsigned n)
{
    uint64_t passes = 0, names = 0;
    while (!stopped(stopfile)) {
        struct names ns = {0};
        if (list_pass(mnt, &ns, 200))
            break;
        passes++;
        names += ns.n;
        for (unsigned i = 0; i < n; i++) {
            char k[300];
            snprintf(k, sizeof k, "%s%04u", prefix, i);
            if (!has_name(&ns, k))
                rd_bad("pass %" PRIu64 ": '%s', live throughout, is missing", passes, k);
        }
        names_free(&ns);
    }
    printf("readdir: %" PRIu64 " passes, %" PRIu64 " names, violations %d\n", passes, names,
           rd_violations + violations);
    return violations || rd_violations ? 1 : 0;
}

/* ---- split: one readdir pass split around a change, deterministically -- */
struct dents {
    char **v;
    size_t n;
};

/* Reads one getdents64 batch of at most BUFSZ bytes from FD into D.
 * Returns the number of names read (0: end). */
static size_t dents_batch(int fd, struct dents *d, size_t bufsz)
{
    char buf[65536];
    long n = syscall(SYS_getdents64, fd, buf, bufsz < sizeof buf ? bufsz : sizeof buf);
    size_t got = 0;
    if (n < 0) {
        bad("getdents64: %s", strerror(errno));
        return 0;
    }
    for (long off = 0; off < n;) {
        struct linux_dirent64 {
            uint64_t d_ino;
            int64_t d_off;
            unsigned short d_reclen;
            unsigned char d_type;
            char d_name[];
        } *e = (void *)(buf + off);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (!(d->v = realloc(d->v, (d->n + 1) * sizeof *d->v)))
                abort();
            d->v[d->n++] = strdup(e->d_name);
            got++;
        }
        off += e->d_reclen;
    }
    return got;
}

static size_t dents_all(int fd, struct dents *d)
{
    size_t n = 0, k;
    while ((k = dents_batch(fd, d, 65536)) > 0)
        n += k;
    return n;
}

/* Checks that D holds each of PREFIX000000..PREFIX(N-1) exactly once (the
 * names that lived throughout), and no name twice. Frees D. */
static int dents_check(struct dents *d, const char *what, const char *prefix, size_t n)
{
    size_t dups = 0, missing = 0;
    if (d->n)
        qsort(d->v, d->n, sizeof *d->v, cmp_str);
    for (size_t i = 1; i < d->n; i++)
        if (!strcmp(d->v[i], d->v[i - 1]) && dups++ < 3)
            fprintf(stderr, "mreader: %s: '%s' listed twice\n", what, d->v[i]);
    for (size_t i = 0; i < n; i++) {
        char k[300];
        const char *kp = k;
        snprintf(k, sizeof k, "%s%06zu", prefix, i);
        if ((!d->n || !bsearch(&kp, d->v, d->n, sizeof *d->v, cmp_str)) && missing++ < 3)
            fprintf(stderr, "mreader: %s: '%s' missing\n", what, k);
    }
    printf("%s: %zu names in the pass, %zu listed twice, %zu of %zu missing\n", what, d->n,
           dups, missing, n);
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    d->v = NULL;
    d->n = 0;
    return dups || missing ? 1 : 0;
}

static void dents_drop(struct dents *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    free(d->v);
    *d = (struct dents){0};
}

/* The mount MNT shows store STORE holding PREFIX000000..PREFIX(N-1). While
 * one handle is half-way through a pass, a name that sorts before all of
 * them is added (variants 0, 1) or removed (2, 3); in variants 1 and 3
 * another lister lists the whole directory before the pass goes on. The
 * first part of the pass comes from the kernel's cached listing of an
 * earlier pass. Every PREFIX name lives throughout, so each must appear
 * exactly once. Returns the number of variants that got it wrong. */
static int mode_split(const char *mnt, const char *storedir, const char *prefix, size_t n)
{
    static const char *const what[] = {
        "name added mid-pass", "name added mid-pass, another lister in between",
        "name removed mid-pass", "name removed mid-pass, another lister in between"};
    al_store *h;
    int fails = 0;
    if (al_store_open(&h, storedir, NULL, NULL, NULL)) {
        bad("cannot open store '%s'", storedir);
        return 1;
    }
    for (int variant = 0; variant < 4; variant++) {
        struct dents d = {0}, other = {0};
        char path[4096], key[32];
        int removing = variant >= 2, fd;
        snprintf(key, sizeof key, "0-mid-pass-%d", variant);
        snprintf(path, sizeof path, "%s/%s", mnt, key);
        if (removing) { /* the name to remove, there before the pass */
            if (al_store_put(h, key, "x", 1, NULL, NULL, NULL))
                bad("put '%s' failed", key);
            for (int i = 0; i < 200 && access(path, F_OK); i++)
                pause_us(10000);
        }
        pause_us(100000);
        fd = open(mnt, O_RDONLY | O_DIRECTORY); /* an earlier pass, cached */
        dents_all(fd, &other);
        close(fd);
        dents_drop(&other);
        fd = open(mnt, O_RDONLY | O_DIRECTORY);
        dents_batch(fd, &d, 4096); /* the first part of the pass */
        if (removing ? al_store_remove(h, key, NULL) : al_store_put(h, key, "x", 1, NULL, NULL, NULL))
            bad("%s '%s' failed", removing ? "rm" : "put", key);
        for (int i = 0; i < 200 && (access(path, F_OK) == 0) == removing; i++)
            pause_us(10000);
        pause_us(100000); /* the daemon has dropped the kernel's listing by now */
        if (variant % 2) {
            int fd2 = open(mnt, O_RDONLY | O_DIRECTORY);
            dents_all(fd2, &other);
            close(fd2);
            dents_drop(&other);
        }
        dents_all(fd, &d);
        close(fd);
        for (size_t i = 0; i < d.n; i++) /* the changing name may or may not be listed */
            if (!strcmp(d.v[i], key)) {
                free(d.v[i]);
                d.v[i] = d.v[--d.n];
                break;
            }
        fails += dents_check(&d, what[variant], prefix, n);
        if (!removing)
            al_store_remove(h, key, NULL);
    }
    al_store_close(h);
    return fails;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "split"))
        return mode_split(argv[2], argv[3], argv[4], (size_t)strtoul(argv[5], NULL, 10)) ? 1 : 0;
    if (argc >= 5 && !strcmp(argv[1], "load")) {
        max_result = strtoull(argv[3], NULL, 10);
        return mode_load(argv[2], argv[4]);
    }
    if (argc >= 5 && !strcmp(argv[1], "final")) {
        max_result = strtoull(argv[3], NULL, 10);
        return mode_final(argv[2], argc - 4, argv + 4);
    }
    if (argc == 5 && !strcmp(argv[1], "hold"))
        return mode_hold(argv[2], argv[3], argv[4]);
    if (argc == 6 && !strcmp(argv[1], "readdir"))
        return mode_readdir(argv[2], argv[3], argv[4], (unsigned)strtoul(argv[5], NULL, 10));
    fprintf(stderr, "usage: mreader load MNT MAX_RESULT STOPFILE | final MNT MAX_RESULT LOG... |\n"
                    "       hold MNT KEY STOPFILE | readdir MNT STOPFILE PREFIX N |\n"
                    "       split MNT STORE PREFIX N\n");
    return 2;
}
