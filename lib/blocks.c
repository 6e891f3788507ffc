/*
 * blocks.c - blocks of a block-wise generation (tally_block_begin/end): a
 * video diffusion pipeline that generates its frames a block at a time, as
 * Inferix's block_analysis records them, so that tally gives C and C++
 * pipelines the same FPS and first-block delay (docs/analysis.md, "Video
 * diffusion").
 *
 * A block is rare (one per generated chunk of frames: milliseconds to
 * seconds), so it takes the global lock, like a memory snapshot: one block
 * is open per process at a time, whichever thread ends it. The report lists
 * every block (at most TL_MAX_BLOCKS, the rest counted) with its start, its
 * duration, its frames and the memory at its end (the process RSS, and the
 * GPU memory of the sampler's latest reading, like Inferix's per-block
 * memory_usage_mb); the trace has each as a complete event of category
 * "block".
 */
#include "internal.h"
#include "array.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tally_block_begin(double frames)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING && !tl_ensure_running())
        return;
    uint64_t now = tl_now();
    tl_thread *t = tl_thread_self();
    pthread_mutex_lock(&tl_g.lock);
    /* a begin while a block is open starts it again: the earlier begin had
     * no end, so no duration can be given to it */
    tl_g.block_restarted += tl_g.block_open;
    tl_g.block_open = 1;
    tl_g.block_t0 = now;
    tl_g.block_frames = isfinite(frames) && frames >= 0 ? frames : -1;
    tl_g.block_tid = t ? t->tid : 0;
    pthread_mutex_unlock(&tl_g.lock);
}

/* The GPU memory of the sampler's latest reading into b: this process's own,
 * added up over the GPUs read, where NVML accounts it on every one of them,
 * else the devices' used memory (every process's). Lock-free. */
static void gpu_memory(tl_block *b)
{
    tally_reading r;
    b->gpu_mem = -1;
    b->gpu_own = 0;
    if (tl_sampler_current(&r) != 0 || !(r.valid & TALLY_READING_GPU) || r.ngpus <= 0)
        return;
    double own = 0, used = 0;
    int nown = 0, nused = 0;
    for (int i = 0; i < r.ngpus && i < TALLY_READING_MAX_GPUS; i++) {
        if (r.gpus[i].valid & TALLY_GPU_PROCESS) {
            own += r.gpus[i].process_used_bytes;
            nown++;
        }
        if (r.gpus[i].valid & TALLY_GPU_MEMORY) {
            used += r.gpus[i].used_bytes;
            nused++;
        }
    }
    if (nown == r.ngpus) {
        b->gpu_mem = own;
        b->gpu_own = 1;
    } else if (nused > 0) {
        b->gpu_mem = used;
    }
}

void tally_block_end(void)
{
    if (atomic_load_explicit(&tl_g.state, memory_order_acquire) != TL_RUNNING && !tl_ensure_running())
        return;
    uint64_t now = tl_now();
    /* the memory at the end, read after the block's time was taken and
     * before the lock: /proc/self/statm, and the sampler's reading */
    tl_block mem = { 0 };
    mem.rss = tl_memory_rss();
    if (!(mem.rss > 0))
        mem.rss = -1;
    gpu_memory(&mem);
    pthread_mutex_lock(&tl_g.lock);
    if (!tl_g.block_open) {
        tl_g.block_unmatched++;
        goto out;
    }
    tl_g.block_open = 0;
    tl_block b = { tl_g.block_t0,     now > tl_g.block_t0 ? now - tl_g.block_t0 : 0,
                   tl_g.block_frames, tl_g.block_tid,
                   mem.rss,           mem.gpu_mem,
                   mem.gpu_own };
    if (tl_g.nblocks >= TL_MAX_BLOCKS ||
        tl_array_grow(&tl_g.blocks, tl_g.nblocks, &tl_g.blocks_cap, sizeof *tl_g.blocks, 64) != 0) {
        tl_g.blocks_dropped++;
        goto out;
    }
    tl_g.blocks[tl_g.nblocks++] = b;
out:
    pthread_mutex_unlock(&tl_g.lock);
}

/* The report's "blocks" (under tl_g.lock). */
void tl_blocks_write_report(tl_json *j, double ns_per_tick)
{
    tl_json_key(j, "blocks");
    tl_json_object_begin(j);
    double frames = 0;
    int sized = 0;
    for (size_t i = 0; i < tl_g.nblocks; i++)
        if (tl_g.blocks[i].frames >= 0) {
            frames += tl_g.blocks[i].frames;
            sized++;
        }
    tl_json_kv_uint(j, "count", tl_g.nblocks);
    tl_json_key(j, "frames");
    if (sized)
        tl_json_double(j, frames);
    else
        tl_json_null(j);
    tl_json_kv_uint(j, "dropped", tl_g.blocks_dropped);
    tl_json_kv_uint(j, "unmatched_ends", tl_g.block_unmatched);
    tl_json_kv_uint(j, "restarted", tl_g.block_restarted);
    tl_json_kv_bool(j, "open", tl_g.block_open);
    tl_json_key(j, "items");
    tl_json_array_begin(j);
    for (size_t i = 0; i < tl_g.nblocks; i++) {
        const tl_block *b = &tl_g.blocks[i];
        tl_json_object_begin(j);
        tl_json_kv_int(j, "time_ns", llround(tl_clock_ticks_to_ns_since_start(b->t0, ns_per_tick)));
        tl_json_kv_int(j, "dur_ns", llround((double)b->dur * ns_per_tick));
        tl_json_key(j, "frames");
        if (b->frames >= 0)
            tl_json_double(j, b->frames);
        else
            tl_json_null(j);
        tl_json_kv_int(j, "tid", b->tid);
        if (b->rss >= 0)
            tl_json_kv_double(j, "rss_bytes", b->rss);
        if (b->gpu_mem >= 0) {
            tl_json_kv_double(j, "gpu_memory_bytes", b->gpu_mem);
            tl_json_kv_string(j, "gpu_memory_kind", b->gpu_own ? "process" : "device");
        }
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}

/* The trace's block events (under tl_g.lock): "X", category "block", named
 * "block N" (from 0) with the frames in args. */
void tl_blocks_write_trace(tl_json *j, double ns_per_tick, int pid)
{
    for (size_t i = 0; i < tl_g.nblocks; i++) {
        const tl_block *b = &tl_g.blocks[i];
        char name[32];
        snprintf(name, sizeof name, "block %zu", i);
        tl_json_object_begin(j);
        tl_json_kv_string(j, "ph", "X");
        tl_json_kv_string(j, "cat", "block");
        tl_json_kv_string(j, "name", name);
        tl_json_kv_int(j, "pid", pid);
        tl_json_kv_int(j, "tid", b->tid);
        tl_json_key(j, "ts");
        tl_json_fixed(j, tl_clock_ticks_to_ns_since_start(b->t0, ns_per_tick) / 1000.0, 3);
        tl_json_key(j, "dur");
        tl_json_fixed(j, (double)b->dur * ns_per_tick / 1000.0, 3);
        tl_json_key(j, "args");
        tl_json_object_begin(j);
        tl_json_kv_int(j, "index", (long long)i);
        if (b->frames >= 0)
            tl_json_kv_double(j, "frames", b->frames);
        if (b->rss >= 0)
            tl_json_kv_double(j, "rss_bytes", b->rss);
        if (b->gpu_mem >= 0)
            tl_json_kv_double(j, "gpu_memory_bytes", b->gpu_mem);
        tl_json_object_end(j);
        tl_json_object_end(j);
    }
}

/* A fork child starts without the parent's blocks (under tl_g.lock, held
 * across the fork). */
void tl_blocks_atfork_child(void)
{
    free(tl_g.blocks);
    tl_g.blocks = NULL;
    tl_g.nblocks = tl_g.blocks_cap = 0;
    tl_g.blocks_dropped = tl_g.block_unmatched = tl_g.block_restarted = 0;
    tl_g.block_open = 0;
}
