/*
 * spill.h - sessions whose bulk waits on disk: what lets one process (tally report of 10^5
 * ranks, tally-mpi's process 0, tally merge) hold a job's sessions in memory bounded by what
 * the aggregate needs at once, not by every rank's details (issue 35; docs/cluster.md,
 * "Process 0's memory").
 *
 * The one idea: most of a session's memory is its bulk -- the statistics of each name and
 * kernel with their histograms and samples, the kernels' launch details, the timeline's lanes,
 * the call tree, the memory series (about 210 KB of a 235 KB session of a generated training
 * rank) -- and the finish reads each rank's bulk in one pass (the per-name table, the call
 * trees, what the rules read of it) and a few analyses one rank's, and the outputs read the
 * bulk of the ranks they show in full (rank_pick.h). So once the sessions whole in memory
 * hold 512 MiB of details (or a count of them), each further one is written to a temporary
 * file (tally-mpi's wire format, partial.h: raw values, read back bit for bit) and its bulk
 * freed; an analysis or output that reads a session's bulk holds it (read back when out) and
 * drops it after (freed again when nobody holds it). What is read back is what was written,
 * so every number and every output is the same with or without the file.
 *
 * The file is created in $TMPDIR (else /tmp) already unlinked: nothing is left behind, and no
 * user file is touched. When it cannot be written (no room), the session stays whole in
 * memory and one warning says so. When a read back fails (the disk failed under the run), the
 * process stops with a message: the numbers would be wrong.
 *
 * Thread-safety: tl_spill_session may be called from the reading threads at once; holding
 * and dropping from the threads that write the outputs at once (under one lock). What a session keeps while out (its timeline's range and count of lanes, its
 * memory series' count and range) is never written by a hold or a drop: any thread may read
 * it. Its bulk only a thread that holds it may read.
 */
#ifndef TALLY_ANALYZE_SPILL_H
#define TALLY_ANALYZE_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* Sessions are kept whole in memory while their details add up to this many MiB; the details
 * of the rest go to disk (TALLY_SPILL_AFTER overrides: a count of sessions, "256", or a size,
 * "2G"; 0 spills every session, which the tests use to prove the outputs do not change). */
#define TL_SPILL_AFTER_MIB_DEFAULT 512

/* The limits a command uses: TALLY_SPILL_AFTER when set to a count (*sessions; *bytes
 * UINT64_MAX) or a size (*bytes; *sessions SIZE_MAX), else the default size. */
void tl_spill_limits(size_t *sessions, uint64_t *bytes);

/* Offer a finished session. One of the two limits is set (tl_spill_limits), the other is
 * SIZE_MAX or UINT64_MAX: while fewer than `after` sessions were offered in this process, or
 * while the details of those offered add up to no more than `after_bytes` (what the wire would
 * take, tl_partial_wire_bulk_size: about their memory), it stays whole; past the limit its bulk
 * goes to disk (a session with no bulk, or one already out, is left as it is). Both unset:
 * never. */
void tl_spill_session(tl_session *s, size_t after, uint64_t after_bytes);

/* The session's bulk in memory until the matching tl_spill_drop (read back when out). They
 * take a const session: what the session says does not change, only where its bulk is (a
 * cache; C++ would call the spill record and the bulk's pointers mutable), so the outputs,
 * which read a const aggregate, hold what they read too. */
void tl_spill_hold(const tl_session *s);
void tl_spill_drop(const tl_session *s);

/* The session whole in memory for good (read back if out, its place on disk forgotten): a
 * session that lends or borrows parts (settle.c) changes after it was written. 0 always
 * (a failed read back stops the process); the signature is settle's hook's. */
int tl_spill_keep_whole(void *ctx, tl_session *s);

/* What the file holds: sessions written and bytes (for the progress line and the notes). */
void tl_spill_stats(size_t *sessions, uint64_t *bytes);

#endif
