/* prom.c -- the Prometheus text format (0.0.4) of offloadfs' figures.
 *
 * Names follow Prometheus' conventions (promtool check metrics): counters
 * end in _total, sizes are in bytes and say so, no metric carries its type.
 * The HELP texts are what an operator reads in a console: they say where a
 * figure comes from and when it resets. */
#include "metrics/prom.h"

#include <errno.h>
#include <inttypes.h>

static int done(FILE *f)
{
    return ferror(f) ? EIO : 0;
}

int prom_family_write(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    return done(f);
}

/* Writes V as a label value: \, " and line feed escaped. */
static void label_value(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            fputs("\\\\", f);
        else if (*v == '"')
            fputs("\\\"", f);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

int prom_sample_write(FILE *f, const char *name, const char *label, const char *value,
                      uint64_t v)
{
    fputs(name, f);
    if (label) {
        fprintf(f, "{%s=\"", label);
        label_value(f, value);
        fputs("\"}", f);
    }
    fprintf(f, " %" PRIu64 "\n", v);
    return done(f);
}

/* One family of one sample. */
static void one(FILE *f, const char *name, const char *type, const char *help,
                const char *label, const char *value, uint64_t v)
{
    prom_family_write(f, name, type, help);
    prom_sample_write(f, name, label, value, v);
}

int prom_store_write(FILE *f, const prom_store_figures *s, const char *store)
{
    const char *l = store ? "store" : NULL;
    one(f, "offloadfs_store_entries", "gauge",
        "Live results in the store, all namespaces.", l, store, s->entries);
    one(f, "offloadfs_store_bytes", "gauge",
        "Sum of the live results' sizes before compression.", l, store, s->bytes);
    one(f, "offloadfs_store_stored_bytes", "gauge",
        "Bytes the live results occupy in the store (compressed): what the bound counts.",
        l, store, s->stored_bytes);
    one(f, "offloadfs_store_max_total_bytes", "gauge",
        "The store's bound on stored bytes (max_total_bytes).", l, store, s->max_total_bytes);
    one(f, "offloadfs_puts_total", "counter",
        "Results written into the store since it was made, by every writer (kept in the store).",
        l, store, s->puts);
    one(f, "offloadfs_evictions_total", "counter",
        "Results evicted to keep the bound since the store was made (kept in the store).",
        l, store, s->evictions);
    one(f, "offloadfs_removals_total", "counter",
        "Results removed by callers (rm, drop-referenced) since the store was made.",
        l, store, s->removals);
    return done(f);
}

int prom_mount_write(FILE *f, const prom_mount_figures *m, const char *ns)
{
    one(f, "offloadfs_reads_total", "counter",
        "Read requests the mount answered with data since the daemon started "
        "(reads the kernel's page cache served never reach it).",
        "namespace", ns, m->reads);
    one(f, "offloadfs_read_bytes_total", "counter",
        "Bytes those read requests returned.", "namespace", ns, m->read_bytes);
    one(f, "offloadfs_evicted_reads_total", "counter",
        "Lookups, opens and reads answered ENODATA (the result was evicted or removed: "
        "an agent must run its tool again).",
        "namespace", ns, m->evicted_reads);
    one(f, "offloadfs_missing_lookups_total", "counter",
        "Lookups of names never written, answered ENOENT (the kernel caches the answer).",
        "namespace", ns, m->missing_lookups);
    return done(f);
}

int prom_cached_write(FILE *f, uint64_t entries, uint64_t bytes, const char *store)
{
    const char *l = store ? "store" : NULL;
    one(f, "offloadfs_store_cached_entries", "gauge",
        "Of the live results, cached copies of the remote's (kept by a read here), all "
        "namespaces; evicted before results written here.", l, store, entries);
    one(f, "offloadfs_store_cached_bytes", "gauge",
        "Sum of the cached copies' sizes before compression.", l, store, bytes);
    return done(f);
}

int prom_pending_write(FILE *f, uint64_t pending, const char *store)
{
    one(f, "offloadfs_remote_pending_uploads", "gauge",
        "Results stored here but not yet on the store's remote, and removals whose "
        "tombstone is not yet there, all namespaces (kept in the store; agentlink sync "
        "sends them).",
        store ? "store" : NULL, store, pending);
    return done(f);
}

int prom_remote_write(FILE *f, const prom_remote_figures *r, const char *ns)
{
    one(f, "offloadfs_remote_fetches_total", "counter",
        "Ranged GETs of remote results' bytes since the daemon started: reads' and "
        "lookups' (a lookup GETs the first 128 KiB; a read the mount's read-ahead windows "
        "already hold makes none; retries count once).",
        "namespace", ns, r->fetches);
    one(f, "offloadfs_remote_fetch_errors_total", "counter",
        "Those the remote failed (unreachable, stalled, refused): the read or lookup was "
        "answered EIO.",
        "namespace", ns, r->fetch_errors);
    one(f, "offloadfs_remote_lookup_errors_total", "counter",
        "Listings (readdir) the remote failed, shown without the remote's names, and "
        "lookups that sent only a HEAD and failed (a failed lookup GET is a fetch error).",
        "namespace", ns, r->lookup_errors);
    one(f, "offloadfs_remote_fetch_bytes_total", "counter",
        "Bytes those fetches brought from the remote.", "namespace", ns, r->fetch_bytes);
    one(f, "offloadfs_cache_hits_total", "counter",
        "Reads of remote results served from a cached copy in the local store.",
        "namespace", ns, r->cache_hits);
    one(f, "offloadfs_cache_misses_total", "counter",
        "Remote results fetched whole by the mount (then kept as cached copies when the "
        "store takes them).", "namespace", ns, r->cache_misses);
    one(f, "offloadfs_remote_window_bytes", "gauge",
        "Bytes the mount's read-ahead windows (memory) and whole fetches of remote results "
        "(unnamed files) hold now, as their fetches filled them; 0 once no read has used "
        "them for 2 s, or once the store holds the result.",
        "namespace", ns, r->window_bytes);
    return prom_histogram_write(f, "offloadfs_remote_fetch_seconds",
                                "How long each fetch took, retries included, failed ones too.",
                                ns, &r->seconds);
}

int prom_build_info_write(FILE *f, const char *version)
{
    one(f, "offloadfs_build_info", "gauge", "The offloadfs version serving these metrics.",
        "version", version, 1);
    return done(f);
}

/* The labels of one sample: namespace (when NS) and le (when LE). */
static void hist_labels(FILE *f, const char *ns, const char *le)
{
    if (!ns && !le)
        return;
    fputc('{', f);
    if (ns) {
        fputs("namespace=\"", f);
        label_value(f, ns);
        fputc('"', f);
    }
    if (le)
        fprintf(f, "%sle=\"%s\"", ns ? "," : "", le);
    fputc('}', f);
}

int prom_histogram_write(FILE *f, const char *name, const char *help, const char *ns,
                         const prom_histogram *h)
{
    uint64_t cum = 0;
    char le[32];
    prom_family_write(f, name, "histogram", help);
    for (size_t i = 0; i <= h->nbounds; i++) {
        cum += h->counts[i];
        if (i < h->nbounds)
            snprintf(le, sizeof le, "%.15g", h->bounds[i]);
        else
            snprintf(le, sizeof le, "+Inf");
        fprintf(f, "%s_bucket", name);
        hist_labels(f, ns, le);
        fprintf(f, " %" PRIu64 "\n", cum);
    }
    fprintf(f, "%s_sum", name);
    hist_labels(f, ns, NULL);
    fprintf(f, " %.15g\n%s_count", h->sum, name);
    hist_labels(f, ns, NULL);
    fprintf(f, " %" PRIu64 "\n", cum);
    return done(f);
}
