/* cli.c -- build/agentlink, the command line over libagentlink.
 *
 * Exit codes: 0 ok, 1 failure, 2 bad usage or invalid input, 3 no such
 * key, 4 key evicted. Data goes to stdout, messages to stderr; every
 * message says what is wrong first and quotes its subject. */
#include "agentlink/agentlink.h"
#include "agentlink/cli_input.h"
#include "agentlink/cli_json.h"
#include "agentlink/internal.h"
#include "agentlink/cli_importdir.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agentlink/mcp.h" /* mcp-proxy, in cli_mcp.c */

enum { EX_OK = 0, EX_FAIL = 1, EX_USAGE = 2, EX_NOKEY = 3, EX_EVICTED = 4 };

static const char usage_text[] =
    "usage: agentlink [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Offload large tool results into an offloadfs store; each live result is a\n"
    "file under the mount (/large_tool_results/KEY).\n"
    "\n"
    "Commands:\n"
    "  init [--max-total-bytes N] [--max-result-bytes N] [--compression zstd|none]\n"
    "                        create the store, or change its limits or how\n"
    "                        later results are stored (zstd: the default)\n"
    "  put KEY [--tool NAME] [--file PATH] [--max-input-bytes N]\n"
    "                        store stdin (or PATH) under KEY, print its path\n"
    "  offload --tool NAME --call-id RAW [--config FILE] [--max-input-bytes N]\n"
    "                        apply the offload policy to the result on stdin;\n"
    "                        print the result unchanged or the pointer text\n"
    "  key RAW               print the key derived from a raw tool call id\n"
    "  get KEY               write the stored bytes to stdout\n"
    "  ls                    one line per live entry: key, size, tool (tab-separated)\n"
    "  stat KEY              size, tool, created, original size, truncated\n"
    "  rm KEY...             remove keys\n"
    "  drop-referenced       remove every entry whose path appears in stdin\n"
    "  stats                 entries, bytes, limits, evictions\n"
    "  import DIR [--tool NAME] [--keep]\n"
    "                        move a directory of spilled result files (one file\n"
    "                        per result, key = file name) into the store; --keep\n"
    "                        leaves the originals in place\n"
    "  mcp-proxy [--no-read-tool] -- COMMAND [ARG...]\n"
    "                        relay an MCP stdio server, offloading large tool\n"
    "                        results (agentlink mcp-proxy --help)\n"
    "\n"
    "Options:\n"
    "  --store DIR           store directory (else $OFFLOADFS_STORE, else\n"
    "                        /var/lib/offloadfs as root, else\n"
    "                        ${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs)\n"
    "  --namespace NS        namespace (else $OFFLOADFS_NAMESPACE, the config, \"default\")\n"
    "  --mount DIR           where offloadfs shows the store (else $OFFLOADFS_MOUNT,\n"
    "                        the config, /large_tool_results)\n"
    "  --config FILE         offload policy (else $OFFLOADFS_CONFIG, else built-in)\n"
    "  --json                machine-readable output on stdout\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "\n"
    "Sizes are bytes, or take K, M, G (powers of 1024). put, offload and\n"
    "drop-referenced refuse an input over --max-input-bytes (default 1G).\n"
    "Exit: 0 ok, 1 failure, 2 bad usage or input, 3 no such key, 4 key evicted.\n";

/* ---- options --------------------------------------------------------- */
enum {
    OPT_STORE = 256, OPT_NAMESPACE, OPT_MOUNT, OPT_CONFIG, OPT_JSON, OPT_TOOL,
    OPT_FILE, OPT_CALL_ID, OPT_MAX_TOTAL, OPT_MAX_RESULT, OPT_KEEP, OPT_MAX_INPUT,
    OPT_COMPRESSION,
};

/* Which command may take which option, as bits of (opt - OPT_TOOL). */
#define O_TOOL (1u << 0)
#define O_FILE (1u << 1)
#define O_CALL (1u << 2)
#define O_MAXT (1u << 3)
#define O_MAXR (1u << 4)
#define O_KEEP (1u << 5)
#define O_MAXI (1u << 6)
#define O_COMP (1u << 7)

typedef struct opts {
    const char *store, *ns, *mount, *config, *tool, *file, *call_id;
    const char *max_total, *max_result, *max_input, *compression;
    int json, keep;
    unsigned given; /* O_* of command-specific options seen */
} opts;

typedef struct cmd {
    const char *name;
    int (*run)(opts *o, int argc, char **argv);
    int min_args, max_args; /* -1: any */
    unsigned allowed;       /* O_* */
    const char *args;       /* for the usage message */
} cmd;

/* ---- messages --------------------------------------------------------- */
/* Subjects quoted in messages: controls and invalid UTF-8 escaped. A few
 * rotating slots are enough for one message. */
static const char *q(const char *s)
{
    static char *slot[4];
    static unsigned next;
    al_buf b = {0};
    char *out = NULL;
    al_buf_add_printable(&b, s ? s : "", s ? strlen(s) : 0);
    if (al_buf_detach(&b, &out, NULL))
        return "?";
    free(slot[next]);
    slot[next] = out;
    next = (next + 1) % 4;
    return out;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
    va_list ap;
    fputs("agentlink: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("agentlink: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nagentlink: try 'agentlink --help'\n", stderr);
    return EX_USAGE;
}

/* The message and exit code for RC from a call about key KEY (may be NULL)
 * in handle H (may be NULL). */
static int report(int rc, const al_store *h, const char *key)
{
    if (al_err_is_name(rc)) {
        msg("key '%s' %s", q(key), al_strerror(rc));
        return EX_USAGE;
    }
    switch (rc) {
    case AL_ENOTFOUND:
        msg("no such key '%s' in namespace '%s'", q(key), q(h ? al_store_namespace(h) : ""));
        return EX_NOKEY;
    case AL_ENOSTORE: /* the same for every command, whatever its key */
        msg("no store at '%s' yet: 'agentlink init' or a first write (put, offload, import) "
            "creates it", q(h ? al_store_dir(h) : ""));
        return EX_FAIL;
    case AL_ETOOL:
        msg("tool name %s", al_strerror(rc));
        return EX_USAGE;
    case AL_ELIMITS:
        msg("limits refused: %s", al_strerror(rc));
        return EX_USAGE;
    default:
        break;
    }
    if (h)
        msg("store '%s': %s", q(al_store_dir(h)), al_strerror(rc));
    else
        msg("%s", al_strerror(rc));
    return EX_FAIL;
}

/* Message for a key found evicted or removed (E says when and why). */
static int report_gone(const char *key, const al_entry *e)
{
    char when[40];
    al_time_format(e->gone_ns, when, sizeof when);
    if (e->gone_reason == AL_REASON_REMOVED)
        msg("key '%s' was removed at %s (agentlink rm or drop-referenced); run the tool again for its result",
            q(key), when);
    else
        msg("key '%s' was evicted at %s to keep the store under max_total_bytes; run the tool again for its result",
            q(key), when);
    return EX_EVICTED;
}

/* ---- I/O --------------------------------------------------------------- */
static int write_all(const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            msg("cannot write to stdout: %s", strerror(errno));
            return EX_FAIL;
        }
        p += n;
        len -= (size_t)n;
    }
    return EX_OK;
}


/* Reads FD to its end, or to LIMIT + 1 bytes (one more tells "too big"):
 * *OUT is malloc'd. Returns 0 or an errno value. */
static int read_fd(int fd, uint64_t limit, char **out, size_t *len)
{
    al_buf b = {0};
    char chunk[65536];
    *out = NULL;
    *len = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            al_buf_release(&b);
            return e;
        }
        if (n == 0)
            break;
        al_buf_add(&b, chunk, (size_t)n);
        if (b.failed) {
            al_buf_release(&b);
            return ENOMEM;
        }
        if ((uint64_t)b.len > limit)
            break;
    }
    return al_buf_detach(&b, out, len);
}

/* The input's name in messages: "stdin" or "file 'PATH'". */
static const char *input_name(const char *path)
{
    static char name[600];
    if (!path)
        return "stdin";
    snprintf(name, sizeof name, "file '%s'", q(path));
    return name;
}

/* --max-input-bytes, or its default, into *MAX. */
static int input_limit(const opts *o, uint64_t *max)
{
    *max = CLI_MAX_INPUT_DEFAULT;
    if (o->max_input && al_size_parse(o->max_input, max)) {
        msg("--max-input-bytes '%s': %s", q(o->max_input), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    return EX_OK;
}

/* Opens the input of put/offload: PATH or stdin (cli_input.h). */
static int input_open(const opts *o, const char *path, cli_input *in)
{
    uint64_t max;
    int ex, rc;
    if ((ex = input_limit(o, &max)))
        return ex;
    rc = cli_input_open(in, path, max);
    if (rc == EISDIR) {
        msg("file '%s' is a directory, expected a file to store", q(path));
        return EX_USAGE;
    }
    if (rc) {
        msg("cannot read %s: %s", input_name(path), strerror(rc));
        return rc == ENOMEM ? EX_FAIL : EX_USAGE;
    }
    return EX_OK;
}

/* The message and exit code for RC from reading IN (PATH or stdin);
 * WHAT says what did not happen ("nothing was stored"). */
static int input_error(const cli_input *in, const char *path, int rc, const char *what)
{
    if (rc == CLI_EINPUT) {
        msg("%s is longer than --max-input-bytes %" PRIu64 "%s: refused, %s "
            "(--max-input-bytes N reads more)", input_name(path), in->max_input,
            in->max_input == CLI_MAX_INPUT_DEFAULT ? " (the default, 1 GiB)" : "", what);
        return EX_USAGE;
    }
    msg("cannot read %s: %s", input_name(path), rc > 0 ? strerror(rc) : al_strerror(rc));
    return EX_FAIL;
}

static int print_json(cJSON *j)
{
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    int rc;
    cJSON_Delete(j);
    if (!s) {
        msg("out of memory");
        return EX_FAIL;
    }
    rc = write_all(s, strlen(s));
    if (rc == EX_OK)
        rc = write_all("\n", 1);
    cJSON_free(s);
    return rc;
}

/* ---- policy and store ---------------------------------------------------- */
static const char *envv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int load_policy(const opts *o, al_policy **pol)
{
    char *err = NULL;
    int rc = al_policy_load(pol, o->config ? o->config : NULL, &err);
    if (rc == AL_ECONFIG) {
        msg("%s; nothing was written", err ? err : "config refused");
        al_free(err);
        return EX_USAGE;
    }
    if (rc) {
        msg("cannot load the offload policy: %s", al_strerror(rc));
        return EX_FAIL;
    }
    return EX_OK;
}

/* ---- fault guard -------------------------------------------------------
 * Each command is a process of its own, so it opens the store with the
 * quick page check (al_store_quick): a damaged page deeper in a tree can
 * still stop LMDB with SIGSEGV, SIGBUS, SIGFPE or an assertion (SIGABRT). Then the
 * handler prints what happened, in the words of STORE_ECORRUPT, and exits
 * 1; a write transaction that did not commit leaves the store as it was. */

static char guard_msg[1024]; /* the message up to the signal's name */

static void guard_fault(int sig)
{
    const char *name = sig == SIGBUS    ? "SIGBUS"
                       : sig == SIGABRT ? "SIGABRT"
                       : sig == SIGFPE  ? "SIGFPE"
                                        : "SIGSEGV";
    static const char tail[] = "); no change was committed\n";
    /* Best effort: there is nothing else to do when stderr fails. */
    if (write(STDERR_FILENO, guard_msg, strlen(guard_msg)) >= 0
        && write(STDERR_FILENO, name, strlen(name)) >= 0)
        (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
    _exit(EX_FAIL);
}

/* Arms the guard for the store in DIR (NULL: the default one). */
static void guard_arm(const char *dir)
{
    struct sigaction sa = {.sa_handler = guard_fault};
    snprintf(guard_msg, sizeof guard_msg,
             "agentlink: store '%s': %s (a damaged page stopped LMDB: ", dir ? dir : "(default)",
             al_strerror(AL_ECORRUPT));
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (int)SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
}

/* Opens the store with the precedence flag > environment > config >
 * default, and messages that name the setting at fault. */
static int open_store(const opts *o, const al_policy *pol, al_store **h)
{
    const char *ns = o->ns ? o->ns : envv("OFFLOADFS_NAMESPACE");
    const char *mount = o->mount ? o->mount : envv("OFFLOADFS_MOUNT");
    int rc;
    if (!ns)
        ns = al_policy_namespace(pol);
    if (!mount)
        mount = al_policy_mount(pol);
    guard_arm(o->store ? o->store : envv("OFFLOADFS_STORE"));
    rc = al_store_open_checked(h, o->store, ns, mount, pol, 0);
    if (rc == 0) {
        guard_arm(al_store_dir(*h));
        return EX_OK;
    }
    if (al_err_is_name(rc)) {
        msg("namespace '%s' %s", q(ns), al_strerror(rc));
        return EX_USAGE;
    }
    if (rc == AL_EMOUNT) {
        msg("mount '%s' is not an absolute path", q(mount));
        return EX_USAGE;
    }
    const char *dir = o->store ? o->store : envv("OFFLOADFS_STORE");
    if (rc == EINVAL && !dir) {
        msg("cannot find a default store: HOME is not set; use --store DIR");
        return EX_USAGE;
    }
    msg("cannot open store '%s': %s", q(dir ? dir : "(default)"), al_strerror(rc));
    return EX_FAIL;
}

/* Loads the policy (for namespace and mount) and opens the store. */
static int setup(const opts *o, al_policy **pol, al_store **h)
{
    int ex = load_policy(o, pol);
    if (ex == EX_OK && (ex = open_store(o, *pol, h)) != EX_OK) {
        al_policy_free(*pol);
        *pol = NULL;
    }
    return ex;
}

/* 0 when the handle's store exists, else AL_ENOSTORE (or why it cannot be
 * read): the commands that only read or remove fail on a missing store,
 * all in the same way (report()), instead of each in its own. */
static int need_store(al_store *h)
{
    al_stats s;
    return al_store_stats(h, &s);
}

static cJSON *entry_json(const char *key, const al_entry *e)
{
    char when[40];
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "key", key);
    cJSON_AddNumberToObject(j, "size", (double)e->size);
    if (e->has_tool)
        cJSON_AddStringToObject(j, "tool", e->tool);
    else
        cJSON_AddNullToObject(j, "tool");
    cJSON_AddStringToObject(j, "created", al_time_format(e->created_ns, when, sizeof when));
    cJSON_AddNumberToObject(j, "original_size", (double)e->original_size);
    cJSON_AddBoolToObject(j, "truncated", e->truncated);
    return j;
}

/* ---- commands ----------------------------------------------------------- */
static const char *compression_name(unsigned how)
{
    return how == AL_COMPRESS_ZSTD ? "zstd" : "none";
}

static int cmd_init(opts *o, int argc, char **argv)
{
    uint64_t total = 0, result = 0, nevicted = 0, cfg = 0;
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_stats s;
    int ex, rc;
    (void)argc;
    (void)argv;

    if (o->max_total && al_size_parse(o->max_total, &total)) {
        msg("--max-total-bytes '%s': %s", q(o->max_total), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    if (o->max_result && al_size_parse(o->max_result, &result)) {
        msg("--max-result-bytes '%s': %s", q(o->max_result), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    if (total > AL_MAX_TOTAL_LIMIT) {
        msg("--max-total-bytes %" PRIu64 " is above the largest bound a store can have, %" PRIu64
            " (16 TiB)", total, AL_MAX_TOTAL_LIMIT);
        return EX_USAGE;
    }
    if ((o->max_total && total < AL_MIN_LIMIT) || (o->max_result && result < AL_MIN_LIMIT)) {
        int t = o->max_total && total < AL_MIN_LIMIT;
        msg("%s %" PRIu64 " is below the minimum of %u bytes: a cut result needs room for "
            "its marker line", t ? "--max-total-bytes" : "--max-result-bytes", t ? total : result,
            AL_MIN_LIMIT);
        return EX_USAGE;
    }
    if (total && result > total) {
        msg("--max-result-bytes %" PRIu64 " is above --max-total-bytes %" PRIu64
            ": a result must fit in the store", result, total);
        return EX_USAGE;
    }
    if (o->compression && strcmp(o->compression, "zstd") && strcmp(o->compression, "none")) {
        msg("--compression '%s': must be zstd or none", q(o->compression));
        return EX_USAGE;
    }
    if ((ex = setup(o, &pol, &h)))
        return ex;
    rc = al_store_init(h, total, result, &nevicted);
    if (rc == 0 && o->compression)
        rc = al_store_set_compression(h, strcmp(o->compression, "zstd") ? AL_COMPRESS_NONE
                                                                         : AL_COMPRESS_ZSTD);
    if (rc == AL_ELIMITS) {
        al_stats cur;
        if (al_store_stats(h, &cur) == 0 && result > cur.max_total_bytes)
            msg("--max-result-bytes %" PRIu64 " is above the store's max_total_bytes %" PRIu64
                ": a result must fit in the store", result, cur.max_total_bytes);
        else
            msg("limits refused for store '%s': %s", q(al_store_dir(h)), al_strerror(rc));
        ex = EX_USAGE;
        goto cleanup;
    }
    if (rc || (rc = al_store_stats(h, &s)) || (rc = al_store_max_result(h, NULL, &cfg))) {
        ex = report(rc, h, NULL);
        goto cleanup;
    }
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddStringToObject(j, "store", al_store_dir(h));
            cJSON_AddNumberToObject(j, "max_total_bytes", (double)s.max_total_bytes);
            cJSON_AddNumberToObject(j, "max_result_bytes", (double)s.max_result_bytes);
            cJSON_AddNumberToObject(j, "max_result_bytes_configured", (double)cfg);
            cJSON_AddStringToObject(j, "compression", compression_name(s.compression));
            cJSON_AddNumberToObject(j, "evicted", (double)nevicted);
        }
        ex = print_json(j);
    } else {
        printf("store %s: max_total_bytes %" PRIu64 ", max_result_bytes %" PRIu64,
               al_store_dir(h), s.max_total_bytes, s.max_result_bytes);
        if (cfg > s.max_result_bytes) /* say it, while the bound holds it down */
            printf(" (%" PRIu64 " configured, held to max_total_bytes while the bound is lower)",
                   cfg);
        putchar('\n');
        if (o->compression)
            printf("compression %s for later results\n", compression_name(s.compression));
        if (nevicted)
            printf("evicted %" PRIu64 " result%s to fit the new bound\n", nevicted,
                   nevicted == 1 ? "" : "s");
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
cleanup:
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

static int cmd_put(opts *o, int argc, char **argv)
{
    const char *key = argv[0];
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_cutter *c = NULL;
    cli_input in = {.fd = -1};
    char *path = NULL;
    al_entry e;
    int ex, rc;
    (void)argc;

    if ((rc = al_key_check(key)))
        return report(rc, NULL, key);
    if (o->tool && al_tool_check(o->tool)) {
        msg("tool '%s': %s", q(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    /* Empty input is a 0-byte entry, as al_store_put() and the Python
     * binding's write() store it: a plain file may be empty too. */
    if ((ex = input_open(o, o->file, &in)))
        return ex;
    if ((ex = setup(o, &pol, &h)))
        goto cleanup;
    /* Streamed: only the head and a ring of the tail are held (cut.c). */
    if ((rc = al_store_cutter(h, &c))) {
        ex = report(rc, h, NULL);
        goto cleanup;
    }
    if ((rc = cli_input_to_cutter(&in, c))) {
        ex = input_error(&in, o->file, rc, "nothing was stored");
        goto cleanup;
    }
    rc = al_store_put_cutter(h, key, c, o->tool, &e, &path);
    if (rc) {
        ex = report(rc, h, key);
        goto cleanup;
    }
    if (e.truncated)
        msg("'%s' was %" PRIu64 " bytes, over max_result_bytes: kept its head and tail, %" PRIu64
            " bytes stored", q(key), e.original_size, e.size);
    if (o->json) {
        cJSON *j = entry_json(key, &e);
        if (j)
            cJSON_AddStringToObject(j, "path", path);
        ex = print_json(j);
    } else {
        ex = write_all(path, strlen(path));
        if (ex == EX_OK)
            ex = write_all("\n", 1);
    }
cleanup:
    al_free(path);
    al_cutter_free(c);
    cli_input_close(&in);
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

/* Prints offload's answer: OUT (OUTLEN bytes) goes into the conversation;
 * KEY (NULL when kept) and H give the path. */
static int offload_print(const opts *o, const al_store *h, const char *key, int offloaded,
                         const char *out, size_t outlen)
{
    char *path = NULL;
    cJSON *j;
    int ex;
    if (!o->json)
        return write_all(out, outlen);
    if ((j = cJSON_CreateObject())) {
        cJSON_AddBoolToObject(j, "offloaded", offloaded);
        if (key)
            cJSON_AddStringToObject(j, "key", key);
        else
            cJSON_AddNullToObject(j, "key");
        if (key && al_store_path_of(h, key, &path) == 0)
            cJSON_AddStringToObject(j, "path", path);
        else
            cJSON_AddNullToObject(j, "path");
        if (cli_json_add_bytes(j, "text", "encoding", out, outlen)) {
            cJSON_Delete(j);
            j = NULL;
        }
    }
    ex = print_json(j);
    al_free(path);
    return ex;
}

static int cmd_offload(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_cutter *c = NULL;
    cli_input in = {.fd = -1};
    al_buf b = {0};
    char *out = NULL, *key = NULL;
    size_t outlen = 0;
    uint64_t limit = 0;
    int ex, rc, kind = AL_OFFLOAD_NEVER, sure = 0, offloaded = 0;
    (void)argc;
    (void)argv;

    if (!o->tool)
        return usage_error("offload needs --tool NAME");
    if (!o->call_id)
        return usage_error("offload needs --call-id RAW");
    if (al_tool_check(o->tool)) {
        msg("tool '%s': %s", q(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    if ((ex = load_policy(o, &pol)))
        return ex;
    if ((ex = input_open(o, NULL, &in)))
        goto cleanup;
    /* Read until the rule is sure to offload, or to the end (cli_input.h). */
    al_policy_decide(pol, o->tool, NULL, 0, &kind, &limit);
    if ((rc = cli_input_prefix(&in, kind, limit, &b, &sure))) {
        ex = input_error(&in, NULL, rc, "nothing was stored");
        goto cleanup;
    }
    if (!sure && !al_policy_decide(pol, o->tool, b.p, b.len, NULL, NULL)) {
        /* Kept in the conversation: the store is not even opened. */
        ex = offload_print(o, NULL, NULL, 0, b.p ? b.p : "", b.len);
        goto cleanup;
    }
    if ((ex = open_store(o, pol, &h)))
        goto cleanup;
    if ((rc = al_key_derive(o->call_id, strlen(o->call_id), &key))) {
        ex = report(rc, h, NULL);
        goto cleanup;
    }
    if (!sure) {
        rc = al_offload(h, pol, o->tool, o->call_id, strlen(o->call_id), b.p, b.len,
                        &out, &outlen, &offloaded);
    } else {
        /* The prefix, then the rest, through a cutter: memory about
         * max_result_bytes whatever the length. */
        if ((rc = al_store_cutter(h, &c)) == 0 && (rc = al_cutter_add(c, b.p, b.len)) == 0) {
            al_buf_release(&b);
            if ((rc = cli_input_to_cutter(&in, c))) {
                ex = input_error(&in, NULL, rc, "nothing was stored");
                goto cleanup;
            }
            rc = al_offload_cutter(h, pol, o->tool, o->call_id, strlen(o->call_id), c, &out,
                                   &outlen);
            offloaded = rc == 0;
        }
    }
    if (rc) {
        ex = report(rc, h, key);
        goto cleanup;
    }
    ex = offload_print(o, h, key, offloaded, out, outlen);
cleanup:
    al_free(key);
    al_free(out);
    al_buf_release(&b);
    al_cutter_free(c);
    cli_input_close(&in);
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

static int cmd_key(opts *o, int argc, char **argv)
{
    char *key = NULL;
    int rc;
    (void)argc;
    rc = al_key_derive(argv[0], strlen(argv[0]), &key);
    if (rc)
        return report(rc, NULL, NULL);
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            if (cli_json_add_bytes(j, "raw", "raw_encoding", argv[0], strlen(argv[0]))
                || !cJSON_AddStringToObject(j, "key", key)) {
                cJSON_Delete(j);
                j = NULL;
            }
        }
        rc = print_json(j);
    } else {
        rc = write_all(key, strlen(key));
        if (rc == EX_OK)
            rc = write_all("\n", 1);
    }
    al_free(key);
    return rc;
}

static int cmd_get(opts *o, int argc, char **argv)
{
    const char *key = argv[0];
    al_policy *pol = NULL;
    al_store *h = NULL;
    void *data = NULL;
    size_t len = 0;
    al_entry e;
    int ex, rc;
    (void)argc;

    if ((rc = al_key_check(key)))
        return report(rc, NULL, key);
    if ((ex = setup(o, &pol, &h)))
        return ex;
    rc = al_store_get(h, key, &data, &len, &e);
    if (rc == AL_EEVICTED)
        ex = report_gone(key, &e);
    else if (rc)
        ex = report(rc, h, key);
    else
        ex = write_all(data, len);
    al_free(data);
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

typedef struct ls_ctx {
    int json;
    int n;
    int ex;
} ls_ctx;

static int ls_cb(const char *key, const al_entry *e, void *ctx)
{
    ls_ctx *c = ctx;
    if (c->json) {
        cJSON *j = entry_json(key, e);
        char *s = j ? cJSON_PrintUnformatted(j) : NULL;
        cJSON_Delete(j);
        if (!s)
            return ENOMEM;
        if (fputs(c->n ? "," : "", stdout) == EOF || fputs(s, stdout) == EOF) {
            cJSON_free(s);
            return EIO;
        }
        cJSON_free(s);
    } else if (printf("%s\t%" PRIu64 "\t%s\n", key, e->size, e->tool) < 0) {
        return EIO;
    }
    c->n++;
    return 0;
}

static int cmd_ls(opts *o, int argc, char **argv)
{
    ls_ctx c = {o->json, 0, EX_OK};
    al_policy *pol = NULL;
    al_store *h = NULL;
    int ex, rc;
    (void)argc;
    (void)argv;

    if ((ex = setup(o, &pol, &h)))
        return ex;
    if ((rc = need_store(h)) == 0) {
        if (o->json)
            fputs("[", stdout);
        rc = al_store_list(h, ls_cb, &c);
        if (o->json)
            fputs("]\n", stdout);
    }
    if (fflush(stdout) != 0 && rc == 0) {
        msg("cannot write to stdout: %s", strerror(errno));
        ex = EX_FAIL;
    } else if (rc) {
        ex = report(rc, h, NULL);
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

static int cmd_stat(opts *o, int argc, char **argv)
{
    const char *key = argv[0];
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_entry e;
    char when[40];
    int ex, rc;
    (void)argc;

    if ((rc = al_key_check(key)))
        return report(rc, NULL, key);
    if ((ex = setup(o, &pol, &h)))
        return ex;
    rc = al_store_stat(h, key, &e);
    if (rc == 0) {
        if (o->json) {
            cJSON *j = entry_json(key, &e);
            if (j)
                cJSON_AddStringToObject(j, "state", "live");
            ex = print_json(j);
        } else {
            printf("key: %s\nstate: live\nsize: %" PRIu64 "\ntool: %s\ncreated: %s\n"
                   "original_size: %" PRIu64 "\ntruncated: %d\n",
                   key, e.size, e.has_tool ? e.tool : "", al_time_format(e.created_ns, when, sizeof when),
                   e.original_size, e.truncated);
            ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        }
    } else if (rc == AL_EEVICTED) {
        al_time_format(e.gone_ns, when, sizeof when);
        if (o->json) {
            cJSON *j = cJSON_CreateObject();
            if (j) {
                cJSON_AddStringToObject(j, "key", key);
                cJSON_AddStringToObject(j, "state", "evicted");
                cJSON_AddStringToObject(j, "evicted_at", when);
                cJSON_AddStringToObject(j, "reason", al_reason_name(e.gone_reason));
            }
            print_json(j);
        } else {
            printf("key: %s\nstate: evicted\nevicted_at: %s\nreason: %s\n", key, when,
                   al_reason_name(e.gone_reason));
            fflush(stdout);
        }
        ex = report_gone(key, &e);
    } else {
        ex = report(rc, h, key);
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

static int cmd_rm(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    int ex = EX_OK, rc;

    /* Refuse a bad key before removing anything. */
    for (int i = 0; i < argc; i++)
        if ((rc = al_key_check(argv[i])))
            return report(rc, NULL, argv[i]);
    if ((ex = setup(o, &pol, &h)))
        return ex;
    if ((rc = need_store(h)))
        ex = report(rc, h, NULL);
    for (int i = 0; rc == 0 && i < argc; i++) {
        al_entry e;
        int one;
        int r = al_store_remove(h, argv[i], &e);
        if (r == AL_EEVICTED)
            one = report_gone(argv[i], &e);
        else if (r)
            one = report(r, h, argv[i]);
        else
            one = EX_OK;
        if (ex == EX_OK)
            ex = one; /* the first failure decides the exit code */
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

typedef struct drop_ctx {
    const al_store *h;
    int json;
    cJSON *arr;
} drop_ctx;

static int drop_cb(const char *key, const al_entry *e, void *ctx)
{
    drop_ctx *d = ctx;
    char *path = NULL;
    (void)e;
    if (d->json)
        return cJSON_AddItemToArray(d->arr, cJSON_CreateString(key)) ? 0 : ENOMEM;
    if (al_store_path_of(d->h, key, &path))
        return ENOMEM;
    printf("%s\n", path);
    al_free(path);
    return 0;
}

static int cmd_drop(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    drop_ctx d = {NULL, o->json, NULL};
    char *text = NULL;
    size_t len = 0, n = 0;
    uint64_t max;
    int ex, rc;
    (void)argc;
    (void)argv;

    if ((ex = setup(o, &pol, &h)))
        return ex;
    if ((rc = need_store(h))) {
        ex = report(rc, h, NULL);
        goto cleanup;
    }
    if ((ex = input_limit(o, &max)))
        goto cleanup;
    if ((rc = read_fd(STDIN_FILENO, max, &text, &len))) {
        msg("cannot read stdin: %s", strerror(rc));
        ex = EX_FAIL;
        goto cleanup;
    }
    if ((uint64_t)len > max) {
        cli_input in = {.max_input = max};
        ex = input_error(&in, NULL, CLI_EINPUT, "nothing was removed");
        goto cleanup;
    }
    d.h = h;
    if (o->json && !(d.arr = cJSON_CreateArray())) {
        ex = report(ENOMEM, h, NULL);
        goto cleanup;
    }
    rc = al_store_drop_referenced(h, text, len, drop_cb, &d, &n);
    if (rc) {
        ex = report(rc, h, NULL);
        goto cleanup;
    }
    if (o->json) {
        ex = print_json(d.arr);
        d.arr = NULL;
    } else {
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
cleanup:
    cJSON_Delete(d.arr);
    free(text);
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

static int cmd_stats(opts *o, int argc, char **argv)
{
    uint64_t cfg = 0;
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_stats s;
    int ex, rc;
    (void)argc;
    (void)argv;

    if ((ex = setup(o, &pol, &h)))
        return ex;
    rc = al_store_stats(h, &s);
    if (rc == 0)
        rc = al_store_max_result(h, NULL, &cfg);
    if (rc) {
        ex = report(rc, h, NULL);
    } else if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddNumberToObject(j, "entries", (double)s.entries);
            cJSON_AddNumberToObject(j, "bytes", (double)s.bytes);
            cJSON_AddNumberToObject(j, "stored_bytes", (double)s.stored_bytes);
            cJSON_AddNumberToObject(j, "max_total_bytes", (double)s.max_total_bytes);
            cJSON_AddNumberToObject(j, "max_result_bytes", (double)s.max_result_bytes);
            cJSON_AddNumberToObject(j, "max_result_bytes_configured", (double)cfg);
            cJSON_AddNumberToObject(j, "evictions", (double)s.evictions);
            cJSON_AddNumberToObject(j, "removals", (double)s.removals);
            cJSON_AddNumberToObject(j, "tombstones", (double)s.tombstones);
            cJSON_AddNumberToObject(j, "file_bytes", (double)s.file_bytes);
            cJSON_AddStringToObject(j, "store", al_store_dir(h));
        }
        ex = print_json(j);
    } else {
        printf("store: %s\nentries: %" PRIu64 "\nbytes: %" PRIu64 "\nmax_total_bytes: %" PRIu64
               "\nmax_result_bytes: %" PRIu64 "\nevictions: %" PRIu64 "\nremovals: %" PRIu64 "\n",
               al_store_dir(h), s.entries, s.bytes, s.max_total_bytes, s.max_result_bytes,
               s.evictions, s.removals);
        if (cfg > s.max_result_bytes)
            printf("max_result_bytes_configured: %" PRIu64 " (held to max_total_bytes while "
                   "the bound is lower)\n", cfg);
        printf("stored_bytes: %" PRIu64 "\n", s.stored_bytes);
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

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

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
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
    t = now_ms();
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
    imp_msg(im, "skipped '%s': %s; left in place", q(name), detail);
    if (im->jskips) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddStringToObject(j, "file", q(name));
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
    rc = read_fd(fd, im->max_result, &data, &len);
    close(fd);
    if (rc == ENOMEM) {
        imp_msg(im, "out of memory reading '%s'", q(name));
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
        im->ex = report(rc, im->h, name);
        free(data);
        return -1;
    }
    im->imported++;
    im->run_bytes += e.size;
    if (im->jentries) {
        cJSON *j = entry_json(name, &e);
        if (j) {
            cJSON_AddStringToObject(j, "file", name);
            cJSON_AddStringToObject(j, "path", path);
            cJSON_AddItemToArray(im->jentries, j);
        }
    }
    if (e.truncated) { /* the limit was lowered since we looked: keep the whole original */
        imp_msg(im, "'%s' was cut to %" PRIu64 " bytes by a lowered max_result_bytes; "
                "original kept", q(name), e.size);
        im->not_removed++;
    } else if (!im->o->keep) {
        if (fstatat(im->dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || !same_file(&sb, &now)) {
            imp_msg(im, "'%s' changed while it was imported; original kept", q(name));
            im->not_removed++;
        } else if (unlinkat(im->dfd, name, 0) != 0) {
            imp_msg(im, "imported '%s' but cannot remove it: %s", q(name), strerror(errno));
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
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            imp_file *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                rc = ENOMEM;
                break;
            }
            v = nv;
            cap = ncap;
        }
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

static int cmd_import(opts *o, int argc, char **argv)
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
        msg("tool '%s': %s", q(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    im.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (im.dfd < 0) {
        msg("cannot import directory '%s': %s", q(dir), strerror(errno));
        return errno == ENOMEM ? EX_FAIL : EX_USAGE;
    }
    /* Resolve the store first (nothing is created yet): DIR must not be it,
     * nor hold or lie inside any LMDB environment (cli_importdir.c). */
    if ((ex = setup(o, &pol, &im.h)))
        goto cleanup;
    if ((rc = cli_importdir_check(im.dfd, dir, al_store_dir(im.h), &why))) {
        msg("%s", why ? why : "out of memory");
        ex = rc == 1 ? EX_USAGE : EX_FAIL;
        goto cleanup;
    }
    if (!o->keep && faccessat(im.dfd, ".", W_OK, AT_EACCESS) != 0) {
        msg("cannot remove files from directory '%s': %s; use --keep to import copies",
            q(dir), strerror(errno));
        ex = EX_USAGE;
        goto cleanup;
    }
    if ((rc = imp_list(im.dfd, &files, &nfiles))) {
        msg("cannot list directory '%s': %s", q(dir), strerror(rc));
        ex = rc == ENOMEM ? EX_FAIL : EX_USAGE;
        goto cleanup;
    }
    if (o->json && (!(im.jentries = cJSON_CreateArray()) || !(im.jskips = cJSON_CreateArray()))) {
        msg("out of memory");
        ex = EX_FAIL;
        goto cleanup;
    }
    if (nfiles > 0) {
        /* A write command: create the store when missing, then read its limits. */
        if ((rc = al_store_init(im.h, 0, 0, NULL)) || (rc = al_store_stats(im.h, &st))) {
            ex = report(rc, im.h, NULL);
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
        msg("%s", line);
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
        int jx = print_json(j);
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

static const cmd commands[] = {
    {"init", cmd_init, 0, 0, O_MAXT | O_MAXR | O_COMP, ""},
    {"put", cmd_put, 1, 1, O_TOOL | O_FILE | O_MAXI, " KEY"},
    {"offload", cmd_offload, 0, 0, O_TOOL | O_CALL | O_MAXI, ""},
    {"key", cmd_key, 1, 1, 0, " RAW"},
    {"get", cmd_get, 1, 1, 0, " KEY"},
    {"ls", cmd_ls, 0, 0, 0, ""},
    {"stat", cmd_stat, 1, 1, 0, " KEY"},
    {"rm", cmd_rm, 1, -1, 0, " KEY..."},
    {"drop-referenced", cmd_drop, 0, 0, O_MAXI, ""},
    {"stats", cmd_stats, 0, 0, 0, ""},
    {"import", cmd_import, 1, 1, O_TOOL | O_KEEP, " DIR"},
};

static const char *const opt_names[] = {"--tool", "--file", "--call-id",
                                        "--max-total-bytes", "--max-result-bytes",
                                        "--keep", "--max-input-bytes", "--compression"};

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"mount", required_argument, NULL, OPT_MOUNT},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"json", no_argument, NULL, OPT_JSON},
        {"tool", required_argument, NULL, OPT_TOOL},
        {"file", required_argument, NULL, OPT_FILE},
        {"call-id", required_argument, NULL, OPT_CALL_ID},
        {"max-total-bytes", required_argument, NULL, OPT_MAX_TOTAL},
        {"max-result-bytes", required_argument, NULL, OPT_MAX_RESULT},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"max-input-bytes", required_argument, NULL, OPT_MAX_INPUT},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    opts o = {0};
    const cmd *c = NULL;
    int ch, nargs;

    if (cli_mcp_wanted(argc, argv, longopts)) /* its own options and the server's argv */
        return cli_mcp_main(argc, argv);
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_STORE:
            if (!*optarg)
                return usage_error("--store needs a directory, got ''");
            o.store = optarg;
            break;
        case OPT_NAMESPACE: o.ns = optarg; break;
        case OPT_MOUNT: o.mount = optarg; break;
        case OPT_CONFIG: o.config = optarg; break;
        case OPT_JSON: o.json = 1; break;
        case OPT_TOOL: o.tool = optarg; o.given |= O_TOOL; break;
        case OPT_FILE: o.file = optarg; o.given |= O_FILE; break;
        case OPT_CALL_ID: o.call_id = optarg; o.given |= O_CALL; break;
        case OPT_MAX_TOTAL: o.max_total = optarg; o.given |= O_MAXT; break;
        case OPT_MAX_RESULT: o.max_result = optarg; o.given |= O_MAXR; break;
        case OPT_KEEP: o.keep = 1; o.given |= O_KEEP; break;
        case OPT_MAX_INPUT: o.max_input = optarg; o.given |= O_MAXI; break;
        case OPT_COMPRESSION: o.compression = optarg; o.given |= O_COMP; break;
        case 'h':
            fputs(usage_text, stdout);
            return fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        case 'V':
            printf("agentlink %s\n", al_version());
            return fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        case ':':
            return usage_error("option '%s' needs a value", q(argv[optind - 1]));
        default:
            if (optopt && !strncmp(argv[optind - 1], "--", 2)) /* --json=1 */
                return usage_error("option '%s' takes no value", q(argv[optind - 1]));
            if (optopt)
                return usage_error("unknown option '-%c'", optopt);
            return usage_error("unknown option '%s'", q(argv[optind - 1]));
        }
    }
    if (optind >= argc)
        return usage_error("no command given");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[optind], commands[i].name) == 0)
            c = &commands[i];
    if (!c)
        return usage_error("unknown command '%s'", q(argv[optind]));
    for (unsigned b = 0; b < sizeof opt_names / sizeof opt_names[0]; b++)
        if ((o.given & (1u << b)) && !(c->allowed & (1u << b)))
            return usage_error("%s does not take %s", c->name, opt_names[b]);
    nargs = argc - optind - 1;
    if (nargs < c->min_args || (c->max_args >= 0 && nargs > c->max_args))
        return usage_error("usage: agentlink %s%s", c->name, c->args);
    return c->run(&o, nargs, argv + optind + 1);
}
