/* cmd_store.c -- the commands about the whole store: init and stats. */
#include "agentlink/cli/cli.h"
#include "metrics/prom.h"
#include "tier/tier.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *compression_name(unsigned how)
{
    return how == AL_COMPRESS_ZSTD ? "zstd" : "none";
}

/* "remote": the store's remote URL, or null; never a credential. */
static void add_remote(cJSON *j, al_store *h)
{
    char url[1100] = "";
    al_store_remote(h, url, sizeof url);
    if (url[0])
        cJSON_AddStringToObject(j, "remote", url);
    else
        cJSON_AddNullToObject(j, "remote");
}

int cmd_init(opts *o, int argc, char **argv)
{
    uint64_t total = 0, result = 0, nevicted = 0, cfg = 0;
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_stats s;
    int ex, rc;
    (void)argc;
    (void)argv;

    if (o->max_total && al_size_parse(o->max_total, &total)) {
        cli_msg("--max-total-bytes '%s': %s", cli_quote(o->max_total), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    if (o->max_result && al_size_parse(o->max_result, &result)) {
        cli_msg("--max-result-bytes '%s': %s", cli_quote(o->max_result), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    if (total > AL_MAX_TOTAL_LIMIT) {
        cli_msg("--max-total-bytes %" PRIu64 " is above the largest bound a store can have, %" PRIu64
            " (16 TiB)", total, AL_MAX_TOTAL_LIMIT);
        return EX_USAGE;
    }
    if ((o->max_total && total < AL_MIN_LIMIT) || (o->max_result && result < AL_MIN_LIMIT)) {
        int t = o->max_total && total < AL_MIN_LIMIT;
        cli_msg("%s %" PRIu64 " is below the minimum of %u bytes: a cut result needs room for "
            "its marker line", t ? "--max-total-bytes" : "--max-result-bytes", t ? total : result,
            AL_MIN_LIMIT);
        return EX_USAGE;
    }
    if (total && result > total) {
        cli_msg("--max-result-bytes %" PRIu64 " is above --max-total-bytes %" PRIu64
            ": a result must fit in the store", result, total);
        return EX_USAGE;
    }
    if (o->compression && strcmp(o->compression, "zstd") && strcmp(o->compression, "none")) {
        cli_msg("--compression '%s': must be zstd or none", cli_quote(o->compression));
        return EX_USAGE;
    }
    if (o->remote && strcmp(o->remote, "none") != 0) {
        char why[512];
        if (tier_url_check(o->remote, why, sizeof why)) {
            cli_msg("--remote: %s (expected s3://BUCKET or s3://BUCKET/PREFIX, or none)", why);
            return EX_USAGE;
        }
    }
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    rc = al_store_init(h, total, result, &nevicted);
    if (rc == 0 && o->compression)
        rc = al_store_set_compression(h, strcmp(o->compression, "zstd") ? AL_COMPRESS_NONE
                                                                         : AL_COMPRESS_ZSTD);
    if (rc == 0 && o->remote && (rc = al_store_set_remote(h, o->remote)) == AL_EREMOTE) {
        cli_msg("remote '%s' not recorded: %s", cli_quote(o->remote), al_store_remote_message(h));
        ex = EX_FAIL;
        goto cleanup;
    }
    if (rc == AL_ELIMITS) {
        al_stats cur;
        if (al_store_stats(h, &cur) == 0 && result > cur.max_total_bytes)
            cli_msg("--max-result-bytes %" PRIu64 " is above the store's max_total_bytes %" PRIu64
                ": a result must fit in the store", result, cur.max_total_bytes);
        else
            cli_msg("limits refused for store '%s': %s", cli_quote(al_store_dir(h)), al_strerror(rc));
        ex = EX_USAGE;
        goto cleanup;
    }
    if (rc || (rc = al_store_stats(h, &s)) || (rc = al_store_max_result(h, NULL, &cfg))) {
        ex = cli_report(rc, h, NULL);
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
            add_remote(j, h);
        }
        ex = cli_print_json(j);
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
        if (o->remote) {
            char url[1100] = "";
            al_store_remote(h, url, sizeof url);
            printf("remote %s\n", url[0] ? url : "none");
        }
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
cleanup:
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

/* How long stats --json waits for the mount to say what it serves. */
#define MOUNT_CHECK_MS 1000

/* The "mount" member of stats --json: {"path", "serves", "store",
 * "namespace", "reason"}: whether the mount at the mount path serves this
 * store and namespace (al_store_mount_check), what it says it serves (null
 * when it said nothing) and, when it does not serve them, why (else null).
 * NULL when out of memory. */
static cJSON *mount_json(const al_store *h)
{
    al_mount_info mi;
    int rc = al_store_mount_check(h, MOUNT_CHECK_MS, &mi);
    cJSON *m = cJSON_CreateObject();
    if (m) {
        cJSON_AddStringToObject(m, "path", al_store_mount(h));
        cJSON_AddBoolToObject(m, "serves", rc == 0);
        if (mi.store)
            cJSON_AddStringToObject(m, "store", mi.store);
        else
            cJSON_AddNullToObject(m, "store");
        if (mi.ns)
            cJSON_AddStringToObject(m, "namespace", mi.ns);
        else
            cJSON_AddNullToObject(m, "namespace");
        if (rc == 0)
            cJSON_AddNullToObject(m, "reason");
        else
            cJSON_AddStringToObject(m, "reason", mi.why ? mi.why : al_strerror(rc));
    }
    al_mount_info_release(&mi);
    return m;
}

/* stats --prometheus: the store's part of the daemon's GET /metrics, the
 * same families and labels (metrics/prom.h), for node_exporter's textfile
 * collector and hosts that run no daemon: with a remote, its pending
 * uploads too (the daemon's fetches are the daemon's alone). The store
 * label is the real path, as the daemon gives it, so both name a store
 * the same way. */
static int stats_prometheus(al_store *h, const al_stats *s)
{
    prom_store_figures f = {s->entries, s->bytes, s->stored_bytes, s->max_total_bytes, 0,
                            s->evictions, s->removals};
    al_cache_stats cs = {0};
    char *real, url[1100] = "";
    int rc = al_store_puts(h, &f.puts), ex = EX_OK;
    if (!rc)
        rc = al_store_remote(h, url, sizeof url);
    if (!rc && url[0])
        rc = al_store_cache_stats(h, &cs);
    if (rc)
        return cli_report(rc, h, NULL);
    real = realpath(al_store_dir(h), NULL);
    if (prom_store_write(stdout, &f, real ? real : al_store_dir(h))
        || (url[0] && prom_pending_write(stdout, s->pending, real ? real : al_store_dir(h)))
        || (url[0] && prom_cached_write(stdout, cs.entries, cs.bytes,
                                        real ? real : al_store_dir(h)))
        || fflush(stdout)) {
        cli_msg("writing the metrics to stdout failed");
        ex = EX_FAIL;
    }
    free(real);
    return ex;
}

int cmd_stats(opts *o, int argc, char **argv)
{
    uint64_t cfg = 0;
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_stats s;
    al_cache_stats cs;
    int ex, rc;
    (void)argc;
    (void)argv;

    if (o->json && o->prometheus)
        return cli_usage_error("stats takes --json or --prometheus, not both");
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    rc = al_store_stats(h, &s);
    if (rc == 0)
        rc = al_store_max_result(h, NULL, &cfg);
    if (rc == 0)
        rc = al_store_cache_stats(h, &cs);
    if (rc) {
        ex = cli_report(rc, h, NULL);
    } else if (o->prometheus) {
        ex = stats_prometheus(h, &s);
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
            cJSON_AddItemToObject(j, "mount", mount_json(h));
            add_remote(j, h);
            cJSON_AddNumberToObject(j, "pending", (double)s.pending);
            cJSON_AddNumberToObject(j, "cached_entries", (double)cs.entries);
            cJSON_AddNumberToObject(j, "cached_bytes", (double)cs.bytes);
            cJSON_AddNumberToObject(j, "cache_hits", (double)cs.hits);
            cJSON_AddNumberToObject(j, "cache_misses", (double)cs.misses);
        }
        ex = cli_print_json(j);
    } else {
        printf("store: %s\nentries: %" PRIu64 "\nbytes: %" PRIu64 "\nmax_total_bytes: %" PRIu64
               "\nmax_result_bytes: %" PRIu64 "\nevictions: %" PRIu64 "\nremovals: %" PRIu64 "\n",
               al_store_dir(h), s.entries, s.bytes, s.max_total_bytes, s.max_result_bytes,
               s.evictions, s.removals);
        if (cfg > s.max_result_bytes)
            printf("max_result_bytes_configured: %" PRIu64 " (held to max_total_bytes while "
                   "the bound is lower)\n", cfg);
        printf("stored_bytes: %" PRIu64 "\n", s.stored_bytes);
        char url[1100] = "";
        al_store_remote(h, url, sizeof url);
        if (url[0])
            printf("remote: %s\npending: %" PRIu64 "\n", url, s.pending);
        if (url[0] || cs.entries || cs.hits || cs.misses)
            printf("cached_entries: %" PRIu64 "\ncached_bytes: %" PRIu64 "\ncache_hits: %" PRIu64
                   "\ncache_misses: %" PRIu64 "\n", cs.entries, cs.bytes, cs.hits, cs.misses);
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}
