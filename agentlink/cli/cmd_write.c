/* cmd_write.c -- the commands that store a result: put and offload. */
#include "agentlink/cli/cli.h"
#include "common/buf.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_put(opts *o, int argc, char **argv)
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
        return cli_report(rc, NULL, key);
    if (o->tool && al_tool_check(o->tool)) {
        cli_msg("tool '%s': %s", cli_quote(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    /* Empty input is a 0-byte entry, as al_store_put() and the Python
     * binding's write() store it: a plain file may be empty too. */
    if ((ex = cli_input_begin(o, o->file, &in)))
        return ex;
    if ((ex = cli_setup(o, &pol, &h)))
        goto cleanup;
    /* Streamed: only the head and a ring of the tail are held (cut.c). */
    if ((rc = al_store_cutter(h, &c))) {
        ex = cli_report(rc, h, NULL);
        goto cleanup;
    }
    if ((rc = cli_input_to_cutter(&in, c))) {
        ex = cli_input_error(&in, o->file, rc, "nothing was stored");
        goto cleanup;
    }
    rc = al_store_put_cutter(h, key, c, o->tool, &e, &path);
    if (rc && rc != AL_EUPLOAD) {
        ex = cli_report(rc, h, key);
        goto cleanup;
    }
    if (e.truncated)
        cli_msg("'%s' was %" PRIu64 " bytes, over max_result_bytes: kept its head and tail, %" PRIu64
            " bytes stored", cli_quote(key), e.original_size, e.size);
    if (o->json) {
        cJSON *j = cli_entry_json(key, &e);
        if (j)
            cJSON_AddStringToObject(j, "path", path);
        ex = cli_print_json(j);
    } else {
        ex = cli_write_all(path, strlen(path));
        if (ex == EX_OK)
            ex = cli_write_all("\n", 1);
    }
    if (rc == AL_EUPLOAD && ex == EX_OK) /* written here; the remote does not have it */
        ex = cli_report(rc, h, key);
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
        return cli_write_all(out, outlen);
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
    ex = cli_print_json(j);
    al_free(path);
    return ex;
}

int cmd_offload(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    al_cutter *c = NULL;
    cli_input in = {.fd = -1};
    common_buf b = {0};
    char *out = NULL, *key = NULL;
    size_t outlen = 0;
    uint64_t limit = 0;
    int ex, rc, kind = AL_OFFLOAD_NEVER, sure = 0, offloaded = 0;
    (void)argc;
    (void)argv;

    if (!o->tool)
        return cli_usage_error("offload needs --tool NAME");
    if (!o->call_id)
        return cli_usage_error("offload needs --call-id RAW");
    if (al_tool_check(o->tool)) {
        cli_msg("tool '%s': %s", cli_quote(o->tool), al_strerror(AL_ETOOL));
        return EX_USAGE;
    }
    if ((ex = cli_load_policy(o, &pol)))
        return ex;
    if ((ex = cli_input_begin(o, NULL, &in)))
        goto cleanup;
    /* Read until the rule is sure to offload, or to the end (input.h). */
    al_policy_decide(pol, o->tool, NULL, 0, &kind, &limit);
    if ((rc = cli_input_prefix(&in, kind, limit, &b, &sure))) {
        ex = cli_input_error(&in, NULL, rc, "nothing was stored");
        goto cleanup;
    }
    if (!sure && !al_policy_decide(pol, o->tool, b.p, b.len, NULL, NULL)) {
        /* Kept in the conversation: the store is not even opened. */
        ex = offload_print(o, NULL, NULL, 0, b.p ? b.p : "", b.len);
        goto cleanup;
    }
    if ((ex = cli_open_store(o, pol, &h)))
        goto cleanup;
    if ((rc = al_key_derive(o->call_id, strlen(o->call_id), &key))) {
        ex = cli_report(rc, h, NULL);
        goto cleanup;
    }
    if (!sure) {
        rc = al_offload(h, pol, o->tool, o->call_id, strlen(o->call_id), b.p, b.len,
                        &out, &outlen, &offloaded);
    } else {
        /* The prefix, then the rest, through a cutter: memory about
         * max_result_bytes whatever the length. */
        if ((rc = al_store_cutter(h, &c)) == 0 && (rc = al_cutter_add(c, b.p, b.len)) == 0) {
            common_buf_release(&b);
            if ((rc = cli_input_to_cutter(&in, c))) {
                ex = cli_input_error(&in, NULL, rc, "nothing was stored");
                goto cleanup;
            }
            rc = al_offload_cutter(h, pol, o->tool, o->call_id, strlen(o->call_id), c, &out,
                                   &outlen);
            offloaded = rc == 0 || rc == AL_EUPLOAD;
        }
    }
    if (rc && rc != AL_EUPLOAD) {
        ex = cli_report(rc, h, key);
        goto cleanup;
    }
    ex = offload_print(o, h, key, offloaded, out, outlen);
    if (rc == AL_EUPLOAD && ex == EX_OK)
        ex = cli_report(rc, h, key);
cleanup:
    al_free(key);
    al_free(out);
    common_buf_release(&b);
    al_cutter_free(c);
    cli_input_close(&in);
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}
