/* tierctl.c -- a driver of the remote tier (tier/) for the shell tests,
 * until the CLI has its commands (doc/remote.md):
 *
 *   tierctl DIR remote URL|none     record the store's remote (store made if missing)
 *   tierctl DIR put KEY [NS [TOOL]] store stdin locally, then upload it
 *   tierctl DIR rm KEY [NS]         remove locally, tombstone on the remote
 *   tierctl DIR sync                upload what is pending
 *
 * Exit status: 0 ok, 1 failure, 2 usage, 5 stored locally but the upload
 * failed (pending). Messages on stderr.
 */
#include "tier/tier.h"
#include "readin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(store *st, tier *t, remote_conn *c, int argc, char **argv)
{
    const char *cmd = argv[2], *ns = argc > 4 ? argv[4] : NULL;
    int rc;
    if (!strcmp(cmd, "put") && argc > 3) {
        char *buf;
        size_t len;
        store_meta m = {argc > 5 ? argv[5] : NULL, 0, 0, 0};
        if (tool_read_stdin(&buf, &len))
            return 1;
        rc = tier_put(t, c, ns, argv[3], buf, len, &m, NULL, NULL);
        free(buf);
        if (rc == TIER_EUNSENT) {
            fprintf(stderr, "tierctl: %s: %s\n", tier_strerror(rc), remote_conn_message(c));
            return 5;
        }
    } else if (!strcmp(cmd, "rm") && argc > 3) {
        rc = store_remove(st, ns, argv[3]);
        if (rc == 0 || rc == STORE_ENOTFOUND || rc == STORE_EEVICTED)
            rc = tier_remove(t, c, ns, argv[3]);
    } else if (!strcmp(cmd, "sync")) {
        unsigned up = 0, left = 0;
        rc = tier_sync(t, c, NULL, NULL, &up, &left);
        printf("%u uploaded, %u pending\n", up, left);
    } else {
        fprintf(stderr, "tierctl: unknown command '%s'\n", cmd);
        return 2;
    }
    if (rc)
        fprintf(stderr, "tierctl: %s: %s %s\n", cmd, tier_strerror(rc), remote_conn_message(c));
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    store *st = NULL;
    tier *t = NULL;
    remote_conn *c = NULL;
    char msg[512];
    int rc;
    if (argc < 3) {
        fprintf(stderr, "usage: tierctl DIR remote URL|none | put KEY [NS [TOOL]] | rm KEY [NS] | sync\n");
        return 2;
    }
    if ((rc = store_open(&st, argv[1], STORE_CREATE))) {
        fprintf(stderr, "tierctl: store '%s': %s\n", argv[1], store_strerror(rc));
        return 1;
    }
    if (!strcmp(argv[2], "remote") && argc > 3) {
        rc = store_remote_set(st, strcmp(argv[3], "none") ? argv[3] : NULL);
        store_close(st);
        return rc ? 1 : 0;
    }
    if ((rc = tier_open(&t, st, NULL, msg, sizeof msg)) || (rc = remote_conn_new(&c, tier_remote(t)))) {
        fprintf(stderr, "tierctl: %s: %s\n", tier_strerror(rc), msg);
        store_close(st);
        return 1;
    }
    rc = run(st, t, c, argc, argv);
    remote_conn_free(c);
    tier_close(t);
    store_close(st);
    return rc;
}
