/* cmd_remove.c -- the commands that remove: rm and drop-referenced. */
#include "agentlink/cli/cli.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_rm(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    int ex = EX_OK, rc;

    /* Refuse a bad key before removing anything. */
    for (int i = 0; i < argc; i++)
        if ((rc = al_key_check(argv[i])))
            return cli_report(rc, NULL, argv[i]);
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    if ((rc = cli_need_store(h)))
        ex = cli_report(rc, h, NULL);
    for (int i = 0; rc == 0 && i < argc; i++) {
        al_entry e;
        int one;
        int r = al_store_remove(h, argv[i], &e);
        if (r == AL_EEVICTED)
            one = cli_report_gone(argv[i], &e);
        else if (r)
            one = cli_report(r, h, argv[i]);
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

int cmd_drop(opts *o, int argc, char **argv)
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

    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    if ((rc = cli_need_store(h))) {
        ex = cli_report(rc, h, NULL);
        goto cleanup;
    }
    if ((ex = cli_input_limit(o, &max)))
        goto cleanup;
    if ((rc = cli_read_fd(STDIN_FILENO, max, &text, &len))) {
        cli_msg("cannot read stdin: %s", strerror(rc));
        ex = EX_FAIL;
        goto cleanup;
    }
    if ((uint64_t)len > max) {
        cli_input in = {.max_input = max};
        ex = cli_input_error(&in, NULL, CLI_EINPUT, "nothing was removed");
        goto cleanup;
    }
    d.h = h;
    if (o->json && !(d.arr = cJSON_CreateArray())) {
        ex = cli_report(ENOMEM, h, NULL);
        goto cleanup;
    }
    rc = al_store_drop_referenced(h, text, len, drop_cb, &d, &n);
    if (rc) {
        ex = cli_report(rc, h, NULL);
        goto cleanup;
    }
    if (o->json) {
        ex = cli_print_json(d.arr);
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
