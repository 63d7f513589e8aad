/* corrupt.c -- damaged store files against the agentlink library: flip one
 * byte of data.mdb at many places, one copy at a time, and see what a
 * reader and a writer get.
 *
 *   corrupt probe STORE WANTDIR
 *       one run, in this process: opens STORE with al_store_open, lists
 *       it, reads every key named by a file in WANTDIR (whose contents are
 *       the bytes it must hold), reads the stats, then writes a new key.
 *       Prints one line: "open RC list RC keys OK/ERR/WRONG stats RC put RC"
 *       (RC: 0 or the al_strerror text). Exit 0, or 3 when some key read
 *       back wrong bytes.
 *   corrupt sweep REF WANTDIR WORK [PAGE_FIRST PAGE_LAST]
 *       for each page of REF/data.mdb (or the range) and each of a dozen
 *       offsets in it (page header, node pointers, the middle, the end;
 *       for the two meta pages, every field of the meta), copies REF to
 *       WORK (a fresh lock.mdb each time), XORs that byte with 0xff, runs a
 *       probe in a child with a 10 s alarm and classifies the outcome:
 *         same     every read gave the right bytes, nothing was refused
 *         refused  something failed with a clear error, no wrong bytes
 *         WRONG    some key read back other bytes without an error
 *         CRASH    the probe died of a signal (LMDB trusts page contents)
 *         HANG     the probe did not finish in 10 s
 *       Prints one line per outcome that is not "same" or "refused" (per
 *       outcome when CORRUPT_LIST is set in the environment), and a table of
 *       outcomes by page kind (meta, branch, leaf, overflow, free).
 *       Exit 0; the caller judges the figures.
 *   corrupt flip FILE OFFSET
 *       XORs the byte at OFFSET of FILE with 0xff.
 */
#include "agentlink/agentlink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096u

static const char *rcname(int rc)
{
    return rc ? al_strerror(rc) : "0";
}

static int list_cb(const char *key, const al_entry *e, void *ctx)
{
    (void)key;
    (void)e;
    (*(size_t *)ctx)++;
    return 0;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0
        && (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
        b[n] = '\0'; /* callers search it as text too */
        *len = (size_t)n;
    } else {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static int probe(const char *store, const char *wantdir)
{
    al_store *h = NULL;
    al_stats s;
    size_t listed = 0, ok = 0, err = 0, wrong = 0;
    int rc_open, rc_list = -1, rc_stats = -1, rc_put = -1;
    DIR *d;
    struct dirent *de;
    /* Each step is announced on stderr first: a crash names the step. */
    fputs("step open\n", stderr);
    rc_open = al_store_open(&h, store, NULL, NULL, NULL);
    if (!rc_open) {
        fputs("step list\n", stderr);
        rc_list = al_store_list(h, list_cb, &listed);
        fputs("step get\n", stderr);
        if ((d = opendir(wantdir))) {
            while ((de = readdir(d))) {
                char path[4096];
                size_t wl, gl;
                void *got = NULL;
                char *want;
                if (de->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof path, "%s/%s", wantdir, de->d_name);
                if (!(want = read_file(path, &wl)))
                    continue;
                int rc = al_store_get(h, de->d_name, &got, &gl, NULL);
                if (rc)
                    err++;
                else if (gl != wl || memcmp(got, want, wl))
                    wrong++;
                else
                    ok++;
                al_free(got);
                free(want);
            }
            closedir(d);
        }
        fputs("step stats\n", stderr);
        rc_stats = al_store_stats(h, &s);
        fputs("step put\n", stderr);
        rc_put = al_store_put(h, "probe-new", "new bytes", 9, NULL, NULL, NULL);
    }
    printf("open %s list %s (%zu) keys %zu/%zu/%zu stats %s put %s\n", rcname(rc_open),
           rc_list < 0 ? "-" : rcname(rc_list), listed, ok, err, wrong,
           rc_stats < 0 ? "-" : rcname(rc_stats), rc_put < 0 ? "-" : rcname(rc_put));
    fflush(stdout);
    al_store_close(h);
    if (wrong)
        return 3;
    return rc_open || rc_list || err || rc_stats || rc_put ? 1 : 0;
}

static int copy(const char *from, const char *to)
{
    size_t n;
    char *b = read_file(from, &n);
    FILE *f;
    if (!b)
        return -1;
    if (!(f = fopen(to, "wb")) || fwrite(b, 1, n, f) != n) {
        free(b);
        if (f)
            fclose(f);
        return -1;
    }
    free(b);
    return fclose(f);
}

enum { O_SAME, O_REFUSED, O_WRONG, O_CRASH, O_HANG, O_COUNT };
static const char *const oname[O_COUNT] = {"same", "refused", "WRONG", "CRASH", "HANG"};
enum { K_META, K_BRANCH, K_LEAF, K_OVERFLOW, K_OTHER, K_COUNT };
static const char *const kname[K_COUNT] = {"meta", "branch", "leaf", "overflow", "free/other"};

static int sweep(const char *ref, const char *wantdir, const char *work, long first, long last)
{
    char refdata[4096], data[4096], lock[4096], errlog[4096];
    size_t len;
    unsigned table[K_COUNT][O_COUNT] = {{0}};
    unsigned char *orig;
    snprintf(refdata, sizeof refdata, "%s/data.mdb", ref);
    snprintf(data, sizeof data, "%s/data.mdb", work);
    snprintf(lock, sizeof lock, "%s/lock.mdb", work);
    snprintf(errlog, sizeof errlog, "%s.stderr", work);
    if (!(orig = (unsigned char *)read_file(refdata, &len)) || (mkdir(work, 0700) && errno != EEXIST))
        return 2;
    long pages = (long)(len / PAGE);
    if (last < 0 || last >= pages)
        last = pages - 1;
    /* Offsets in an ordinary page: its number, flags, lower and upper
     * bounds, the first node pointers and nodes, the middle, the end. In a
     * meta page (0, 1): the magic, the version, the map size, the roots,
     * depths and counts of both databases, the last page, the txn id. */
    static const unsigned plain[] = {0, 8, 10, 12, 14, 16, 18, 20, 24, 40, 2048, 4000, 4095};
    static const unsigned meta[] = {16, 20, 24, 32, 40, 44, 46, 48, 56, 64, 72, 80, 88, 92,
                                    94, 96, 104, 112, 120, 128, 136, 144, 152};
    for (long p = first; p <= last; p++) {
        unsigned flags = (unsigned)orig[p * PAGE + 10] | (unsigned)orig[p * PAGE + 11] << 8;
        int kind = p < 2 ? K_META : flags & 1 ? K_BRANCH : flags & 2 ? K_LEAF
                 : flags & 4 ? K_OVERFLOW : K_OTHER;
        const unsigned *offs = p < 2 ? meta : plain;
        size_t noffs = p < 2 ? sizeof meta / sizeof *meta : sizeof plain / sizeof *plain;
        for (size_t i = 0; i < noffs; i++) {
            size_t at = (size_t)p * PAGE + offs[i];
            int status, outcome;
            pid_t pid;
            unlink(lock);
            if (copy(refdata, data))
                return 2;
            int fd = open(data, O_WRONLY);
            unsigned char b = (unsigned char)(orig[at] ^ 0xff);
            if (fd < 0 || pwrite(fd, &b, 1, (off_t)at) != 1 || close(fd))
                return 2;
            fflush(stdout);
            pid = fork();
            if (pid == 0) {
                int null = open("/dev/null", O_WRONLY), el = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                dup2(null, 1);
                dup2(el, 2);
                alarm(10);
                _exit(probe(work, wantdir));
            }
            waitpid(pid, &status, 0);
            if (WIFSIGNALED(status))
                outcome = WTERMSIG(status) == SIGALRM ? O_HANG : O_CRASH;
            else if (WEXITSTATUS(status) == 3)
                outcome = O_WRONG;
            else if (WEXITSTATUS(status) == 0)
                outcome = O_SAME;
            else
                outcome = O_REFUSED;
            /* A sanitizer report is a crash too, whatever the exit code. */
            size_t el;
            char *e = read_file(errlog, &el), step[16] = "?", why[200] = "";
            if (e && (strstr(e, "Sanitizer") || strstr(e, "runtime error")))
                outcome = O_CRASH;
            for (char *l = e; l && *l;) { /* the last step, and LMDB's assertion */
                char *nl = strchr(l, '\n');
                if (nl)
                    *nl = '\0';
                if (!strncmp(l, "step ", 5))
                    snprintf(step, sizeof step, "%s", l + 5);
                else if (strstr(l, "Assertion"))
                    snprintf(why, sizeof why, ": %s", l);
                l = nl ? nl + 1 : l + strlen(l);
            }
            free(e);
            table[kind][outcome]++;
            if (outcome >= O_WRONG || getenv("CORRUPT_LIST"))
                printf("%s: page %ld (%s), byte %u, during %s: %s%s\n", oname[outcome], p,
                       kname[kind], offs[i], step,
                       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit", why);
        }
    }
    printf("%-11s %8s %8s %8s %8s %8s\n", "page kind", oname[0], oname[1], oname[2], oname[3],
           oname[4]);
    for (int k = 0; k < K_COUNT; k++)
        printf("%-11s %8u %8u %8u %8u %8u\n", kname[k], table[k][0], table[k][1], table[k][2],
               table[k][3], table[k][4]);
    unsigned tot[O_COUNT] = {0};
    for (int k = 0; k < K_COUNT; k++)
        for (int o = 0; o < O_COUNT; o++)
            tot[o] += table[k][o];
    printf("total: same %u refused %u WRONG %u CRASH %u HANG %u\n", tot[0], tot[1], tot[2],
           tot[3], tot[4]);
    free(orig);
    return 0;
}

/* XORs the byte at OFF of PATH with 0xff. */
static int flip(const char *path, long off)
{
    unsigned char b;
    int fd = open(path, O_RDWR), rc = 1;
    if (fd >= 0 && pread(fd, &b, 1, off) == 1) {
        b ^= 0xff;
        rc = pwrite(fd, &b, 1, off) == 1 ? 0 : 1;
    }
    if (fd >= 0)
        close(fd);
    if (rc)
        perror(path);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "flip"))
        return flip(argv[2], atol(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "probe"))
        return probe(argv[2], argv[3]);
    if ((argc == 5 || argc == 7) && !strcmp(argv[1], "sweep"))
        return sweep(argv[2], argv[3], argv[4], argc == 7 ? atol(argv[5]) : 0,
                     argc == 7 ? atol(argv[6]) : -1);
    fprintf(stderr, "usage: corrupt probe STORE WANTDIR | corrupt sweep REF WANTDIR WORK "
                    "[FIRST LAST] | corrupt flip FILE OFFSET\n");
    return 2;
}
