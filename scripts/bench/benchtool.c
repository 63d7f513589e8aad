/* benchtool.c -- the C side of `make bench`: loops that a shell would
 * measure badly. Each subcommand prints one line of numbers on stdout.
 *
 *   benchtool openread DIR N          open+read+close DIR/f0000000..N-1; prints seconds
 *   benchtool readfile PATH           open+read+close PATH once; prints seconds
 *   benchtool stat DIR N SAMPLES      stat SAMPLES distinct random names of DIR/f0..N-1
 *                                     (each once: every stat is a cold lookup on a
 *                                     fresh mount); prints seconds per stat
 *   benchtool puts STORE N SIZE MODE [CORPUS]
 *                                     N library puts (MODE durable|nosync) of 'x's, or
 *                                     of successive slices of the file CORPUS; prints
 *                                     seconds p50_us p99_us
 *   benchtool files DIR N SIZE MODE   N file writes; same output. MODE nofsync: open,
 *                                     write, close; fsync: and fsync before close;
 *                                     atomic: write a temporary, fsync, rename over
 *                                     the name, fsync the directory (what an atomic,
 *                                     durable put costs with plain files)
 *   benchtool fill STORE N SIZE       bulk-load keys f0000000.. (no fsync); prints seconds
 *   benchtool churn STORE BOUND       write 10x BOUND through a store bounded at BOUND;
 *                                     prints file/bound p50_us_fill p99_us_fill
 *                                     p50_us_evict p99_us_evict
 *   benchtool put1 STORE SIZE         one put (for callgrind --toggle-collect=store_put)
 *   benchtool read1 STORE KEY LEN     one read of LEN bytes (--toggle-collect=store_read)
 *   benchtool readiov STORE KEY REQ RUNS
 *                                     the daemon's read path without FUSE: the whole
 *                                     value through store_read_iov() in REQ-byte
 *                                     requests, RUNS times (also for callgrind
 *                                     --toggle-collect=store_read_iov); prints
 *                                     seconds of the fastest run, then the median
 *   benchtool capacity STORE BOUND CORPUS
 *                                     write 10x BOUND of original bytes, slices of the
 *                                     file CORPUS of 0-4 MiB (skewed small) under 1,000
 *                                     keys, through a store bounded at BOUND (no fsync);
 *                                     prints live_bytes/bound stored/bound file/bound
 *   benchtool preads FILE N SIZE      N preads of SIZE bytes at random offsets of FILE;
 *                                     prints seconds p50_us p99_us
 *   benchtool seqread FILE SIZE       read() FILE from start to end SIZE bytes at a
 *                                     time (what sed, head and Python's line iteration
 *                                     do with small buffers); prints seconds
 * A store these make is created with compression BENCHTOOL_COMPRESSION
 * (zstd or none; none when unset: the raw path, as before compression).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "benchtool: %s: %s\n", what, store_strerror(rc));
    exit(1);
}

static unsigned long arg_num(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end == 'K') v <<= 10, end++;
    else if (*end == 'M') v <<= 20, end++;
    else if (*end == 'G') v <<= 30, end++;
    if (*end) {
        fprintf(stderr, "benchtool: bad number '%s'\n", s);
        exit(2);
    }
    return v;
}

/* open+read+close of PATH: 0, or 1 after a message. */
static int read_whole(const char *path)
{
    char buf[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    while (read(fd, buf, sizeof buf) > 0)
        ;
    close(fd);
    return 0;
}

static int cmd_openread(const char *dir, unsigned long n)
{
    char path[4096];
    double t0 = now_s();
    for (unsigned long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/f%07lu", dir, i);
        if (read_whole(path))
            return 1;
    }
    printf("%.6f\n", now_s() - t0);
    return 0;
}

static int cmd_readfile(const char *path)
{
    double t0 = now_s();
    if (read_whole(path))
        return 1;
    printf("%.6f\n", now_s() - t0);
    return 0;
}

/* A fixed pseudo-random sequence (same names every run). */
static unsigned long next_rand(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned long)(*seed >> 33);
}

static int cmd_stat(const char *dir, unsigned long n, unsigned long samples)
{
    char path[4096];
    struct stat sb;
    uint64_t seed = 1;
    unsigned long *idx = malloc(n * sizeof *idx);
    double t0;
    if (!idx || samples > n) {
        fprintf(stderr, "benchtool: stat: SAMPLES must be at most N\n");
        return 2;
    }
    /* The first SAMPLES places of a Fisher-Yates shuffle: distinct names. */
    for (unsigned long i = 0; i < n; i++)
        idx[i] = i;
    for (unsigned long i = 0; i < samples; i++) {
        unsigned long j = i + next_rand(&seed) % (n - i), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    t0 = now_s();
    for (unsigned long i = 0; i < samples; i++) {
        snprintf(path, sizeof path, "%s/f%07lu", dir, idx[i]);
        if (stat(path, &sb)) {
            perror(path);
            return 1;
        }
    }
    printf("%.9f\n", (now_s() - t0) / (double)samples);
    free(idx);
    return 0;
}

/* Opens (creating) the store in DIR with FLAGS, compression as
 * BENCHTOOL_COMPRESSION says (none when unset). */
static store *bench_open(const char *dir, unsigned flags)
{
    const char *c = getenv("BENCHTOOL_COMPRESSION");
    store *st;
    int rc;
    if ((rc = store_open(&st, dir, STORE_CREATE | flags))
        || (rc = store_compression_set(st, c && !strcmp(c, "zstd") ? STORE_COMPRESS_ZSTD
                                                                   : STORE_COMPRESS_NONE)))
        die(dir, rc);
    return st;
}

/* Reads FILE whole into a malloc'd buffer; *LEN its length. */
static unsigned char *slurp(const char *file, size_t *len)
{
    FILE *f = fopen(file, "rb");
    unsigned char *b;
    long n;
    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
        die(file, errno ? errno : EIO);
    if (!(b = malloc((size_t)n)) || fread(b, 1, (size_t)n, f) != (size_t)n)
        die(file, EIO);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* The next LEN bytes of CORPUS (NCORPUS bytes) from *AT, wrapping, in BUF. */
static void corpus_slice(const unsigned char *corpus, size_t ncorpus, size_t *at,
                         unsigned char *buf, size_t len)
{
    for (size_t done = 0; done < len;) {
        size_t n = ncorpus - *at < len - done ? ncorpus - *at : len - done;
        memcpy(buf + done, corpus + *at, n);
        done += n;
        *at = (*at + n) % ncorpus;
    }
}

static int cmd_puts(const char *dir, unsigned long n, unsigned long size, int nosync,
                    const char *corpus_file)
{
    store *st;
    char key[32];
    unsigned char *buf = malloc(size), *corpus = NULL;
    double *lat = malloc(n * sizeof *lat), t0;
    size_t ncorpus = 0, at = 0;
    int rc;
    memset(buf, 'x', size);
    if (corpus_file)
        corpus = slurp(corpus_file, &ncorpus);
    st = bench_open(dir, nosync ? STORE_NOSYNC : 0);
    t0 = now_s();
    for (unsigned long i = 0; i < n; i++) {
        if (corpus) /* outside the timing: a tool has its result in memory */
            corpus_slice(corpus, ncorpus, &at, buf, size);
        double t = now_s();
        snprintf(key, sizeof key, "k%07lu", i);
        if ((rc = store_put(st, NULL, key, buf, size, NULL, NULL)))
            die(key, rc);
        lat[i] = now_s() - t;
    }
    printf("%.6f %.1f %.1f\n", now_s() - t0, pct(lat, n, 0.5) * 1e6, pct(lat, n, 0.99) * 1e6);
    store_close(st);
    free(buf);
    free(lat);
    free(corpus);
    return 0;
}

static int cmd_capacity(const char *dir, uint64_t bound, const char *corpus_file)
{
    store *st;
    store_limits lim = {bound, bound < (8ull << 20) ? bound : 8ull << 20, 0};
    store_stats s;
    char key[32];
    size_t ncorpus, at = 0;
    unsigned char *corpus = slurp(corpus_file, &ncorpus), *buf = malloc(4u << 20);
    uint64_t written = 0;
    unsigned seed = 7;
    int rc;
    st = bench_open(dir, STORE_NOSYNC);
    if ((rc = store_limits_set(st, &lim, NULL)))
        die(dir, rc);
    for (unsigned long i = 0; written < 10 * bound; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 4;
        size_t len = r % 4 == 0 ? r % (4u << 20) : r % (256u << 10);
        corpus_slice(corpus, ncorpus, &at, buf, len);
        snprintf(key, sizeof key, "k%lu", i % 1000);
        if ((rc = store_put(st, NULL, key, buf, len, NULL, NULL)))
            die(key, rc);
        written += len;
    }
    if ((rc = store_stats_get(st, &s)))
        die(dir, rc);
    printf("%.3f %.3f %.3f\n", (double)s.bytes / (double)bound,
           (double)s.stored_bytes / (double)bound, (double)s.file_bytes / (double)bound);
    store_close(st);
    free(buf);
    free(corpus);
    return 0;
}

static int cmd_preads(const char *file, unsigned long n, unsigned long size)
{
    int fd = open(file, O_RDONLY);
    struct stat sb;
    unsigned char *buf = malloc(size);
    double *lat = malloc(n * sizeof *lat), t0;
    uint64_t seed = 11;
    if (fd < 0 || fstat(fd, &sb) || sb.st_size <= (off_t)size)
        die(file, errno ? errno : EINVAL);
    t0 = now_s();
    for (unsigned long i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        off_t off = (off_t)((seed >> 16) % (uint64_t)(sb.st_size - (off_t)size));
        double t = now_s();
        if (pread(fd, buf, size, off) != (ssize_t)size)
            die(file, errno ? errno : EIO);
        lat[i] = now_s() - t;
    }
    printf("%.6f %.1f %.1f\n", now_s() - t0, pct(lat, n, 0.5) * 1e6, pct(lat, n, 0.99) * 1e6);
    close(fd);
    free(buf);
    free(lat);
    return 0;
}

static int cmd_seqread(const char *file, unsigned long size)
{
    int fd = open(file, O_RDONLY);
    char *buf = malloc(size ? size : 1);
    ssize_t n;
    double t0;
    if (fd < 0 || !buf || !size)
        die(file, errno ? errno : EINVAL);
    t0 = now_s();
    while ((n = read(fd, buf, size)) > 0)
        ;
    if (n < 0)
        die(file, errno);
    printf("%.6f\n", now_s() - t0);
    close(fd);
    free(buf);
    return 0;
}

enum { FILES_NOFSYNC, FILES_FSYNC, FILES_ATOMIC };

static int cmd_files(const char *dir, unsigned long n, unsigned long size, int mode)
{
    char path[4096], tmp[4096];
    unsigned char *buf = malloc(size);
    double *lat = malloc(n * sizeof *lat), t0;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0) {
        perror(dir);
        return 1;
    }
    memset(buf, 'x', size);
    t0 = now_s();
    for (unsigned long i = 0; i < n; i++) {
        double t = now_s();
        snprintf(path, sizeof path, "%s/k%07lu", dir, i);
        snprintf(tmp, sizeof tmp, "%s/.k%07lu.tmp", dir, i);
        const char *target = mode == FILES_ATOMIC ? tmp : path;
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, buf, size) != (ssize_t)size
            || (mode != FILES_NOFSYNC && fsync(fd)) || close(fd)
            || (mode == FILES_ATOMIC && (rename(tmp, path) || fsync(dfd)))) {
            perror(path);
            return 1;
        }
        lat[i] = now_s() - t;
    }
    close(dfd);
    printf("%.6f %.1f %.1f\n", now_s() - t0, pct(lat, n, 0.5) * 1e6, pct(lat, n, 0.99) * 1e6);
    free(buf);
    free(lat);
    return 0;
}

static int cmd_fill(const char *dir, unsigned long n, unsigned long size)
{
    store *st;
    store_limits lim = {(uint64_t)n * size + (1u << 20), size ? size : 1, 0};
    char key[32];
    unsigned char *buf = calloc(1, size + 1);
    double t0;
    int rc;
    st = bench_open(dir, STORE_NOSYNC);
    if (lim.max_total_bytes > (1ull << 30) && (rc = store_limits_set(st, &lim, NULL)))
        die("limits", rc);
    t0 = now_s();
    for (unsigned long i = 0; i < n; i++) {
        snprintf(key, sizeof key, "f%07lu", i);
        memcpy(buf, key, size < 8 ? size : 8);
        if ((rc = store_put(st, NULL, key, buf, size, NULL, NULL)))
            die(key, rc);
    }
    printf("%.3f\n", now_s() - t0);
    store_close(st);
    free(buf);
    return 0;
}

static int cmd_churn(const char *dir, uint64_t bound)
{
    store *st;
    store_limits lim = {bound, 8ull << 20, 0};
    store_stats s;
    char key[32];
    unsigned char *buf = calloc(1, 8u << 20);
    size_t cap = 1u << 20, nfill = 0, nevict = 0;
    double *fill = malloc(cap * sizeof *fill), *evict = malloc(cap * sizeof *evict);
    uint64_t written = 0, before;
    unsigned seed = 7;
    int rc;
    st = bench_open(dir, 0);
    if ((rc = store_limits_set(st, &lim, NULL)))
        die(dir, rc);
    for (unsigned long i = 0; written < 10 * bound; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 4;
        size_t len = r % 4 == 0 ? r % (4u << 20) : r % (256u << 10);
        snprintf(key, sizeof key, "k%lu", i % 1000);
        store_stats_get(st, &s);
        before = s.evictions;
        double t = now_s();
        if ((rc = store_put(st, NULL, key, buf, len, NULL, NULL)))
            die(key, rc);
        t = now_s() - t;
        store_stats_get(st, &s);
        if (s.evictions == before && nfill < cap)
            fill[nfill++] = t;
        else if (s.evictions != before && nevict < cap)
            evict[nevict++] = t;
        written += len;
    }
    store_stats_get(st, &s);
    printf("%.3f %.1f %.1f %.1f %.1f\n", (double)s.file_bytes / (double)bound,
           pct(fill, nfill, 0.5) * 1e6, pct(fill, nfill, 0.99) * 1e6,
           pct(evict, nevict, 0.5) * 1e6, pct(evict, nevict, 0.99) * 1e6);
    store_close(st);
    return 0;
}

static int cmd_put1(const char *dir, unsigned long size)
{
    store *st;
    unsigned char *buf = calloc(1, size + 1);
    int rc;
    st = bench_open(dir, 0);
    if ((rc = store_put(st, NULL, "callgrind-put", buf, size, NULL, NULL)))
        die("put", rc);
    store_close(st);
    free(buf);
    return 0;
}

static int cmd_read1(const char *dir, const char *key, unsigned long len)
{
    store *st;
    store_entry e;
    unsigned char *buf = malloc(len);
    size_t n;
    int rc;
    if ((rc = store_open(&st, dir, STORE_RDONLY)) || (rc = store_lookup(st, NULL, key, &e, NULL))
        || (rc = store_read(st, e.version, 0, buf, len, &n)))
        die(key, rc);
    store_close(st);
    free(buf);
    return n == len ? 0 : 1;
}

static int iov_sum(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    size_t *sum = ctx, n = 0;
    for (size_t i = 0; i < iovcnt; i++)
        n += iov[i].iov_len;
    *sum += n;
    return n == total ? 0 : EIO;
}

static int cmd_readiov(const char *dir, const char *key, unsigned long req, unsigned long runs)
{
    store *st;
    store_entry e;
    double *t = calloc(runs ? runs : 1, sizeof *t);
    int rc;
    if (!t || !req || !runs)
        return 2;
    if ((rc = store_open(&st, dir, STORE_RDONLY)) || (rc = store_lookup(st, NULL, key, &e, NULL)))
        die(key, rc);
    for (unsigned long r = 0; r < runs; r++) {
        size_t sum = 0;
        double s = now_s();
        for (uint64_t off = 0; off < e.size; off += req)
            if ((rc = store_read_iov(st, e.version, off, req, iov_sum, &sum)))
                die("store_read_iov", rc);
        t[r] = now_s() - s;
        if (sum != e.size)
            die("store_read_iov: short", EIO);
    }
    printf("%.6f %.6f\n", pct(t, runs, 0), pct(t, runs, 0.5));
    store_close(st);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "openread") && argc == 4)
        return cmd_openread(argv[2], arg_num(argv[3]));
    if (!strcmp(c, "readfile") && argc == 3)
        return cmd_readfile(argv[2]);
    if (!strcmp(c, "stat") && argc == 5)
        return cmd_stat(argv[2], arg_num(argv[3]), arg_num(argv[4]));
    if (!strcmp(c, "puts") && (argc == 6 || argc == 7))
        return cmd_puts(argv[2], arg_num(argv[3]), arg_num(argv[4]), !strcmp(argv[5], "nosync"),
                        argc == 7 ? argv[6] : NULL);
    if (!strcmp(c, "capacity") && argc == 5)
        return cmd_capacity(argv[2], arg_num(argv[3]), argv[4]);
    if (!strcmp(c, "preads") && argc == 5)
        return cmd_preads(argv[2], arg_num(argv[3]), arg_num(argv[4]));
    if (!strcmp(c, "seqread") && argc == 4)
        return cmd_seqread(argv[2], arg_num(argv[3]));
    if (!strcmp(c, "files") && argc == 6)
        return cmd_files(argv[2], arg_num(argv[3]), arg_num(argv[4]),
                         !strcmp(argv[5], "atomic") ? FILES_ATOMIC
                         : !strcmp(argv[5], "fsync") ? FILES_FSYNC : FILES_NOFSYNC);
    if (!strcmp(c, "fill") && argc == 5)
        return cmd_fill(argv[2], arg_num(argv[3]), arg_num(argv[4]));
    if (!strcmp(c, "churn") && argc == 4)
        return cmd_churn(argv[2], arg_num(argv[3]));
    if (!strcmp(c, "put1") && argc == 4)
        return cmd_put1(argv[2], arg_num(argv[3]));
    if (!strcmp(c, "readiov") && argc == 6)
        return cmd_readiov(argv[2], argv[3], arg_num(argv[4]), arg_num(argv[5]));
    if (!strcmp(c, "read1") && argc == 5)
        return cmd_read1(argv[2], argv[3], arg_num(argv[4]));
    fprintf(stderr, "benchtool: usage: see the comment at the top of scripts/bench/benchtool.c\n");
    return 2;
}
