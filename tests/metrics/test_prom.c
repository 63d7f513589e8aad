/* test_prom.c -- the Prometheus text format of offloadfs' figures, byte for
 * byte (promtool's own check of both real outputs: tests/fs/test_metrics.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics/prom.h"

struct out {
    char *buf;
    size_t len;
    FILE *f;
};

static void out_open(struct out *o)
{
    o->buf = NULL;
    o->f = open_memstream(&o->buf, &o->len);
    assert_non_null(o->f);
}

/* Closes O and checks that it holds exactly WANT. */
static void out_expect(struct out *o, const char *want)
{
    assert_int_equal(fclose(o->f), 0);
    assert_string_equal(o->buf, want);
    free(o->buf);
}

static void store_write_should_give_every_family_with_help_and_type(void **state)
{
    prom_store_figures s = {3, 3000, 1200, 1u << 30, 17, 5, 2};
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_store_write(o.f, &s, "/var/lib/offloadfs"), 0);
    out_expect(&o,
        "# HELP offloadfs_store_entries Live results in the store, all namespaces.\n"
        "# TYPE offloadfs_store_entries gauge\n"
        "offloadfs_store_entries{store=\"/var/lib/offloadfs\"} 3\n"
        "# HELP offloadfs_store_bytes Sum of the live results' sizes before compression.\n"
        "# TYPE offloadfs_store_bytes gauge\n"
        "offloadfs_store_bytes{store=\"/var/lib/offloadfs\"} 3000\n"
        "# HELP offloadfs_store_stored_bytes Bytes the live results occupy in the store "
        "(compressed): what the bound counts.\n"
        "# TYPE offloadfs_store_stored_bytes gauge\n"
        "offloadfs_store_stored_bytes{store=\"/var/lib/offloadfs\"} 1200\n"
        "# HELP offloadfs_store_max_total_bytes The store's bound on stored bytes "
        "(max_total_bytes).\n"
        "# TYPE offloadfs_store_max_total_bytes gauge\n"
        "offloadfs_store_max_total_bytes{store=\"/var/lib/offloadfs\"} 1073741824\n"
        "# HELP offloadfs_puts_total Results written into the store since it was made, "
        "by every writer (kept in the store).\n"
        "# TYPE offloadfs_puts_total counter\n"
        "offloadfs_puts_total{store=\"/var/lib/offloadfs\"} 17\n"
        "# HELP offloadfs_evictions_total Results evicted to keep the bound since the store "
        "was made (kept in the store).\n"
        "# TYPE offloadfs_evictions_total counter\n"
        "offloadfs_evictions_total{store=\"/var/lib/offloadfs\"} 5\n"
        "# HELP offloadfs_removals_total Results removed by callers (rm, drop-referenced) "
        "since the store was made.\n"
        "# TYPE offloadfs_removals_total counter\n"
        "offloadfs_removals_total{store=\"/var/lib/offloadfs\"} 2\n");
}

static void store_write_without_a_store_should_give_no_label(void **state)
{
    prom_store_figures s = {0, 0, 0, 64, UINT64_MAX, 0, 0};
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_store_write(o.f, &s, NULL), 0);
    assert_int_equal(fclose(o.f), 0);
    assert_non_null(strstr(o.buf, "\noffloadfs_store_entries 0\n"));
    assert_non_null(strstr(o.buf, "\noffloadfs_puts_total 18446744073709551615\n"));
    assert_null(strchr(o.buf, '{'));
    free(o.buf);
}

static void mount_write_should_label_each_sample_with_the_namespace(void **state)
{
    prom_mount_figures m = {10, 40960, 4, 1};
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_mount_write(o.f, &m, "run-1"), 0);
    assert_int_equal(fclose(o.f), 0);
    assert_non_null(strstr(o.buf, "# TYPE offloadfs_reads_total counter\n"
                                  "offloadfs_reads_total{namespace=\"run-1\"} 10\n"));
    assert_non_null(strstr(o.buf, "# TYPE offloadfs_read_bytes_total counter\n"
                                  "offloadfs_read_bytes_total{namespace=\"run-1\"} 40960\n"));
    assert_non_null(strstr(o.buf, "# TYPE offloadfs_evicted_reads_total counter\n"
                                  "offloadfs_evicted_reads_total{namespace=\"run-1\"} 4\n"));
    assert_non_null(strstr(o.buf, "# TYPE offloadfs_missing_lookups_total counter\n"
                                  "offloadfs_missing_lookups_total{namespace=\"run-1\"} 1\n"));
    assert_non_null(strstr(o.buf, "# HELP offloadfs_evicted_reads_total Lookups, opens"));
    free(o.buf);
}

/* A namespace may hold " and \ (never a control byte, but the escape is
 * there for any label value). */
static void label_values_should_be_escaped(void **state)
{
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_sample_write(o.f, "m", "namespace", "a\"b\\c\nd", 7), 0);
    out_expect(&o, "m{namespace=\"a\\\"b\\\\c\\nd\"} 7\n");
}

static void build_info_should_be_one_with_the_version(void **state)
{
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_build_info_write(o.f, "0.1.0"), 0);
    out_expect(&o, "# HELP offloadfs_build_info The offloadfs version serving these metrics.\n"
                   "# TYPE offloadfs_build_info gauge\n"
                   "offloadfs_build_info{version=\"0.1.0\"} 1\n");
}

static void histogram_should_give_cumulative_buckets_sum_and_count(void **state)
{
    const double bounds[] = {0.005, 0.1, 1};
    const uint64_t counts[] = {2, 0, 3, 1};
    prom_histogram h = {bounds, counts, 3, 2.75};
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_histogram_write(o.f, "x_seconds", "Fetch time.", "ns", &h), 0);
    out_expect(&o, "# HELP x_seconds Fetch time.\n"
                   "# TYPE x_seconds histogram\n"
                   "x_seconds_bucket{namespace=\"ns\",le=\"0.005\"} 2\n"
                   "x_seconds_bucket{namespace=\"ns\",le=\"0.1\"} 2\n"
                   "x_seconds_bucket{namespace=\"ns\",le=\"1\"} 5\n"
                   "x_seconds_bucket{namespace=\"ns\",le=\"+Inf\"} 6\n"
                   "x_seconds_sum{namespace=\"ns\"} 2.75\n"
                   "x_seconds_count{namespace=\"ns\"} 6\n");
    out_open(&o);
    assert_int_equal(prom_histogram_write(o.f, "y", "h", NULL, &h), 0);
    assert_int_equal(fclose(o.f), 0);
    assert_non_null(strstr(o.buf, "y_bucket{le=\"+Inf\"} 6\ny_sum 2.75\ny_count 6\n"));
    free(o.buf);
}

/* A write that fails (a full device) is EIO, never success. */
static void pending_write_should_give_a_gauge_labelled_with_the_store(void **state)
{
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_pending_write(o.f, 2, "/var/lib/offloadfs"), 0);
    out_expect(&o,
        "# HELP offloadfs_remote_pending_uploads Results stored here but not yet on the "
        "store's remote, and removals whose tombstone is not yet there, all namespaces "
        "(kept in the store; agentlink sync sends them).\n"
        "# TYPE offloadfs_remote_pending_uploads gauge\n"
        "offloadfs_remote_pending_uploads{store=\"/var/lib/offloadfs\"} 2\n");
}

static void cached_write_should_give_two_gauges_labelled_with_the_store(void **state)
{
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_cached_write(o.f, 3, 52428800, "/s"), 0);
    out_expect(&o,
        "# HELP offloadfs_store_cached_entries Of the live results, cached copies of the "
        "remote's (kept by a read here), all namespaces; evicted before results written here.\n"
        "# TYPE offloadfs_store_cached_entries gauge\n"
        "offloadfs_store_cached_entries{store=\"/s\"} 3\n"
        "# HELP offloadfs_store_cached_bytes Sum of the cached copies' sizes before compression.\n"
        "# TYPE offloadfs_store_cached_bytes gauge\n"
        "offloadfs_store_cached_bytes{store=\"/s\"} 52428800\n");
}

static void remote_write_should_give_counters_the_window_gauge_and_the_histogram(void **state)
{
    static const double bounds[] = {0.001, 1};
    static const uint64_t counts[] = {4, 1, 2};
    prom_remote_figures r = {7, 2, 3, 8388608, {bounds, counts, 2, 4.5}, 4096, 5, 6};
    struct out o;
    (void)state;
    out_open(&o);
    assert_int_equal(prom_remote_write(o.f, &r, "web"), 0);
    out_expect(&o,
        "# HELP offloadfs_remote_fetches_total Ranged GETs of remote results' bytes since the "
        "daemon started: reads' and lookups' (a lookup GETs the first 128 KiB; a read the "
        "mount's read-ahead windows already hold makes none; retries count once).\n"
        "# TYPE offloadfs_remote_fetches_total counter\n"
        "offloadfs_remote_fetches_total{namespace=\"web\"} 7\n"
        "# HELP offloadfs_remote_fetch_errors_total Those the remote failed (unreachable, "
        "stalled, refused): the read or lookup was answered EIO.\n"
        "# TYPE offloadfs_remote_fetch_errors_total counter\n"
        "offloadfs_remote_fetch_errors_total{namespace=\"web\"} 2\n"
        "# HELP offloadfs_remote_lookup_errors_total Listings (readdir) the remote failed, "
        "shown without the remote's names, and lookups that sent only a HEAD and failed "
        "(a failed lookup GET is a fetch error).\n"
        "# TYPE offloadfs_remote_lookup_errors_total counter\n"
        "offloadfs_remote_lookup_errors_total{namespace=\"web\"} 3\n"
        "# HELP offloadfs_remote_fetch_bytes_total Bytes those fetches brought from the remote.\n"
        "# TYPE offloadfs_remote_fetch_bytes_total counter\n"
        "offloadfs_remote_fetch_bytes_total{namespace=\"web\"} 4096\n"
        "# HELP offloadfs_cache_hits_total Reads of remote results served from a cached copy in "
        "the local store.\n"
        "# TYPE offloadfs_cache_hits_total counter\n"
        "offloadfs_cache_hits_total{namespace=\"web\"} 5\n"
        "# HELP offloadfs_cache_misses_total Remote results fetched whole by the mount (then kept "
        "as cached copies when the store takes them).\n"
        "# TYPE offloadfs_cache_misses_total counter\n"
        "offloadfs_cache_misses_total{namespace=\"web\"} 6\n"
        "# HELP offloadfs_remote_window_bytes Bytes the mount's read-ahead windows (memory) and "
        "whole fetches of remote results (unnamed files) hold now, as their fetches filled "
        "them; 0 once no read has used them for 2 s, or once the store holds the result.\n"
        "# TYPE offloadfs_remote_window_bytes gauge\n"
        "offloadfs_remote_window_bytes{namespace=\"web\"} 8388608\n"
        "# HELP offloadfs_remote_fetch_seconds How long each fetch took, retries included, "
        "failed ones too.\n"
        "# TYPE offloadfs_remote_fetch_seconds histogram\n"
        "offloadfs_remote_fetch_seconds_bucket{namespace=\"web\",le=\"0.001\"} 4\n"
        "offloadfs_remote_fetch_seconds_bucket{namespace=\"web\",le=\"1\"} 5\n"
        "offloadfs_remote_fetch_seconds_bucket{namespace=\"web\",le=\"+Inf\"} 7\n"
        "offloadfs_remote_fetch_seconds_sum{namespace=\"web\"} 4.5\n"
        "offloadfs_remote_fetch_seconds_count{namespace=\"web\"} 7\n");
}

static void write_errors_should_be_eio(void **state)
{
    prom_store_figures s = {1, 2, 3, 4, 5, 6, 7};
    FILE *f = fopen("/dev/full", "w");
    (void)state;
    assert_non_null(f);
    setvbuf(f, NULL, _IONBF, 0);
    assert_int_equal(prom_store_write(f, &s, "x"), EIO);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(store_write_should_give_every_family_with_help_and_type),
        cmocka_unit_test(store_write_without_a_store_should_give_no_label),
        cmocka_unit_test(mount_write_should_label_each_sample_with_the_namespace),
        cmocka_unit_test(label_values_should_be_escaped),
        cmocka_unit_test(build_info_should_be_one_with_the_version),
        cmocka_unit_test(histogram_should_give_cumulative_buckets_sum_and_count),
        cmocka_unit_test(pending_write_should_give_a_gauge_labelled_with_the_store),
        cmocka_unit_test(cached_write_should_give_two_gauges_labelled_with_the_store),
        cmocka_unit_test(remote_write_should_give_counters_the_window_gauge_and_the_histogram),
        cmocka_unit_test(write_errors_should_be_eio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
