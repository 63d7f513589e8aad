/* head.c -- HEAD of one object: its length, time, ETag and metadata. An
 * operation: the request is the core's remote_rq_head() (request.c),
 * which a GET of no byte or of an empty object (get.c) runs too. */
#include "remote/remote_int.h"

int remote_head(remote_conn *c, const char *name, remote_info *out)
{
    return remote_rq_head(c, name, out);
}
