/* wakeracer.c -- a hostile store owner racing a root daemon's wake-up
 * socket, for tests/fs/test_wake_race.sh. Run it as the store's owner.
 *
 *   wakeracer link WAKEDIR VICTIM
 *       Keeps a hard link to VICTIM ready in WAKEDIR (".racer-link"); on
 *       every IN_CREATE of a name ending in ".new" (a daemon's temporary
 *       socket name) renames that link over the name at once, and makes a
 *       new one. The daemon must neither change VICTIM (chmod, chown by
 *       name) nor publish it as its socket.
 *   wakeracer dir STORE TARGET
 *       Keeps a symlink to the directory TARGET ready in STORE
 *       (".racer-link"); on every IN_OPEN of STORE/wake (a daemon opening
 *       it) exchanges the two names at once, so STORE/wake leads to
 *       TARGET, and exchanges them back 30 ms later. The daemon must create
 *       nothing in TARGET.
 *
 *   wakeracer swap WATCHED DIR NAME sym|hard TARGET
 *       Keeps ready in DIR a symlink to TARGET (sym) or a hard link to it
 *       (hard), named ".racer-NAME"; on every IN_OPEN in or of the
 *       directory WATCHED (a daemon opening the store or a file in it)
 *       exchanges DIR/NAME with it at once, and exchanges them back 30 ms
 *       later. Run against a daemon starting on a store: NAME is lock.mdb
 *       or data.mdb in the store, or the store directory or its parent.
 *
 * Prints "ready" once watching, then "swap NAME" for each swap made;
 * runs until killed. Exits 1 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#define LINK_NAME ".racer-link"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

static int fail(const char *what)
{
    fprintf(stderr, "wakeracer: %s: %s\n", what, strerror(errno));
    return 1;
}

/* The events of one read() from the inotify descriptor IN; calls ON for
 * each (with its name, "" for the watched directory itself). */
static int watch(int in, int (*on)(int, const char *), int dfd)
{
    _Alignas(struct inotify_event) char buf[8192];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail("read inotify");
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (on(dfd, ev->len ? ev->name : "") != 0)
                return 1;
            p += sizeof *ev + ev->len;
        }
    }
}

static const char *victim;

static int on_create(int dfd, const char *name)
{
    if (!ends_with(name, ".new"))
        return 0;
    if (renameat(dfd, LINK_NAME, dfd, name) == 0)
        printf("swap %s\n", name);
    if (linkat(AT_FDCWD, victim, dfd, LINK_NAME, 0) != 0 && errno != EEXIST)
        return fail("link the victim");
    return 0;
}

static int on_open(int dfd, const char *name)
{
    struct timespec ts = {0, 30 * 1000000L};
    (void)name;
    if (renameat2(dfd, "wake", dfd, LINK_NAME, RENAME_EXCHANGE) != 0)
        return 0; /* swapped already, or gone */
    printf("swap wake\n");
    nanosleep(&ts, NULL);
    if (renameat2(dfd, "wake", dfd, LINK_NAME, RENAME_EXCHANGE) != 0)
        return fail("swap back");
    /* Our own swaps opened nothing, but a few opens may have queued meanwhile:
     * they are answered with another swap, which does no harm. */
    return 0;
}

static char swap_name[256], swap_link[256 + 8];

static int on_open_swap(int dfd, const char *name)
{
    struct timespec ts = {0, 30 * 1000000L};
    (void)name;
    if (renameat2(dfd, swap_name, dfd, swap_link, RENAME_EXCHANGE) != 0)
        return 0;
    printf("swap %s\n", swap_name);
    nanosleep(&ts, NULL);
    if (renameat2(dfd, swap_name, dfd, swap_link, RENAME_EXCHANGE) != 0)
        return fail("swap back");
    return 0;
}

/* wakeracer swap WATCHED DIR NAME sym|hard TARGET */
static int swap_main(char **argv)
{
    int in, dfd, rc;
    if (snprintf(swap_name, sizeof swap_name, "%s", argv[4]) >= (int)sizeof swap_name)
        return 1;
    snprintf(swap_link, sizeof swap_link, ".racer-%s", swap_name);
    if ((dfd = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return fail(argv[3]);
    rc = !strcmp(argv[5], "hard") ? linkat(AT_FDCWD, argv[6], dfd, swap_link, 0)
                                   : symlinkat(argv[6], dfd, swap_link);
    if (rc != 0 && errno != EEXIST)
        return fail("make the link");
    if ((in = inotify_init1(IN_CLOEXEC)) < 0)
        return fail("inotify_init1");
    if (inotify_add_watch(in, argv[2], IN_OPEN | IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
        return fail("inotify_add_watch");
    printf("ready\n");
    return watch(in, on_open_swap, dfd);
}

int main(int argc, char **argv)
{
    int link_mode, in, dfd;
    char path[4096];
    if (argc == 7 && !strcmp(argv[1], "swap") && (!strcmp(argv[5], "sym") || !strcmp(argv[5], "hard"))) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return swap_main(argv);
    }
    if (argc != 4 || (strcmp(argv[1], "link") && strcmp(argv[1], "dir"))) {
        fprintf(stderr, "usage: wakeracer link WAKEDIR VICTIM | dir STORE TARGET | "
                "swap WATCHED DIR NAME sym|hard TARGET\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    link_mode = !strcmp(argv[1], "link");
    if ((dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return fail(argv[2]);
    if ((in = inotify_init1(IN_CLOEXEC)) < 0)
        return fail("inotify_init1");
    if (link_mode) {
        victim = argv[3];
        if (linkat(AT_FDCWD, victim, dfd, LINK_NAME, 0) != 0 && errno != EEXIST)
            return fail("link the victim");
        if (inotify_add_watch(in, argv[2], IN_CREATE) < 0)
            return fail("inotify_add_watch");
    } else {
        if (symlinkat(argv[3], dfd, LINK_NAME) != 0 && errno != EEXIST)
            return fail("symlink the target");
        if ((size_t)snprintf(path, sizeof path, "%s/wake", argv[2]) >= sizeof path) {
            errno = ENAMETOOLONG;
            return fail(argv[2]);
        }
        if (inotify_add_watch(in, path, IN_OPEN | IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
            return fail("inotify_add_watch");
    }
    printf("ready\n");
    return watch(in, link_mode ? on_create : on_open, dfd);
}
