/* test_mem_objects.c -- the remote's object suite (tests/remote/test_objects.c,
 * which runs against radosgw) run again over the in-memory remote, so that
 * the fake the tier's unit tests rely on answers as radosgw does: every
 * code, byte, ETag rule and message that suite checks. A test added there
 * that needs a real server (credentials, a stopped radosgw, the network)
 * belongs in tests/remote/test_faults.c instead. */
#include <stdlib.h>

#include "remote/mem/mem.h"

/* rfx.h asks for the server's environment (tests/run.sh sets it for the
 * radosgw suites): without one, the in-memory server's bucket stands in. */
__attribute__((constructor)) static void mem_server(void)
{
    setenv("OFFLOADFS_S3_BUCKET", "mem-objects", 0);
    setenv("AWS_ENDPOINT_URL", "mem://in-process", 0);
    if (!remote_mem_bucket(getenv("OFFLOADFS_S3_BUCKET")))
        abort();
}

#include "tests/remote/test_objects.c"
