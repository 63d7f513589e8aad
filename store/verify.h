/* verify.h -- internal: checks LMDB's pages before LMDB follows them.
 *
 * LMDB checks the magic and version of its meta pages and trusts every
 * other page: a flipped byte in a branch or leaf page (a node offset, a
 * child page number, the page flags, a free-list count) makes it read
 * outside the page, follow a pointer into garbage or fail an assertion, and
 * the process dies. The store's own CRC-32C protects values, not the
 * B-trees that lead to them.
 *
 * store_verify_env() walks one snapshot of the environment the way LMDB would
 * and refuses it as STORE_ECORRUPT at the first thing LMDB could not
 * survive. It reads only branch and leaf pages (plus free-list records
 * stored on overflow pages), never the pages holding values, so its cost
 * grows with the number of entries, not bytes: on a full 1 GiB store with
 * 100,000 tombstones (6,750 tree pages, 670,000 nodes) the full walk takes
 * about 50 ms (42 ms of CPU), the quick one about 0.5 ms.
 *
 * Two depths:
 * - quick (every store_open): the meta page, the whole free list and
 *   catalog, and the root page of every named database. This is what every
 *   command touches first; the damage that made every command crash (a
 *   catalog or state page, the free list's flags) is refused here.
 * - full (STORE_VERIFY: the daemon at start, agentlink library handles):
 *   every page of every tree.
 *
 * What it checks, for the snapshot a read transaction sees:
 * - the meta page of that transaction: page size, last page within the
 *   file, the free list's and catalog's flags;
 * - every tree page: its own page number, its kind (branch above the
 *   leaves, leaf at exactly the tree's depth), bounds (16 <= lower <= upper
 *   <= page size), at least two keys in a branch (LMDB asserts it), every
 *   node inside the page and none overlapping another (deleting such a
 *   node makes LMDB move bytes past the page), every child and overflow
 *   page number inside the file;
 * - leaf node flags: plain or big data in the named databases and the free
 *   list, sub-database records (48 bytes, flags 0) with a known name in the
 *   catalog;
 * - free-list records: key of 8 bytes, count within the record, page
 *   numbers strictly descending and inside the file;
 * - that no page is claimed twice (by two trees, two nodes, a tree and the
 *   free list), which LMDB's format guarantees ("each page is reachable
 *   exactly once") and which a damaged child or overflow page number breaks
 *   (only among the pages walked, in a quick check).
 *
 * Not checked: key order (a misordered key makes a lookup miss, which the
 * store reports, never a crash), the counters in the database records, and
 * the headers of value pages (checked when a value is dropped, in store/evict.c).
 */
#ifndef OFFLOADFS_STORE_VERIFY_H
#define OFFLOADFS_STORE_VERIFY_H

#include <lmdb.h>
#include <stddef.h>

/* LMDB's page header (PAGEHDRSZ on a 64-bit host): a value on its own
 * overflow page starts this far into it. */
#define VERIFY_PAGE_HDR 16u

/* Verifies the environment ENV (open, with no transaction of this process
 * active) whose named databases may only be NAMES[0..NNAMES-1], every page
 * when FULL, else quickly (see above). Returns 0,
 * STORE_ECORRUPT, or an errno (ENOMEM, or from mmap/fstat). When WHY is not
 * NULL, a refusal also writes a one-line reason there (page number and what
 * is wrong), for tests and tools. */
int store_verify_env(MDB_env *env, const char *const *names, unsigned nnames, int full,
                     char *why, size_t whylen);

/* Checks the two meta pages of DATAFILE (a data.mdb) before LMDB opens it:
 * mdb_env_open() trusts the page size they name, and divides by it (a zero
 * one stopped the process with SIGFPE). Where both are meta pages (magic
 * and version right, as LMDB checks), each must name the same power of two
 * from 512 to 64 KiB. Returns 0 (also when the file is missing, short or
 * not LMDB's: mdb_env_open() says so) or STORE_ECORRUPT. */
int store_verify_header(const char *datafile);

/* The address LMDB maps data.mdb at, worked out from INPAGE, a pointer into
 * a clean page of its map (one a read transaction returned), whose own page
 * number says where it lies. NULL when it cannot be known (pages of another
 * size than the system's are not aligned to theirs). */
const void *store_verify_map_base(const void *inpage, size_t psize);

/* Checks the header of the overflow page holding a value (DATA, SIZE bytes,
 * as LMDB returned it) before LMDB frees it: LMDB trusts that header's page
 * number, count and flags, and a damaged one frees live pages. BASE and
 * MAPSIZE describe LMDB's map (store_verify_map_base()); a value that is not on
 * a page of the map (a small one, inside its leaf; one written by this
 * transaction), or a NULL BASE, is not checked. Returns 0 or STORE_ECORRUPT. */
int store_verify_value_page(const void *data, size_t size, const void *base, size_t mapsize,
                            size_t psize);

#endif
