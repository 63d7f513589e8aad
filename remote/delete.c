/* delete.c -- DELETE of one object; one already gone is not an error. An
 * operation: it uses the request core (request.c) only. */
#include "remote/remote_int.h"

int remote_delete(remote_conn *c, const char *name)
{
    rq q = {.label = "DELETE", .method = "DELETE", .name = name};
    int rc = remote_rq_run(c, &q);
    common_buf_release(&q.resp);
    return rc == REMOTE_ENOTFOUND ? 0 : rc;
}
