/* decode.h -- reads of compressed results from decoded frames, decoding
 * ahead of sequential readers (decode.c). Used by main.c and ops.c. */
#ifndef OFFLOADFS_FS_DECODE_H
#define OFFLOADFS_FS_DECODE_H

#include "fs/fs.h"

/* Bytes decoded ahead of a sequential reader of a compressed result
 * (-o decode_ahead=SIZE), by default. */
#define OFS_DECODE_AHEAD_DEFAULT (1ull << 20)

/* Starts the decoder (a worker thread and its table of streams, memory on
 * first use) for FS when fs->decode_ahead is not 0; fs->st must be open.
 * Returns 0 (fs->decode set, or NULL when off) or an errno value. */
int ofs_decode_start(struct ofs *fs);

/* Serves a read of LEN bytes at OFF of VERSION (an inode of FS) from
 * decoded frames when VERSION is compressed: hands FN the bytes as pieces
 * of the decoder's buffers (valid during the call only, all of VERSION)
 * and sets *SERVED. Leaves *SERVED 0 and returns 0 when the read is for the
 * plain way (store_read_iov()): the decoder is off, the value is stored
 * raw or is gone (the plain way tells which error), OFF is at or past the
 * end, the read spans more frames than a stream holds, or its frames are
 * held by other reads. A sequential read (from 0, or where the last read
 * of VERSION ended) also sets the worker decoding up to
 * fs->decode_ahead bytes past its end; any other read stops that.
 * Returns (with *SERVED 1) 0, what FN returned, or a store code: STORE_EGONE
 * (VERSION replaced, evicted or removed), STORE_ECORRUPT, LMDB failures,
 * ENOMEM. Safe from any number of threads. */
int ofs_decode_read(struct ofs *fs, uint64_t version, uint64_t off, size_t len,
                    store_iov_fn fn, void *ctx, int *served);

/* Stops and joins the worker and frees the decoder; safe when it never
 * started. Call after the session loop has ended (no read in flight). */
void ofs_decode_stop(struct ofs *fs);

#endif
