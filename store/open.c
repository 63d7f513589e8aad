/* open.c -- opening a store: the directory, the LMDB environment (shared by
 * every handle of this process on the same directory), the page check, and
 * the databases.
 */
#include "store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const store_db_names[DB_COUNT] = {"meta", "live", "ver", "data",
                                        "tomb", "tombq", "log"};

/* The environments this process has open, one per data file. LMDB allows
 * one MDB_env per file per process: its locks on lock.mdb are fcntl() locks,
 * which belong to the process, so a second environment would see itself
 * alone, reset the lock table under the first one's writers (two writers at
 * once: lost commits, a damaged file), and closing either would drop the
 * locks of both. So the lookup, the open, the reference counts and the close
 * all run under REGISTRY_LOCK, and an environment is found by the device and
 * inode of its data file, the identity the handles above check too. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_env *registry;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

/* fork() while another thread holds REGISTRY_LOCK would leave the child's
 * copy locked for good: hold it across the fork. */
static void registry_prefork(void)
{
    pthread_mutex_lock(&registry_lock);
}

static void registry_postfork(void)
{
    pthread_mutex_unlock(&registry_lock);
}

static void registry_init(void)
{
    (void)pthread_atfork(registry_prefork, registry_postfork, registry_postfork);
}

static int mkdir_parents(const char *dir)
{
    char *p = strdup(dir);
    int rc = 0;
    if (!p)
        return ENOMEM;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) && errno != EEXIST) {
            rc = errno;
            break;
        }
        *s = '/';
    }
    if (!rc && mkdir(p, 0700) && errno != EEXIST)
        rc = errno;
    free(p);
    return rc;
}

static char *path_join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* LMDB maps the file and trusts it: a data.mdb shorter than its own meta
 * says would fault on access, so check before anyone reads a page. */
static int env_check_size(MDB_env *env)
{
    MDB_envinfo info;
    MDB_stat ms;
    mdb_filehandle_t fd;
    struct stat sb;
    if (mdb_env_info(env, &info) || mdb_env_stat(env, &ms) || mdb_env_get_fd(env, &fd)
        || fstat(fd, &sb))
        return STORE_ECORRUPT;
    if ((uint64_t)sb.st_size < ((uint64_t)info.me_last_pgno + 1) * ms.ms_psize)
        return STORE_ECORRUPT;
    return 0;
}

/* Opens the databases in a transaction of kind WRITE; a write transaction
 * also creates them and a fresh state when missing. */
static int env_open_dbs(struct shared_env *se, store *tmp, int write)
{
    rec_state s;
    MDB_stat ms;
    tx t;
    int rc = store_tx_begin(tmp, write, &t);
    if (rc)
        return rc;
    for (int i = 0; i < DB_COUNT && !rc; i++) {
        rc = mdb_dbi_open(t.txn, store_db_names[i], write ? MDB_CREATE : 0, &se->dbi[i]);
        rc = rc == MDB_NOTFOUND ? STORE_ENOSTORE : store_map_err(rc);
    }
    if (!rc && (rc = store_state_load(&t, &s)) == STORE_ENOSTORE && write) {
        mdb_env_stat(se->env, &ms);
        memset(&s, 0, sizeof s);
        s.format = REC_FORMAT;
        s.chunk = ms.ms_psize - VERIFY_PAGE_HDR - REC_CHUNK_HDR;
        s.max_total = STORE_DEFAULT_MAX_TOTAL;
        s.max_result = STORE_DEFAULT_MAX_RESULT;
        s.max_tombs = STORE_DEFAULT_MAX_TOMBS;
        s.next_version = 2;
        s.compression = STORE_COMPRESS_ZSTD;
        rc = store_state_save(&t, &s);
    }
    if (!rc)
        se->chunk = s.chunk;
    /* Even a read-only transaction is committed here: LMDB closes database
     * handles opened by a transaction that is aborted. */
    return store_tx_end(&t, rc);
}

/* Says whether the environment holds databases that are not ours: an
 * LMDB environment made by another program is refused, never written. */
static int env_is_foreign(store *tmp)
{
    MDB_dbi main, meta;
    MDB_stat ms;
    tx t;
    int rc = store_tx_begin(tmp, 0, &t), foreign;
    if (rc)
        return rc;
    /* Not empty, and without our "meta" (which another process may have
     * just created alongside the rest: then it is ours). */
    foreign = mdb_dbi_open(t.txn, NULL, 0, &main) || mdb_stat(t.txn, main, &ms)
              || (ms.ms_entries > 0 && mdb_dbi_open(t.txn, store_db_names[DB_META], 0, &meta));
    store_tx_abort(&t);
    return foreign ? STORE_ECORRUPT : 0;
}

/* Opens the databases: a read transaction when the store is complete (the
 * usual case: no writer lock taken at open), a write one to create it in an
 * environment that holds nothing yet. */
static int env_init_dbs(struct shared_env *se, store *tmp)
{
    int rc = env_open_dbs(se, tmp, 0);
    if (rc == STORE_ENOSTORE && !(se->flags & STORE_RDONLY) && !(rc = env_is_foreign(tmp)))
        rc = env_open_dbs(se, tmp, 1);
    return rc;
}

/* LMDB (0.9.24) opens data.mdb without FD_CLOEXEC (lock.mdb with it):
 * every program a process holding a store runs would inherit a writable
 * descriptor of the data (mcp-proxy's MCP server, say). */
static void fd_cloexec(MDB_env *env)
{
    mdb_filehandle_t fd;
    int fl;
    if (!mdb_env_get_fd(env, &fd) && (fl = fcntl(fd, F_GETFD)) >= 0)
        (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static int env_open(struct shared_env *se, const char *dir, int creating)
{
    unsigned mflags = MDB_NOTLS;
    store tmp = {se, NULL};
    int rc;
    if (se->flags & STORE_RDONLY)
        mflags |= MDB_RDONLY;
    if (se->flags & STORE_NOSYNC)
        mflags |= MDB_NOSYNC;
    if ((rc = mdb_env_create(&se->env)))
        return store_map_err(rc);
    mdb_env_set_maxdbs(se->env, DB_COUNT);
    mdb_env_set_maxreaders(se->env, 1024);
    if (creating)
        mdb_env_set_mapsize(se->env, 4 * STORE_DEFAULT_MAX_TOTAL + MAP_SLACK);
    rc = mdb_env_open(se->env, dir, mflags, 0600);
    if (rc == ENOENT)
        rc = STORE_ENOSTORE;
    if (!rc)
        fd_cloexec(se->env);
    if (!rc)
        rc = env_check_size(se->env);
    if (!rc)
        rc = store_verify_env(se->env, store_db_names, DB_COUNT, !!(se->flags & STORE_VERIFY), NULL, 0);
    if (!rc) {
        int dead;
        MDB_stat ms;
        mdb_reader_check(se->env, &dead);
        rc = env_init_dbs(se, &tmp);
        se->psize = mdb_env_stat(se->env, &ms) ? 0 : ms.ms_psize;
        if (!rc)
            store_map_base_find(se);
    }
    if (rc) {
        mdb_env_close(se->env);
        se->env = NULL;
    }
    return store_map_err(rc);
}

/* Records the identity of the data file SE's environment has open (the
 * descriptor, not the path: the file may have been made just now, or
 * replaced since). */
static int shared_identify(struct shared_env *se)
{
    mdb_filehandle_t fd;
    struct stat sb;
    if (mdb_env_get_fd(se->env, &fd) || fstat(fd, &sb))
        return STORE_ELMDB;
    se->dev = sb.st_dev;
    se->ino = sb.st_ino;
    return 0;
}

/* The registered environment of the data file SB in this process, or NULL
 * (registry_lock held). One a parent process opened is never reused: a
 * child must not touch its parent's environment (see store_close()). */
static struct shared_env *shared_find(const struct stat *sb)
{
    pid_t me = getpid();
    for (struct shared_env *se = registry; se; se = se->next)
        if (se->dev == sb->st_dev && se->ino == sb->st_ino && se->pid == me && se->refs > 0)
            return se;
    return NULL;
}

/* Finds or opens the shared environment of DIR (registry_lock held). */
static int shared_get(const char *dir, unsigned flags, struct shared_env **out)
{
    struct stat sb;
    struct shared_env *se;
    char *data;
    int creating, rc;
    if (stat(dir, &sb))
        return errno;
    if (!S_ISDIR(sb.st_mode))
        return ENOTDIR;
    if (!(data = path_join(dir, "data.mdb")))
        return ENOMEM;
    /* Only a data file that is missing means "no store yet": one we may not
     * read is EACCES, and a FIFO or device (which would block or lie) is not
     * a store. */
    rc = stat(data, &sb) ? errno : 0;
    if (!rc && S_ISREG(sb.st_mode) && (se = shared_find(&sb))) {
        free(data);
        se->refs++;
        *out = se;
        return 0;
    }
    if (!rc && S_ISREG(sb.st_mode))
        rc = store_verify_header(data); /* before LMDB trusts its page size */
    creating = rc == ENOENT;
    if (rc && !creating)
        goto out;
    rc = STORE_ECORRUPT;
    if (!creating && !S_ISREG(sb.st_mode))
        goto out;
    /* LMDB would initialise an empty data file as a new environment: only a
     * caller allowed to create may do that (a store being made right now by
     * another process is empty for an instant); for the others it is a
     * store that was truncated, and nothing must be written over it. */
    if (!creating && sb.st_size == 0 && !(flags & STORE_CREATE))
        goto out;
    rc = STORE_ENOSTORE;
    if (creating && !(flags & STORE_CREATE))
        goto out;
    rc = ENOMEM;
    if (!(se = calloc(1, sizeof *se)))
        goto out;
    se->pid = getpid();
    se->flags = flags;
    se->refs = 1;
    pthread_rwlock_init(&se->resize, NULL);
    pthread_mutex_init(&se->zlock, NULL);
    if (!(se->wake = store_wake_memory_new()))
        rc = ENOMEM;
    else if (!(rc = env_open(se, dir, creating)))
        rc = shared_identify(se);
    if (rc) {
        if (se->env)
            mdb_env_close(se->env);
        store_wake_memory_free(se->wake);
        pthread_mutex_destroy(&se->zlock);
        pthread_rwlock_destroy(&se->resize);
        free(se);
        goto out;
    }
    se->next = registry;
    registry = se;
    *out = se;
out:
    free(data);
    return rc;
}

int store_open(store **out, const char *dir, unsigned flags)
{
    char *abs;
    store *st;
    int rc = 0;
    *out = NULL;
    if (!dir || !*dir)
        return ENOENT;
    if (flags & STORE_RDONLY)
        flags &= ~STORE_CREATE;
    if ((flags & STORE_CREATE) && (rc = mkdir_parents(dir)))
        return rc;
    if (!(st = calloc(1, sizeof *st)) || !(st->path = strdup(dir))) {
        free(st);
        return ENOMEM;
    }
    pthread_once(&registry_once, registry_init);
    pthread_mutex_lock(&registry_lock);
    rc = shared_get(dir, flags, &st->se);
    pthread_mutex_unlock(&registry_lock);
    if (rc) {
        free(st->path);
        free(st);
        return rc;
    }
    /* Absolute: the wake-up after each write (notify.c) must find this
     * store's STORE/wake after a chdir too. */
    if ((abs = realpath(dir, NULL))) {
        free(st->path);
        st->path = abs;
    }
    *out = st;
    return 0;
}

void store_close(store *st)
{
    struct shared_env **pp, *se;
    if (!st)
        return;
    se = st->se;
    pthread_mutex_lock(&registry_lock);
    /* In a forked child an environment of the parent stays as it is, mapped
     * and registered (so reachable), until the child exits: mdb_env_close()
     * would clear the reader slots of the parent's pid, in memory the parent
     * shares, and closing its descriptor of lock.mdb would drop the fcntl()
     * locks of the child's own environment on that file. */
    if (--se->refs == 0 && se->pid == getpid()) {
        for (pp = &registry; *pp; pp = &(*pp)->next)
            if (*pp == se) {
                *pp = se->next;
                break;
            }
        mdb_env_close(se->env);
        store_zpool_free(se);
        store_wake_memory_free(se->wake);
        pthread_mutex_destroy(&se->zlock);
        pthread_rwlock_destroy(&se->resize);
        free(se);
    }
    pthread_mutex_unlock(&registry_lock);
    free(st->path);
    free(st);
}

const char *store_path(const store *st)
{
    return st->path;
}

int store_path_set(store *st, const char *path)
{
    char *p = strdup(path);
    if (!p)
        return ENOMEM;
    free(st->path);
    st->path = p;
    return 0;
}
