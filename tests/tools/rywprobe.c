/* rywprobe.c -- read-your-writes through a mount, for tests and benchmarks.
 *
 *   rywprobe rounds STORE MNT[:MNT...] N [NS]
 *       N rounds each of: replace KEY then read MNT/KEY (must be the new
 *       bytes), remove a key the kernel has cached then stat it (must be
 *       ENODATA), write a key the kernel has cached as missing then read it
 *       (must be its bytes); after each write, through every MNT given.
 *       Writes go through the library (store_put, store_remove), so each
 *       returns after the daemons acknowledged, or after the bound
 *       (STORE_WAKE_TIMEOUT_MS) with a daemon late: a daemon slowed by load
 *       may not have invalidated the kernel's cache yet, the documented
 *       trade-off. The library keeps the unanswered connection of a late
 *       daemon open (store/wake.h), so a socket held by this process after
 *       a write tells that round was not acknowledged: its reads count as
 *       "late" (stale or not), and only reads after acknowledged writes as
 *       stale. Prints one line per kind, "KIND rounds=N stale=S wrong=W
 *       late=L late_stale=K" (K: stale reads in late rounds), and the first
 *       few failures on stderr; exits 1 when stale or wrong is not zero, or
 *       when every round was late (a wake-up that never works).
 *   rywprobe putlat STORE N [NS [KEY]]
 *       N replacing puts of 4 KiB (STORE_NOSYNC); prints "median_us max_us"
 *       of the store_put() calls, each one timed alone.
 *   rywprobe rywlat STORE MNT N
 *       N rounds of put (4 KiB, STORE_NOSYNC) then open+read+close through
 *       MNT; prints the median microseconds of a round, and checks the bytes
 *       (exit 1 on a stale read).
 *   rywprobe filelat DIR N
 *       The same with a plain file: open(O_TRUNC)+write+close, then
 *       open+read+close; prints the median microseconds of a round.
 */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VAL_MAX (64u * 1024u)
#define LAT_SIZE 4096u
#define SHOW_MAX 5

#define MOUNTS_MAX 8

/* The mounts read after each write (MNT as "DIR[:DIR...]"). */
struct mounts {
    const char *dir[MOUNTS_MAX];
    unsigned n;
};

struct tally {
    const char *kind;
    unsigned rounds, stale, wrong, late, late_stale;
};

/* 1 when this process holds a socket: the library's kept connection to a
 * daemon that has not acknowledged a write (the probe opens none itself). */
static int holds_socket(void)
{
    char path[64], link[64];
    struct dirent *de;
    DIR *d = opendir("/proc/self/fd");
    int found = 0;
    ssize_t n;
    if (!d)
        return 0;
    while (!found && (de = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%.16s", de->d_name);
        n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            found = !strncmp(link, "socket:", 7);
        }
    }
    closedir(d);
    return found;
}

/* After a round's write: 1 when a daemon did not acknowledge it within
 * the bound (counted in T->late), its reads then not judged for staleness. */
static int round_late(struct tally *t)
{
    int late = holds_socket();
    t->late += (unsigned)late;
    return late;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Value of round I: SIZE bytes that name the round everywhere. */
static size_t make_value(char *buf, unsigned i, const char *tag)
{
    size_t size = 100u + (i * 997u) % (VAL_MAX - 200u), n = 0;
    char head[64];
    int hl = snprintf(head, sizeof head, "%s-%u;", tag, i);
    while (n < size) {
        size_t k = size - n < (size_t)hl ? size - n : (size_t)hl;
        memcpy(buf + n, head, k);
        n += k;
    }
    return size;
}

/* Reads PATH whole into BUF (VAL_MAX + 1 bytes); returns its length, or
 * -errno. */
static long read_path(const char *path, char *buf, size_t cap)
{
    long n = 0;
    ssize_t r = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    while ((size_t)n < cap && (r = read(fd, buf + n, cap - (size_t)n)) > 0)
        n += r;
    if (r < 0)
        n = -errno;
    close(fd);
    return n;
}

static void fail(struct tally *t, int stale, unsigned i, const char *what)
{
    if (stale)
        t->stale++;
    else
        t->wrong++;
    if (t->stale + t->wrong <= SHOW_MAX)
        fprintf(stderr, "rywprobe: %s round %u: %s\n", t->kind, i, what);
}

/* Replace then read: the new bytes, never the old ones, never ENODATA. */
static int replace_rounds(store *st, const struct mounts *m, const char *ns, unsigned n,
                          struct tally *t, char *val, char *got)
{
    char path[4096], msg[128];
    size_t len;
    long r;
    int rc, late;
    for (unsigned i = 0; i < n; i++) {
        len = make_value(val, i, "rep");
        if ((rc = store_put(st, ns, "rep", val, len, NULL, NULL)))
            return rc;
        t->rounds++;
        late = round_late(t);
        for (unsigned j = 0; j < m->n; j++) {
            snprintf(path, sizeof path, "%s/rep", m->dir[j]);
            r = read_path(path, got, VAL_MAX + 1);
            if (late && (r == -ENODATA || (r >= 0 && ((size_t)r != len || memcmp(got, val, len))))) {
                t->late_stale++; /* the old version, or its name gone: not yet invalidated */
                continue;
            }
            if (r < 0) {
                snprintf(msg, sizeof msg, "read failed: %s", strerror((int)-r));
                fail(t, 0, i, msg);
            } else if ((size_t)r != len || memcmp(got, val, len)) {
                snprintf(msg, sizeof msg, "read %ld bytes of '%.12s', want %zu of round %u", r,
                         r > 0 ? got : "", len, i);
                fail(t, 1, i, msg);
            }
        }
    }
    return 0;
}

/* Remove a key the kernel has cached, then stat it: ENODATA. */
static int rm_rounds(store *st, const struct mounts *m, const char *ns, unsigned n,
                     struct tally *t, char *val, char *got)
{
    char path[4096], msg[128];
    struct stat sb;
    size_t len;
    long r;
    int rc, late;
    for (unsigned i = 0; i < n; i++) {
        len = make_value(val, i, "gone");
        if ((rc = store_put(st, ns, "gone", val, len, NULL, NULL)))
            return rc;
        late = holds_socket(); /* not a round of its own: not counted */
        for (unsigned j = 0; j < m->n; j++) {
            snprintf(path, sizeof path, "%s/gone", m->dir[j]);
            r = read_path(path, got, VAL_MAX + 1); /* the kernel now knows it */
            if ((r < 0 || (size_t)r != len) && !late) {
                snprintf(msg, sizeof msg, "before the remove: %s",
                         r < 0 ? strerror((int)-r) : "wrong bytes");
                fail(t, r >= 0, i, msg);
            }
        }
        if ((rc = store_remove(st, ns, "gone")))
            return rc;
        t->rounds++;
        late = round_late(t);
        for (unsigned j = 0; j < m->n; j++) {
            snprintf(path, sizeof path, "%s/gone", m->dir[j]);
            if (stat(path, &sb) == 0) {
                if (late) {
                    t->late_stale++;
                    continue;
                }
                fail(t, 1, i, "stat after the remove succeeded");
            } else if (errno != ENODATA) {
                snprintf(msg, sizeof msg, "stat after the remove: %s, want ENODATA",
                         strerror(errno));
                fail(t, 0, i, msg);
            }
        }
    }
    return 0;
}

/* Write a key the kernel has cached as missing, then read it. */
static int new_rounds(store *st, const struct mounts *m, const char *ns, unsigned n,
                      struct tally *t, char *val, char *got)
{
    char path[4096], key[64], msg[128];
    struct stat sb;
    size_t len;
    long r;
    int rc, late;
    for (unsigned i = 0; i < n; i++) {
        snprintf(key, sizeof key, "new%ld-%06u", (long)getpid(), i); /* fresh every run */
        for (unsigned j = 0; j < m->n; j++) {
            snprintf(path, sizeof path, "%s/%s", m->dir[j], key);
            if (stat(path, &sb) == 0 || errno != ENOENT) /* a negative dentry now */
                fail(t, 0, i, "not ENOENT before the write");
        }
        len = make_value(val, i, "new");
        if ((rc = store_put(st, ns, key, val, len, NULL, NULL)))
            return rc;
        t->rounds++;
        late = round_late(t);
        for (unsigned j = 0; j < m->n; j++) {
            snprintf(path, sizeof path, "%s/%s", m->dir[j], key);
            r = read_path(path, got, VAL_MAX + 1);
            if (late && r == -ENOENT) {
                t->late_stale++; /* the cached miss not yet invalidated */
                continue;
            }
            if (r < 0) {
                snprintf(msg, sizeof msg, "read failed: %s", strerror((int)-r));
                fail(t, r == -ENOENT, i, msg);
            } else if ((size_t)r != len || memcmp(got, val, len)) {
                fail(t, 0, i, "wrong bytes");
            }
        }
        if ((rc = store_remove(st, ns, key))) /* keep the listing short */
            return rc;
    }
    return 0;
}

static int cmd_rounds(const char *dir, char *mnt, unsigned n, const char *ns)
{
    struct mounts m = {{NULL}, 0};
    struct tally t[3] = {{"replace", 0, 0, 0, 0, 0}, {"rm", 0, 0, 0, 0, 0}, {"new", 0, 0, 0, 0, 0}};
    char *val = malloc(VAL_MAX), *got = malloc(VAL_MAX + 1);
    store *st = NULL;
    int rc = ENOMEM, bad = 0;
    for (char *save = NULL, *d = strtok_r(mnt, ":", &save); d && m.n < MOUNTS_MAX;
         d = strtok_r(NULL, ":", &save))
        m.dir[m.n++] = d;
    if (val && got && !(rc = store_open(&st, dir, STORE_NOSYNC))
        && !(rc = replace_rounds(st, &m, ns, n, &t[0], val, got))
        && !(rc = rm_rounds(st, &m, ns, n, &t[1], val, got)))
        rc = new_rounds(st, &m, ns, n, &t[2], val, got);
    store_close(st);
    free(val);
    free(got);
    if (rc) {
        fprintf(stderr, "rywprobe: store: %s\n", store_strerror(rc));
        return 2;
    }
    for (int i = 0; i < 3; i++) {
        printf("%s rounds=%u stale=%u wrong=%u late=%u late_stale=%u\n", t[i].kind,
               t[i].rounds, t[i].stale, t[i].wrong, t[i].late, t[i].late_stale);
        bad |= t[i].stale || t[i].wrong || t[i].rounds != n || (n && t[i].late == n);
    }
    return bad;
}

static int cmd_putlat(const char *dir, unsigned n, const char *ns, const char *key)
{
    char val[LAT_SIZE];
    double *us = calloc(n ? n : 1, sizeof *us), t0;
    store *st = NULL;
    int rc = ENOMEM;
    if (us && !(rc = store_open(&st, dir, STORE_CREATE | STORE_NOSYNC))) {
        for (unsigned i = 0; i < n && !rc; i++) {
            memset(val, 'a' + (int)(i % 26), sizeof val);
            t0 = now_us();
            rc = store_put(st, ns, key, val, sizeof val, NULL, NULL);
            us[i] = now_us() - t0;
        }
    }
    store_close(st);
    if (!rc && n) {
        double mx = 0;
        for (unsigned i = 0; i < n; i++)
            mx = us[i] > mx ? us[i] : mx;
        printf("%.1f %.1f\n", median(us, n), mx);
    }
    free(us);
    if (rc)
        fprintf(stderr, "rywprobe: put: %s\n", store_strerror(rc));
    return rc ? 2 : 0;
}

static int cmd_rywlat(const char *dir, const char *mnt, unsigned n)
{
    char val[LAT_SIZE], got[LAT_SIZE + 1], path[4096];
    double *us = calloc(n ? n : 1, sizeof *us), t0;
    store *st = NULL;
    int rc = ENOMEM, stale = 0;
    snprintf(path, sizeof path, "%s/lat", mnt);
    if (us && !(rc = store_open(&st, dir, STORE_NOSYNC))) {
        for (unsigned i = 0; i < n && !rc; i++) {
            snprintf(val, sizeof val, "%08u", i);
            memset(val + 8, 'a' + (int)(i % 26), sizeof val - 8);
            t0 = now_us();
            if ((rc = store_put(st, NULL, "lat", val, sizeof val, NULL, NULL)))
                break;
            long r = read_path(path, got, sizeof got);
            us[i] = now_us() - t0;
            stale += r != (long)sizeof val || memcmp(got, val, sizeof val);
        }
    }
    store_close(st);
    if (!rc && n)
        printf("%.1f\n", median(us, n));
    free(us);
    if (rc)
        fprintf(stderr, "rywprobe: put: %s\n", store_strerror(rc));
    if (stale)
        fprintf(stderr, "rywprobe: %d stale reads\n", stale);
    return rc ? 2 : stale != 0;
}

static int cmd_filelat(const char *dir, unsigned n)
{
    char val[LAT_SIZE], got[LAT_SIZE + 1], path[4096];
    double *us = calloc(n ? n : 1, sizeof *us), t0;
    int rc = 0;
    snprintf(path, sizeof path, "%s/lat", dir);
    for (unsigned i = 0; us && i < n && !rc; i++) {
        int fd;
        snprintf(val, sizeof val, "%08u", i);
        memset(val + 8, 'a' + (int)(i % 26), sizeof val - 8);
        t0 = now_us();
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, val, sizeof val) != (ssize_t)sizeof val)
            rc = errno;
        if (fd >= 0)
            close(fd);
        long r = read_path(path, got, sizeof got);
        us[i] = now_us() - t0;
        if (r != (long)sizeof val)
            rc = EIO;
    }
    if (us && !rc && n)
        printf("%.1f\n", median(us, n));
    free(us);
    return rc ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "rounds"))
        return cmd_rounds(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 10),
                          argc > 5 ? argv[5] : NULL);
    if (argc >= 4 && !strcmp(argv[1], "putlat"))
        return cmd_putlat(argv[2], (unsigned)strtoul(argv[3], NULL, 10),
                          argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : "lat");
    if (argc >= 5 && !strcmp(argv[1], "rywlat"))
        return cmd_rywlat(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 10));
    if (argc >= 4 && !strcmp(argv[1], "filelat"))
        return cmd_filelat(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
    fprintf(stderr, "usage: rywprobe rounds STORE MNT N [NS] | putlat STORE N [NS [KEY]] |"
                    " rywlat STORE MNT N | filelat DIR N\n");
    return 2;
}
