/* test_handle.c -- the al_store handle over a real store in a temp dir:
 * put/get/stat/rm/list, eviction, the cut, offload, drop-referenced,
 * resolution of store, namespace and mount. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"

struct fx {
    char base[64];
    char dir[96];
    al_store *h;
};

static void rmrf(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-al.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir, sizeof f->dir, "%s/store", f->base);
    assert_int_equal(al_store_open(&f->h, f->dir, "default", "/large_tool_results", NULL), 0);
    *state = f;
    return 0;
}

/* The working directory at start: teardown goes back to it, so that a test
 * that failed in another directory leaves the next ones where they began. */
static char start_cwd[4096];

static int teardown(void **state)
{
    struct fx *f = *state;
    if (start_cwd[0] && chdir(start_cwd) != 0)
        return -1;
    al_store_close(f->h);
    rmrf(f->base);
    free(f);
    return 0;
}

static void put_ok(al_store *h, const char *key, const char *data, size_t len)
{
    assert_int_equal(al_store_put(h, key, data, len, "t", NULL, NULL), 0);
}

static void store_put_should_round_trip_bytes(void **state)
{
    struct fx *f = *state;
    const char data[] = "bin\0ary\xff\n";
    al_entry e;
    char *path = NULL;
    void *got = NULL;
    size_t len = 0;
    uint64_t before = (uint64_t)time(NULL) * 1000000000u;

    assert_int_equal(al_store_put(f->h, "k1", data, sizeof data - 1, "bash", &e, &path), 0);
    assert_string_equal(path, "/large_tool_results/k1");
    assert_int_equal(e.size, sizeof data - 1);
    assert_int_equal(e.truncated, 0);
    al_free(path);
    assert_int_equal(al_store_get(f->h, "k1", &got, &len, &e), 0);
    assert_int_equal(len, sizeof data - 1);
    assert_memory_equal(got, data, len);
    assert_string_equal(e.tool, "bash");
    assert_int_equal(e.has_tool, 1);
    assert_int_equal(e.original_size, len);
    assert_true(e.created_ns + 2000000000u >= before);
    al_free(got);
    /* the store was made with the modes of doc/contract.md */
    struct stat sb;
    assert_int_equal(stat(f->dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
}

static void store_get_should_tell_never_written_from_no_store(void **state)
{
    struct fx *f = *state;
    void *got = (void *)1;
    size_t len = 9;
    al_entry e;
    assert_int_equal(al_store_get(f->h, "nope", &got, &len, &e), AL_ENOSTORE);
    assert_null(got);
    assert_false(exists(f->dir)); /* reading creates nothing */
    put_ok(f->h, "k", "v", 1);
    assert_int_equal(al_store_get(f->h, "nope", &got, &len, &e), AL_ENOTFOUND);
    assert_int_equal(al_store_stat(f->h, "nope", &e), AL_ENOTFOUND);
}

static void store_remove_should_leave_the_key_evicted(void **state)
{
    struct fx *f = *state;
    void *got = NULL;
    size_t len;
    al_entry e;
    put_ok(f->h, "k", "value", 5);
    assert_int_equal(al_store_remove(f->h, "k", NULL), 0);
    assert_int_equal(al_store_get(f->h, "k", &got, &len, &e), AL_EEVICTED);
    assert_int_equal(e.gone_reason, AL_REASON_REMOVED);
    assert_true(e.gone_ns > 0);
    assert_int_equal(al_store_remove(f->h, "k", &e), AL_EEVICTED);
    assert_int_equal(al_store_remove(f->h, "never", &e), AL_ENOTFOUND);
    assert_string_equal(al_reason_name(AL_REASON_REMOVED), "removed");
}

static void store_put_should_evict_the_oldest_to_fit(void **state)
{
    struct fx *f = *state;
    char buf[400];
    al_entry e;
    unsigned x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) { /* bytes that do not compress */
        x = x * 1103515245u + 12345u;
        buf[i] = (char)(x >> 23);
    }
    assert_int_equal(al_store_init(f->h, 1000, 0, NULL), 0);
    put_ok(f->h, "a", buf, sizeof buf);
    put_ok(f->h, "b", buf, sizeof buf);
    put_ok(f->h, "c", buf, sizeof buf);
    assert_int_equal(al_store_stat(f->h, "a", &e), AL_EEVICTED);
    assert_int_equal(e.gone_reason, AL_REASON_EVICTED);
    assert_int_equal(al_store_stat(f->h, "b", &e), 0);
    assert_int_equal(al_store_stat(f->h, "c", &e), 0);
    al_stats s;
    assert_int_equal(al_store_stats(f->h, &s), 0);
    assert_int_equal(s.entries, 2);
    assert_int_equal(s.bytes, 800);
    assert_int_equal(s.evictions, 1);
    assert_int_equal(s.max_total_bytes, 1000);
}

static void store_put_should_cut_results_over_max_result_bytes(void **state)
{
    struct fx *f = *state;
    size_t n = 50000;
    char *big = malloc(n);
    void *got = NULL;
    size_t len;
    al_entry e;
    for (size_t i = 0; i < n; i++)
        big[i] = (i % 80 == 79) ? '\n' : (char)('a' + i % 26);
    assert_int_equal(al_store_init(f->h, 0, 4096, NULL), 0);
    assert_int_equal(al_store_put(f->h, "big", big, n, "make", &e, NULL), 0);
    assert_true(e.size <= 4096);
    assert_int_equal(e.truncated, 1);
    assert_int_equal(e.original_size, n);
    assert_int_equal(al_store_get(f->h, "big", &got, &len, NULL), 0);
    assert_int_equal(len, e.size);
    assert_memory_equal((char *)got + len - 2000, big + n - 2000, 2000); /* the tail */
    assert_non_null(memmem(got, len, "bytes cut here", 14));
    al_free(got);
    free(big);
}

static void store_init_should_refuse_result_above_total(void **state)
{
    struct fx *f = *state;
    al_stats s;
    assert_int_equal(al_store_init(f->h, 1u << 20, 2u << 20, NULL), AL_ELIMITS);
    assert_int_equal(al_store_stats(f->h, &s), 0); /* created, limits refused */
    assert_int_equal(s.max_total_bytes, 1ull << 30); /* limits unchanged */
}

static void store_init_should_refuse_a_bound_over_16_tib(void **state)
{
    struct fx *f = *state;
    al_stats s;
    assert_int_equal(al_store_init(f->h, UINT64_MAX, 0, NULL), AL_ELIMITS);
    assert_int_equal(al_store_init(f->h, AL_MAX_TOTAL_LIMIT + 1, 0, NULL), AL_ELIMITS);
    assert_int_equal(al_store_init(f->h, 0, UINT64_MAX, NULL), AL_ELIMITS);
    assert_non_null(strstr(al_strerror(AL_ELIMITS), "16 TiB"));
    assert_int_equal(al_store_stats(f->h, &s), AL_ENOSTORE); /* refused before creating */
}

static void store_init_should_keep_the_configured_result_under_a_lower_bound(void **state)
{
    struct fx *f = *state;
    uint64_t in_force = 0, cfg = 0;
    al_stats s;
    assert_int_equal(al_store_max_result(f->h, &in_force, &cfg), AL_ENOSTORE);
    assert_int_equal(al_store_init(f->h, 63, 0, NULL), AL_ELIMITS); /* no room for the marker */
    assert_int_equal(al_store_init(f->h, 0, 1, NULL), AL_ELIMITS);
    assert_int_equal(al_store_max_result(f->h, NULL, NULL), AL_ENOSTORE); /* nothing created */
    assert_int_equal(al_store_init(f->h, 1u << 20, 0, NULL), 0);
    assert_int_equal(al_store_max_result(f->h, &in_force, &cfg), 0);
    assert_int_equal(in_force, 1u << 20);
    assert_int_equal(cfg, 64u << 20);
    assert_int_equal(al_store_stats(f->h, &s), 0);
    assert_int_equal(s.max_result_bytes, 1u << 20); /* never above the bound */
    assert_int_equal(al_store_init(f->h, 1u << 30, 0, NULL), 0);
    assert_int_equal(al_store_max_result(f->h, &in_force, &cfg), 0);
    assert_int_equal(in_force, 64u << 20);
    assert_int_equal(cfg, 64u << 20);
    assert_int_equal(al_store_init(f->h, AL_MIN_LIMIT, 0, NULL), 0);
    assert_int_equal(al_store_max_result(f->h, &in_force, NULL), 0);
    assert_int_equal(in_force, AL_MIN_LIMIT);
}

static void store_put_should_refuse_bad_keys_and_tools_without_writing(void **state)
{
    struct fx *f = *state;
    char *path = (char *)1;
    assert_int_equal(al_store_put(f->h, "a/b", "x", 1, NULL, NULL, &path), AL_ENAME_SLASH);
    assert_null(path);
    assert_int_equal(al_store_put(f->h, ".x", "x", 1, NULL, NULL, NULL), AL_ENAME_DOT);
    assert_int_equal(al_store_put(f->h, "k", "x", 1, "bad\ttool", NULL, NULL), AL_ETOOL);
    assert_int_equal(al_store_put(f->h, "k", "x", 1, "", NULL, NULL), AL_ETOOL);
    assert_false(exists(f->dir));
}

static void store_key_of_should_take_paths_and_keys(void **state)
{
    struct fx *f = *state;
    char *k = NULL;
    assert_int_equal(al_store_key_of(f->h, "/large_tool_results/call_1", &k), 0);
    assert_string_equal(k, "call_1");
    al_free(k);
    assert_int_equal(al_store_key_of(f->h, "call_1", &k), 0);
    assert_string_equal(k, "call_1");
    al_free(k);
    assert_int_equal(al_store_key_of(f->h, "/elsewhere/call_1", &k), AL_ENOTMOUNT);
    assert_int_equal(al_store_key_of(f->h, "/large_tool_results/a/b", &k), AL_ENOTMOUNT);
    assert_int_equal(al_store_key_of(f->h, "/large_tool_results/", &k), AL_ENOTMOUNT);
    assert_int_equal(al_store_key_of(f->h, "/large_tool_resultsX/k", &k), AL_ENOTMOUNT);
    assert_int_equal(al_store_key_of(f->h, ".hidden", &k), AL_ENAME_DOT);
    assert_null(k);
}

static void store_open_should_follow_flag_env_config_default(void **state)
{
    struct fx *f = *state;
    al_policy *pol = NULL;
    al_store *h = NULL;
    const char *json = "{\"namespace\": \"cfg\", \"mount\": \"/cfg/mnt/\"}";
    assert_int_equal(al_policy_parse(&pol, json, strlen(json), NULL, NULL), 0);

    setenv("OFFLOADFS_NAMESPACE", "env", 1);
    setenv("OFFLOADFS_MOUNT", "/env/mnt//", 1);
    setenv("OFFLOADFS_STORE", f->dir, 1);
    assert_int_equal(al_store_open(&h, NULL, "flag", "/flag/mnt", pol), 0);
    assert_string_equal(al_store_namespace(h), "flag");
    assert_string_equal(al_store_mount(h), "/flag/mnt");
    assert_string_equal(al_store_dir(h), f->dir);
    al_store_close(h);
    assert_int_equal(al_store_open(&h, NULL, NULL, NULL, pol), 0);
    assert_string_equal(al_store_namespace(h), "env");
    assert_string_equal(al_store_mount(h), "/env/mnt");
    al_store_close(h);
    unsetenv("OFFLOADFS_NAMESPACE");
    unsetenv("OFFLOADFS_MOUNT");
    unsetenv("OFFLOADFS_STORE");
    assert_int_equal(al_store_open(&h, f->dir, NULL, NULL, pol), 0);
    assert_string_equal(al_store_namespace(h), "cfg");
    assert_string_equal(al_store_mount(h), "/cfg/mnt");
    al_store_close(h);
    assert_int_equal(al_store_open(&h, NULL, NULL, NULL, NULL), 0);
    assert_string_equal(al_store_namespace(h), "default");
    assert_string_equal(al_store_mount(h), "/large_tool_results");
    if (geteuid() == 0)
        assert_string_equal(al_store_dir(h), "/var/lib/offloadfs");
    al_store_close(h);
    al_policy_free(pol);
}

static void store_open_should_refuse_bad_namespace_and_mount(void **state)
{
    struct fx *f = *state;
    al_store *h = (al_store *)1;
    assert_int_equal(al_store_open(&h, f->dir, "a/b", NULL, NULL), AL_ENAME_SLASH);
    assert_null(h);
    assert_int_equal(al_store_open(&h, f->dir, NULL, "relative", NULL), AL_EMOUNT);
    assert_int_equal(al_store_open(&h, "", NULL, NULL, NULL), EINVAL);
}

/* A relative store directory is the one under the working directory at
 * open: a later chdir() (an agent moving into its workspace) must not send
 * the handle's reads and writes to another store. */
static void store_open_should_pin_a_relative_dir_to_the_cwd_at_open(void **state)
{
    struct fx *f = *state;
    char other[112], path[160];
    al_store *h = NULL;
    void *got = NULL;
    size_t len = 0;

    snprintf(other, sizeof other, "%s/elsewhere", f->base);
    assert_int_equal(mkdir(other, 0755), 0);
    assert_int_equal(chdir(f->base), 0);
    assert_int_equal(al_store_open(&h, "rel", NULL, NULL, NULL), 0);
    assert_string_equal(al_store_dir(h), "rel"); /* shown as given */
    put_ok(h, "before", "1", 1);
    assert_int_equal(chdir(other), 0);
    assert_int_equal(al_store_get(h, "before", &got, &len, NULL), 0);
    assert_int_equal(len, 1);
    al_free(got);
    put_ok(h, "after", "2", 1);
    snprintf(path, sizeof path, "%s/rel", other);
    assert_false(exists(path));
    assert_int_equal(chdir(start_cwd), 0);
    al_store_close(h);
    snprintf(path, sizeof path, "%s/rel", f->base);
    assert_int_equal(al_store_open(&h, path, NULL, NULL, NULL), 0);
    assert_int_equal(al_store_get(h, "after", &got, &len, NULL), 0);
    assert_int_equal(len, 1);
    al_free(got);
    al_store_close(h);
}

static void store_should_isolate_namespaces(void **state)
{
    struct fx *f = *state;
    al_store *other = NULL;
    al_entry e;
    put_ok(f->h, "k", "v", 1);
    assert_int_equal(al_store_open(&other, f->dir, "run2", NULL, NULL), 0);
    assert_int_equal(al_store_stat(other, "k", &e), AL_ENOTFOUND);
    put_ok(other, "k", "w", 1);
    assert_int_equal(al_store_stat(f->h, "k", &e), 0);
    assert_int_equal(e.size, 1);
    al_store_close(other);
}

typedef struct seen {
    char keys[8][16];
    int n;
} seen;

static int collect(const char *key, const al_entry *e, void *ctx)
{
    seen *s = ctx;
    (void)e;
    if (s->n < 8)
        snprintf(s->keys[s->n++], sizeof s->keys[0], "%s", key);
    return 0;
}

static void store_list_should_list_live_keys_in_order(void **state)
{
    struct fx *f = *state;
    seen s = {0};
    assert_int_equal(al_store_list(f->h, collect, &s), AL_ENOSTORE);
    put_ok(f->h, "b", "1", 1);
    put_ok(f->h, "a", "22", 2);
    put_ok(f->h, "c", "333", 3);
    assert_int_equal(al_store_remove(f->h, "c", NULL), 0);
    assert_int_equal(al_store_list(f->h, collect, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "a");
    assert_string_equal(s.keys[1], "b");
}

static void offload_should_return_kept_results_unchanged(void **state)
{
    struct fx *f = *state;
    const char data[] = "short \xff result\0with nul";
    char *out = NULL;
    size_t n = 0;
    int off = -1;
    assert_int_equal(al_offload(f->h, NULL, "bash", "id1", 3, data, sizeof data - 1, &out, &n, &off), 0);
    assert_int_equal(off, 0);
    assert_int_equal(n, sizeof data - 1);
    assert_memory_equal(out, data, n);
    al_free(out);
    assert_false(exists(f->dir)); /* the store was not touched */
}

static void offload_should_store_and_return_a_pointer(void **state)
{
    struct fx *f = *state;
    al_policy *pol = NULL;
    const char *json = "{\"rules\": [{\"tools\": [\"web_search\"], \"offload\": \"always\"}]}";
    const char *raw = "call/../evil";
    char *out = NULL, *key = NULL, *path = NULL;
    void *got = NULL;
    size_t n, len;
    int off = 0;
    assert_int_equal(al_policy_parse(&pol, json, strlen(json), NULL, NULL), 0);
    assert_int_equal(al_offload(f->h, pol, "web_search", raw, strlen(raw), "page\ntext\n", 10,
                                &out, &n, &off), 0);
    assert_int_equal(off, 1);
    assert_int_equal(al_key_derive(raw, strlen(raw), &key), 0);
    assert_int_equal(al_store_path_of(f->h, key, &path), 0);
    assert_non_null(strstr(out, path));
    assert_non_null(strstr(out, "Size: 10 bytes, 2 lines."));
    assert_int_equal(al_store_get(f->h, key, &got, &len, NULL), 0);
    assert_int_equal(len, 10);
    assert_memory_equal(got, "page\ntext\n", 10);
    al_free(got);
    al_free(out);
    al_free(path);
    al_free(key);
    al_policy_free(pol);
}

static void offload_should_point_at_the_cut_bytes(void **state)
{
    struct fx *f = *state;
    size_t n = 40000, outlen;
    char *big = malloc(n), *out = NULL;
    for (size_t i = 0; i < n; i++)
        big[i] = (i % 100 == 99) ? '\n' : 'o';
    memcpy(big + n - 12, "FINAL ERROR\n", 12);
    assert_int_equal(al_store_init(f->h, 0, 3000, NULL), 0);
    assert_int_equal(al_offload(f->h, NULL, "make", "c1", 2, big, n, &out, &outlen, NULL), 0);
    assert_non_null(strstr(out, "cut from 40000 bytes"));
    assert_non_null(strstr(out, "FINAL ERROR\n"));
    assert_null(strstr(out, "Size: 40000"));
    al_free(out);
    free(big);
}

static void drop_referenced_should_remove_mentioned_keys_only(void **state)
{
    struct fx *f = *state;
    const char *text = "see /large_tool_results/ab. Then cat '/large_tool_results/c'\n"
                       "and /large_tool_results/c again; /other/a is elsewhere";
    size_t n = 0;
    al_entry e;
    put_ok(f->h, "a", "1", 1);
    put_ok(f->h, "ab", "2", 1);
    put_ok(f->h, "c", "3", 1);
    put_ok(f->h, "d", "4", 1);
    assert_int_equal(al_store_drop_referenced(f->h, text, strlen(text), NULL, NULL, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(al_store_stat(f->h, "ab", &e), AL_EEVICTED);
    assert_int_equal(e.gone_reason, AL_REASON_REMOVED);
    assert_int_equal(al_store_stat(f->h, "c", &e), AL_EEVICTED);
    assert_int_equal(al_store_stat(f->h, "a", &e), 0); /* "ab" matched, not "a" */
    assert_int_equal(al_store_stat(f->h, "d", &e), 0);
    /* nothing mentioned: nothing dropped */
    assert_int_equal(al_store_drop_referenced(f->h, "no paths", 8, NULL, NULL, &n), 0);
    assert_int_equal(n, 0);
}

static void store_should_survive_its_directory_being_removed(void **state)
{
    struct fx *f = *state;
    void *got = NULL;
    size_t len;
    put_ok(f->h, "k", "first", 5);
    rmrf(f->dir);
    assert_int_equal(al_store_get(f->h, "k", &got, &len, NULL), AL_ENOSTORE);
    put_ok(f->h, "k2", "second", 6);
    assert_true(exists(f->dir));
    assert_int_equal(al_store_get(f->h, "k2", &got, &len, NULL), 0);
    assert_memory_equal(got, "second", 6);
    al_free(got);
    assert_int_equal(al_store_get(f->h, "k", &got, &len, NULL), AL_ENOTFOUND);
}

static void store_puts_should_count_every_write_and_no_store_is_enostore(void **state)
{
    struct fx *f = *state;
    al_store *other;
    uint64_t n = 99;
    assert_int_equal(al_store_puts(f->h, &n), AL_ENOSTORE);
    assert_int_equal(n, 99);
    put_ok(f->h, "a", "1", 1);
    put_ok(f->h, "a", "2", 1); /* a replace counts */
    assert_int_equal(al_store_put(f->h, "x/y", "3", 1, "t", NULL, NULL), AL_ENAME_SLASH);
    /* Another handle (another writer) adds to the same count. */
    assert_int_equal(al_store_open(&other, f->dir, "other", "/large_tool_results", NULL), 0);
    put_ok(other, "b", "4", 1);
    assert_int_equal(al_store_puts(other, &n), 0);
    assert_int_equal(n, 3);
    al_store_close(other);
    assert_int_equal(al_store_puts(f->h, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(al_store_puts(NULL, &n), EINVAL);
    assert_int_equal(al_store_puts(f->h, NULL), EINVAL);
}

/* The threads of this process (/proc/self/task). */
static int threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* A check that answered in time leaves no thread behind: a process that
 * forks next (the MCP proxy starts its server) must not hold memory only a
 * thread its child lacks points to. */
static void mount_check_should_end_its_thread_when_answered(void **state)
{
    struct fx *f = *state;
    al_mount_info info = {0};
    al_store *h = NULL;
    char plain[128];
    snprintf(plain, sizeof plain, "%s/plain", f->base);
    assert_int_equal(mkdir(plain, 0755), 0);
    assert_int_equal(al_store_open(&h, f->dir, "default", plain, NULL), 0);
    assert_int_equal(threads(), 1);
    for (int i = 0; i < 20; i++) {
        assert_int_not_equal(al_store_mount_check(h, 60000, &info), ETIMEDOUT);
        assert_non_null(info.why);
        al_mount_info_release(&info);
        assert_int_equal(threads(), 1);
    }
    al_store_close(h);
}

static void strerror_should_describe_every_code(void **state)
{
    (void)state;
    assert_string_equal(al_strerror(AL_ENAME_DOT), "starts with '.'");
    assert_non_null(strstr(al_strerror(AL_ESIZE), "K, M or G"));
    assert_non_null(strstr(al_strerror(AL_ENOSTORE), "no store"));
    assert_string_equal(al_strerror(ENOENT), "No such file or directory");
    assert_non_null(al_strerror(AL_ERR_BASE - 999));
    char buf[40];
    assert_string_equal(al_time_format(0, buf, sizeof buf), "1970-01-01T00:00:00Z");
}

int main(void)
{
    unsetenv("OFFLOADFS_STORE");
    unsetenv("OFFLOADFS_NAMESPACE");
    unsetenv("OFFLOADFS_MOUNT");
    unsetenv("OFFLOADFS_CONFIG");
    if (!getcwd(start_cwd, sizeof start_cwd))
        start_cwd[0] = '\0';
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(store_put_should_round_trip_bytes),
        T(store_get_should_tell_never_written_from_no_store),
        T(store_remove_should_leave_the_key_evicted),
        T(store_put_should_evict_the_oldest_to_fit),
        T(store_put_should_cut_results_over_max_result_bytes),
        T(store_init_should_refuse_result_above_total),
        T(store_init_should_refuse_a_bound_over_16_tib),
        T(store_init_should_keep_the_configured_result_under_a_lower_bound),
        T(store_put_should_refuse_bad_keys_and_tools_without_writing),
        T(store_key_of_should_take_paths_and_keys),
        T(store_open_should_follow_flag_env_config_default),
        T(store_open_should_refuse_bad_namespace_and_mount),
        T(store_open_should_pin_a_relative_dir_to_the_cwd_at_open),
        T(store_should_isolate_namespaces),
        T(store_list_should_list_live_keys_in_order),
        T(offload_should_return_kept_results_unchanged),
        T(offload_should_store_and_return_a_pointer),
        T(offload_should_point_at_the_cut_bytes),
        T(drop_referenced_should_remove_mentioned_keys_only),
        T(store_should_survive_its_directory_being_removed),
        T(store_puts_should_count_every_write_and_no_store_is_enostore),
        T(mount_check_should_end_its_thread_when_answered),
        T(strerror_should_describe_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
