/* codes.c -- what remote/'s codes mean, shared with the in-memory remote
 * (remote/mem/), so that both describe a code with the same words. */
#include "remote/remote.h"

#include <string.h>

const char *remote_strerror(int err)
{
    switch (err) {
    case 0: return "success";
    case REMOTE_ENOTFOUND: return "no such object on the remote";
    case REMOTE_ENOBUCKET: return "no such bucket on the remote";
    case REMOTE_EDENIED: return "the remote refused the credentials or the access";
    case REMOTE_EDOWN: return "the remote is unreachable or not answering";
    case REMOTE_ECONFIG: return "bad remote configuration";
    case REMOTE_EPROTO: return "unexpected answer from the remote";
    case REMOTE_ESOURCE: return "the data source or sink failed";
    case REMOTE_ECHANGED: return "the object was replaced on the remote";
    case REMOTE_ELIMIT: return "the remote's listing went past its bound of pages or time";
    default: return err > 0 ? strerror(err) : "unknown remote error";
    }
}

int remote_err_transient(int err)
{
    return err == REMOTE_EDOWN;
}
