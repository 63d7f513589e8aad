/* cmd_gc.c -- agentlink gc --remote [--max-age SECONDS] [--max-bytes N]:
 * the remote's bound, for an operator's timer. Removes (with tombstones,
 * so every host answers "evicted") the results of every namespace older
 * than SECONDS, then the oldest beyond N bytes. */
#include "agentlink/cli/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int cmd_gc(opts *o, int argc, char **argv)
{
    al_policy *pol = NULL;
    al_store *h = NULL;
    uint64_t age = 0, bytes = 0, kept = 0;
    unsigned removed = 0;
    int ex, rc;
    (void)argc;
    (void)argv;
    if (!(o->given & O_GCRM))
        return cli_usage_error("gc needs --remote (the local store keeps its own bound)");
    if (o->max_age) {
        char *end;
        unsigned long long v = strtoull(o->max_age, &end, 10);
        if (!*o->max_age || *end || o->max_age[0] == '-' || v == 0) {
            cli_msg("--max-age '%s': expected a whole number of seconds >= 1", cli_quote(o->max_age));
            return EX_USAGE;
        }
        age = v;
    }
    if (o->max_bytes && al_size_parse(o->max_bytes, &bytes)) {
        cli_msg("--max-bytes '%s': %s", cli_quote(o->max_bytes), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    if (!age && !bytes)
        return cli_usage_error("gc --remote needs --max-age SECONDS, --max-bytes N or both");
    if ((ex = cli_setup(o, &pol, &h)))
        return ex;
    rc = al_store_gc_remote(h, age, bytes, &removed, &kept);
    if (rc == AL_EREMOTE) {
        cli_msg("gc --remote: %s", al_store_remote_message(h)[0] ? al_store_remote_message(h)
                                                                 : "the store names no remote");
        ex = EX_FAIL;
    } else if (rc) {
        ex = cli_report(rc, h, NULL);
    } else if (o->json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddNumberToObject(j, "removed", removed);
            cJSON_AddNumberToObject(j, "kept_bytes", (double)kept);
        }
        ex = cli_print_json(j);
    } else {
        printf("removed %u result%s from the remote, %" PRIu64 " bytes kept\n", removed,
               removed == 1 ? "" : "s", kept);
        ex = fflush(stdout) == 0 ? EX_OK : EX_FAIL;
    }
    al_store_close(h);
    al_policy_free(pol);
    return ex;
}
