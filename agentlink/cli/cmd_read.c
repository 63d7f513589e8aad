/* cmd_read.c -- the commands that read: key, get, ls and stat. */
#include "agentlink/cli/cli.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cmd_key(opts *o, int argc, char **argv)
{
    char *key = NULL;
    int rc;
    (void)argc;
    rc = al_key_derive(argv[0], strlen(argv[0]), &key);
    if (rc)
        return cli_report(rc, NULL, NULL);
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            if (cli_json_add_bytes(j, "raw", "raw_encoding", argv[0], strlen(argv[0]))
                || !cJSON_AddStringToObject(j, "key", key)) {
                cJSON_Delete(j);
                j = NULL;
            }
        }
        rc = cli_print_json(j);
    } else {
        rc = cli_write_all(key, strlen(key));
        if (rc == EX_OK)
            rc = cli_write_all("\n", 1);
    }
    al_free(key);
    return rc;
}

/* al_store_get_stream()'s sink: stdout (cli_write_all says why it failed). */
static int get_sink(void *arg, const void *data, size_t n)
{
    int *failed = arg;
    *failed = cli_write_all(data, n) != EX_OK;
    return *failed;
}

int cmd_get(opts *o, int argc, char **argv)
{
    const char *key = argv[0];
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_entry e;
    int ex, rc, failed = 0;
    (void)argc;

    if ((rc = al_key_check(key)))
        return cli_report(rc, NULL, key);
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    /* Streamed: a result only the remote holds is written as it arrives. */
    rc = al_store_get_stream(h, key, get_sink, &failed, &e);
    if (failed)
        ex = EX_FAIL; /* stdout failed: said so */
    else if (rc == AL_EEVICTED)
        ex = cli_report_gone(key, &e);
    else if (rc)
        ex = cli_report(rc, h, key);
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
        cJSON *j = cli_entry_json(key, e);
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

int cmd_ls(opts *o, int argc, char **argv)
{
    ls_ctx c = {o->json, 0, EX_OK};
    al_policy *pol = NULL;
    al_store *h = NULL;
    int ex, rc;
    (void)argc;
    (void)argv;

    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    if ((rc = cli_need_store(h)) == 0) {
        if (o->json)
            fputs("[", stdout);
        rc = al_store_list(h, ls_cb, &c);
        if (o->json)
            fputs("]\n", stdout);
    }
    if (fflush(stdout) != 0 && rc == 0) {
        cli_msg("cannot write to stdout: %s", strerror(errno));
        ex = EX_FAIL;
    } else if (rc) {
        ex = cli_report(rc, h, NULL);
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}

int cmd_stat(opts *o, int argc, char **argv)
{
    const char *key = argv[0];
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_entry e;
    char when[40];
    int ex, rc;
    (void)argc;

    if ((rc = al_key_check(key)))
        return cli_report(rc, NULL, key);
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    rc = al_store_stat(h, key, &e);
    if (rc == 0) {
        if (o->json) {
            cJSON *j = cli_entry_json(key, &e);
            if (j)
                cJSON_AddStringToObject(j, "state", "live");
            ex = cli_print_json(j);
        } else {
            printf("key: %s\nstate: live\nsize: %" PRIu64 "\ntool: %s\ncreated: %s\n"
                   "original_size: %" PRIu64 "\ntruncated: %d\nwhere: %s\n",
                   key, e.size, e.has_tool ? e.tool : "", al_time_format(e.created_ns, when, sizeof when),
                   e.original_size, e.truncated,
                   e.where == AL_WHERE_REMOTE ? "remote only" : e.where == AL_WHERE_CACHED ? "cached here" : "here");
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
            cli_print_json(j);
        } else {
            printf("key: %s\nstate: evicted\nevicted_at: %s\nreason: %s\n", key, when,
                   al_reason_name(e.gone_reason));
            fflush(stdout);
        }
        ex = cli_report_gone(key, &e);
    } else {
        ex = cli_report(rc, h, key);
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}
