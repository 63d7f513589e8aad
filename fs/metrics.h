/* metrics.h -- GET /metrics, the HTTP server (metrics.c). Used by main.c
 * alone: it reads the counters (counters.h) and the store; nothing on the
 * data path calls it. */
#ifndef OFFLOADFS_FS_METRICS_H
#define OFFLOADFS_FS_METRICS_H

#include "fs/fs.h"

/* -o metrics=ARG: parses ARG as HOST:PORT (HOST required: a dotted quad,
 * an IPv6 address in brackets, or localhost for 127.0.0.1; PORT 0 picks a
 * free port) and binds a listening TCP socket there, into M, recording
 * the address bound (M->url). Run before mounting. Returns 0; or EINVAL
 * (ARG malformed, HOST in another form: a usage error) or the errno value
 * of socket(), bind() or listen() (EADDRINUSE, EADDRNOTAVAIL, EACCES),
 * after printing why on stderr. Release with ofs_metrics_stop(). */
int ofs_metrics_listen(struct ofs_metrics *m, const char *arg);

/* Starts serving GET /metrics on the socket ofs_metrics_listen() bound
 * (nothing to do when it did not run): one thread of metrics.c's, all
 * signals blocked in it, runs libmicrohttpd. fs->st must be open. Logs the
 * URL (FUSE_LOG_INFO), and a warning when the address is not a loopback
 * one. Returns 0; or EIO (the server could not start), ENOMEM, or
 * pthread_create()'s or eventfd()'s errno value. The socket is the
 * server's from the call on, even when it fails. */
int ofs_metrics_start(struct ofs *fs);

/* Stops the server (waiting for a scrape under way) and closes the
 * socket. Safe to call twice, and when nothing was bound or started. */
void ofs_metrics_stop(struct ofs *fs);

#endif
