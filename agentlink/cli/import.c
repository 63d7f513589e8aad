/* import.c -- agentlink import: a directory of spilled results into the
 * store. The safety walk that refuses a directory holding or inside a
 * store is importdir.c. */
#include "agentlink/cli/cli.h"
#include "agentlink/cli/importdir.h"
#include "common/array.h"
#include "common/clock.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- import ---------------------------------------------------------------
 * agentlink import DIR moves a directory of spilled result files (one file
 * per result, as Haystack's FileSystemToolResultStore or deepagents write
 * them) into the store, one entry per file, keyed by the file name.
 *
 * It is a move, so nothing may be lost on the way:
 * - a file is removed only after al_store_put() returned, i.e. after the
 *   store fsync'd it, and only when the name still holds the file that was
 *   read (same inode, size and mtime): a file rewritten meanwhile stays;
 * - files a put would alter are skipped and left in place: names that are
 *   not valid keys (a derived key would break every reference to the old
 *   name, and dot files are mostly half-written temporaries), files over
 *   max_result_bytes (put would cut them, and the cut-off bytes would be
 *   gone with the original), empty files, anything but a regular file;
 * - files are taken oldest first (mtime, then name) so the store evicts them
 *   in the order they were written, and a file whose put would evict a
 *   result imported by this same run is skipped rather than stored.
 * Each put is one transaction: a file is in the store whole or not at all. */

enum { SK_NAME, SK_TYPE, SK_EMPTY, SK_BIG, SK_READ, SK_ROOM, SK_COUNT };
static const char *const skip_label[SK_COUNT] = {
    "bad name", "not a regular file", "empty", "too big", "unreadable", "no room",
};
static const char *const skip_plural[SK_COUNT] = {
    "bad names", "not regular files", "empty", "too big", "unreadable", "no room",
};

typedef struct imp_file {
    char *name;
    struct timespec mtime;
} imp_file;

typedef struct imp {
    const opts *o;
    al_store *h;
    int dfd;
    int tty;               /* progress bar on stderr */
    uint64_t drawn_ms;     /* when the bar was last drawn */
    size_t total, done;    /* files listed, files handled */
    uint64_t max_result, max_total;
    uint64_t run_bytes;    /* bytes stored by this run */
    size_t imported, skipped, not_removed;
    size_t skips[SK_COUNT];
    int ex;                /* set when the run stops on a store failure */
    cJSON *jentries, *jskips;
} imp;

/* "1.5 MiB": for the progress bar only; the summary gives exact bytes. */
static const char *human_bytes(uint64_t n, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    unsigned u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%" PRIu64 " B", n);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

/* Redraws the bar at most every 50 ms, and always when FORCE. */
static void imp_bar(imp *im, int force)
{
    enum { W = 30 };
    char b[32];
    size_t fill;
    uint64_t t;
    if (!im->tty)
        return;
    t = common_clock_ms();
    if (!force && t - im->drawn_ms < 50)
        return;
    im->drawn_ms = t;
    fill = im->total ? im->done * W / im->total : W;
    fprintf(stderr, "\r\033[K[%.*s%.*s] %zu/%zu files, %s", (int)fill,
            "##############################", (int)(W - fill),
            "                              ", im->done, im->total,
            human_bytes(im->run_bytes, b, sizeof b));
    fflush(stderr);
}

/* A message while the bar may be on screen: clear its line first. */
static void imp_msg(const imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void imp_msg(const imp *im, const char *fmt, ...)
{
    va_list ap;
    if (im->tty)
        fputs("\r\033[K", stderr);
    fputs("agentlink: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void imp_skip(imp *im, const char *name, int why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void imp_skip(imp *im, const char *name, int why, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    im->skipped++;
    im->skips[why]++;
    imp_msg(im, "skipped '%s': %s; left in place", cli_quote(name), detail);
    if (im->jskips) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddStringToObject(j, "file", cli_quote(name));
            cJSON_AddStringToObject(j, "reason", skip_label[why]);
            cJSON_AddStringToObject(j, "detail", detail);
            cJSON_AddItemToArray(im->jskips, j);
        }
    }
}

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISLNK(m))
        return "a symbolic link";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    return "not a regular file";
}


static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Imports one directory entry. Returns 0 to go on, -1 to stop (im->ex set). */
static int imp_one(imp *im, const char *name)
{
    struct stat sb, now;
    char *data = NULL, *path = NULL;
    size_t len = 0;
    al_entry e;
    int rc, fd;

    if ((rc = al_key_check(name))) {
        imp_skip(im, name, SK_NAME, "the name %s, so it is not a valid key", al_strerror(rc));
        return 0;
    }
    if (fstatat(im->dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        imp_skip(im, name, SK_READ, "cannot stat: %s", strerror(errno));
        return 0;
    }
    if (!S_ISREG(sb.st_mode)) {
        imp_skip(im, name, SK_TYPE, "%s, not a regular file", file_kind(sb.st_mode));
        return 0;
    }
    fd = openat(im->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        imp_skip(im, name, SK_READ, "cannot open: %s", strerror(errno));
        return 0;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) { /* replaced since the fstatat */
        imp_skip(im, name, SK_TYPE, "no longer a regular file");
        close(fd);
        return 0;
    }
    if ((uint64_t)sb.st_size > im->max_result) {
        close(fd);
        imp_skip(im, name, SK_BIG, "%jd bytes, over max_result_bytes %" PRIu64
                 " (put would cut it)", (intmax_t)sb.st_size, im->max_result);
        return 0;
    }
    rc = cli_read_fd(fd, im->max_result, &data, &len);
    close(fd);
    if (rc == ENOMEM) {
        imp_msg(im, "out of memory reading '%s'", cli_quote(name));
        im->ex = EX_FAIL;
        return -1;
    }
    if (rc) {
        imp_skip(im, name, SK_READ, "cannot read: %s", strerror(rc));
        return 0;
    }
    if (len == 0) {
        imp_skip(im, name, SK_EMPTY, "empty file, nothing to store");
        goto done;
    }
    if ((uint64_t)len > im->max_result) {
        imp_skip(im, name, SK_BIG, "grew over max_result_bytes %" PRIu64 " while read",
                 im->max_result);
        goto done;
    }
    if (im->run_bytes + len > im->max_total) {
        imp_skip(im, name, SK_ROOM, "%zu bytes would evict results imported by this run "
                 "(max_total_bytes %" PRIu64 ")", len, im->max_total);
        goto done;
    }
    rc = al_store_put(im->h, name, data, len, im->o->tool, &e, &path);
    if (rc) {
        if (im->tty)
            fputs("\r\033[K", stderr);
        im->ex = cli_report(rc, im->h, name);
        free(data);
        return -1;
    }
    im->imported++;
    im->run_bytes += e.size;
    if (im->jentries) {
        cJSON *j = cli_entry_json(name, &e);
        if (j) {
            cJSON_AddStringToObject(j, "file", name);
            cJSON_AddStringToObject(j, "path", path);
            cJSON_AddItemToArray(im->jentries, j);
        }
    }
    if (e.truncated) { /* the limit was lowered since we looked: keep the whole original */
        imp_msg(im, "'%s' was cut to %" PRIu64 " bytes by a lowered max_result_bytes; "
                "original kept", cli_quote(name), e.size);
        im->not_removed++;
    } else if (!im->o->keep) {
        if (fstatat(im->dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || !same_file(&sb, &now)) {
            imp_msg(im, "'%s' changed while it was imported; original kept", cli_quote(name));
            im->not_removed++;
        } else if (unlinkat(im->dfd, name, 0) != 0) {
            imp_msg(im, "imported '%s' but cannot remove it: %s", cli_quote(name), strerror(errno));
            im->not_removed++;
        }
    }
done:
    al_free(path);
    free(data);
    return 0;
}

static int imp_file_cmp(const void *a, const void *b)
{
    const imp_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Lists DFD's entries, oldest first. Returns 0 or an errno value. */
static int imp_list(int dfd, imp_file **out, size_t *n)
{
    imp_file *v = NULL;
    size_t len = 0, cap = 0;
    struct dirent *d;
    int fd = dup(dfd), rc = 0;
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        rc = errno;
        if (fd >= 0)
            close(fd);
        return rc;
    }
    for (errno = 0; (d = readdir(dir)) != NULL; errno = 0) {
        struct stat sb;
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        imp_file *nv = common_array_grow(v, len, &cap, sizeof *nv, 64);
        if (!nv) {
            rc = ENOMEM;
            break;
        }
        v = nv;
        if (!(v[len].name = strdup(d->d_name))) {
            rc = ENOMEM;
            break;
        }
        if (fstatat(dfd, d->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            v[len].mtime = sb.st_mtim;
        else
            v[len].mtime = (struct timespec){0, 0};
        len++;
    }
    if (!rc && errno)
        rc = errno;
    closedir(dir);
    if (rc) {
        while (len > 0)
            free(v[--len].name);
        free(v);
        return rc;
    }
    if (len > 1)
        qsort(v, len, sizeof *v, imp_file_cmp);
    *out = v;
    *n = len;
    return 0;
}

int cmd_import(opts *o, int argc, char **argv)
{
    const char *dir = argv[0];
    imp im = {.o = o, .dfd = -1};
    al_policy *pol = NULL;
    imp_file *files = NULL;
    size_t nfiles = 0, i = 0;
    al_stats st;
    char line[512], *why = NULL;
    int ex = EX_OK, rc;
    (void)argc;

    if (o->tool && al_tool_check(o->tool)) {
        cli_msg("tool '%s': %s", cli_quote(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    im.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (im.dfd < 0) {
        cli_msg("cannot import directory '%s': %s", cli_quote(dir), strerror(errno));
        return errno == ENOMEM ? EX_FAIL : EX_USAGE;
    }
    /* Resolve the store first (nothing is created yet): DIR must not be it,
     * nor hold or lie inside any LMDB environment (importdir.c). */
    if ((ex = cli_setup(o, &pol, &im.h)))
        goto cleanup;
    if ((rc = cli_importdir_check(im.dfd, dir, al_store_dir(im.h), &why))) {
        cli_msg("%s", why ? why : "out of memory");
        ex = rc == 1 ? EX_USAGE : EX_FAIL;
        goto cleanup;
    }
    if (!o->keep && faccessat(im.dfd, ".", W_OK, AT_EACCESS) != 0) {
        cli_msg("cannot remove files from directory '%s': %s; use --keep to import copies",
            cli_quote(dir), strerror(errno));
        ex = EX_USAGE;
        goto cleanup;
    }
    if ((rc = imp_list(im.dfd, &files, &nfiles))) {
        cli_msg("cannot list directory '%s': %s", cli_quote(dir), strerror(rc));
        ex = rc == ENOMEM ? EX_FAIL : EX_USAGE;
        goto cleanup;
    }
    if (o->json && (!(im.jentries = cJSON_CreateArray()) || !(im.jskips = cJSON_CreateArray()))) {
        cli_msg("out of memory");
        ex = EX_FAIL;
        goto cleanup;
    }
    if (nfiles > 0) {
        /* A write command: create the store when missing, then read its limits. */
        if ((rc = al_store_init(im.h, 0, 0, NULL)) || (rc = al_store_stats(im.h, &st))) {
            ex = cli_report(rc, im.h, NULL);
            goto cleanup;
        }
        im.max_result = st.max_result_bytes;
        im.max_total = st.max_total_bytes;
    }
    im.total = nfiles;
    im.tty = isatty(STDERR_FILENO);
    for (i = 0; i < nfiles; i++) {
        imp_bar(&im, i == 0);
        if (imp_one(&im, files[i].name) != 0)
            break;
        im.done++;
    }
    imp_bar(&im, 1);
    if (im.tty)
        fputc('\n', stderr);

    /* The summary: "imported N, skipped M (reasons), X bytes". */
    {
        size_t off = 0;
        off += (size_t)snprintf(line + off, sizeof line - off, "imported %zu, skipped %zu",
                                im.imported, im.skipped);
        for (int k = 0, first = 1; k < SK_COUNT; k++) {
            if (!im.skips[k])
                continue;
            off += (size_t)snprintf(line + off, sizeof line - off, "%s%zu %s",
                                    first ? " (" : ", ", im.skips[k],
                                    im.skips[k] == 1 ? skip_label[k] : skip_plural[k]);
            first = 0;
        }
        if (im.skipped)
            off += (size_t)snprintf(line + off, sizeof line - off, ")");
        off += (size_t)snprintf(line + off, sizeof line - off, ", %" PRIu64 " bytes", im.run_bytes);
        if (o->keep && im.imported)
            off += (size_t)snprintf(line + off, sizeof line - off, "; originals kept");
        if (im.not_removed)
            off += (size_t)snprintf(line + off, sizeof line - off, "; %zu original%s not removed",
                                    im.not_removed, im.not_removed == 1 ? "" : "s");
        if (i < nfiles)
            snprintf(line + off, sizeof line - off, "; stopped with %zu file%s not tried",
                     nfiles - i, nfiles - i == 1 ? "" : "s");
        cli_msg("%s", line);
    }
    if (im.ex)
        ex = im.ex;
    else if (im.not_removed)
        ex = EX_FAIL;
    else if (im.skipped)
        ex = EX_USAGE;
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddNumberToObject(j, "imported", (double)im.imported);
            cJSON_AddNumberToObject(j, "skipped", (double)im.skipped);
            cJSON_AddNumberToObject(j, "bytes", (double)im.run_bytes);
            cJSON_AddNumberToObject(j, "not_removed", (double)im.not_removed);
            cJSON_AddBoolToObject(j, "kept", o->keep);
            cJSON_AddItemToObject(j, "entries", im.jentries);
            cJSON_AddItemToObject(j, "skips", im.jskips);
            im.jentries = im.jskips = NULL;
        }
        int jx = cli_print_json(j);
        if (ex == EX_OK)
            ex = jx;
    }
cleanup:
    free(why);
    cJSON_Delete(im.jentries);
    cJSON_Delete(im.jskips);
    while (nfiles > 0)
        free(files[--nfiles].name);
    free(files);
    if (im.dfd >= 0)
        close(im.dfd);
    al_store_close(im.h);
    al_policy_free(pol);
    return ex;
}
