/* cmd_sync.c -- agentlink sync: send what is pending for the store's
 * remote, uploads and tombstones (doc/remote.md). Exit 0 when nothing is left pending, 5 when some
 * is (the remote still fails: the message says why), 1 otherwise. */
#include "agentlink/cli/cli.h"

#include <stdio.h>

int cmd_sync(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    unsigned up = 0, left = 0;
    int ex, rc;
    (void)argc;
    (void)argv;
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    rc = al_store_sync(h, &up, &left);
    if (rc && rc != AL_EUPLOAD) {
        ex = cli_report(rc, h, NULL);
    } else {
        if (o->json) {
            cJSON *j = cJSON_CreateObject();
            if (j) {
                cJSON_AddNumberToObject(j, "uploaded", up);
                cJSON_AddNumberToObject(j, "pending", left);
            }
            ex = cli_print_json(j);
        } else {
            printf("%u uploaded, %u pending\n", up, left);
            ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        }
        if (rc == AL_EUPLOAD && ex == EX_OK) {
            cli_msg("%u result%s or tombstone%s still pending: %s", left, left == 1 ? "" : "s",
                    left == 1 ? "" : "s",
                    al_store_remote_message(h));
            ex = EX_REMOTE;
        }
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}
