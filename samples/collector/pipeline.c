/*
 * pipeline.c - an example program instrumented with libtally, shaped like the
 * video-diffusion inference pipelines tally's users profile (FramePack,
 * HunyuanVideo): load the models, encode the prompt and the input image,
 * encode the image into latents, run N diffusion steps through a stack of
 * transformer blocks, then decode the latents in chunks.
 *
 * Copy it as a starting point: every libtally call a real pipeline needs is
 * here (sections, a timed loop, nested sections, memory snapshots with a
 * provider for the program's own allocator, a counter, an event, tags, the
 * schedule step, the blocks of a block-wise generation). The "GPU" is simulated: each stage waits for a cost in
 * milliseconds set per variant (with noise), the way a host waits for its
 * device, and computes a small matrix product for a data-dependent result;
 * a bookkeeping allocator stands in for a caching GPU allocator (what
 * torch.cuda.memory_allocated/memory_reserved report).
 *
 * Stage costs are set by the clock, not by the CPU: a stage sleeps until a
 * little before its deadline and then watches the clock until the deadline
 * itself, so a late wake-up on a loaded machine does not lengthen it (only a
 * stage that loses its core during the last stretch ends late, an outlier
 * that the medians ignore). The chunks of the decode and the parts of the
 * text encoding, which the comparison judges by their sum, run on a timeline
 * from their parent's start: time lost between two parts (setting up a
 * buffer, the process waiting for a core) is taken off the next one. The demo's planted changes (slower decode, faster attention, a slow
 * rank) therefore show the same on an idle laptop and on a busy 2-core CI
 * machine.
 *
 *   tally_sample_pipeline [--steps N] [--blocks N] [--variant baseline|optimized]
 *                         [--slow-rank R --slow-factor F] [--seed S]
 *
 * The rank comes from RANK (libtally reads it too); launch.sh starts N ranks.
 */
#define _GNU_SOURCE
#include <tally/tally.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- options ------------------------------------------------------------ */

struct options {
    long steps;
    long blocks;
    const char *variant;
    double slow_factor;
    long slow_rank;
    unsigned long seed;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tally_sample_pipeline [options]\n"
                 "  --steps N             diffusion steps (default 10)\n"
                 "  --blocks N            transformer blocks per step (default 4)\n"
                 "  --variant V           baseline or optimized (default baseline)\n"
                 "  --slow-rank R         the rank that runs slower (default: none)\n"
                 "  --slow-factor F       how much slower that rank is (default 1.5)\n"
                 "  --seed S              seed of the timing noise (default 1)\n"
                 "The rank and world size are read from RANK and WORLD_SIZE; libtally\n"
                 "is configured by the TALLY_* variables (see tally.h).\n");
}

static int parse_long(const char *opt, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "tally_sample_pipeline: %s: expected an integer in [%ld, %ld], got \"%s\"\n", opt, min, max,
                text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    o->steps = 10;
    o->blocks = 4;
    o->variant = "baseline";
    o->slow_factor = 1.5;
    o->slow_rank = -1;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (v == NULL) {
            fprintf(stderr, "tally_sample_pipeline: %s: unknown option or missing value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--steps")) {
            if (parse_long(a, v, 1, 100000, &o->steps))
                return -1;
        } else if (!strcmp(a, "--blocks")) {
            if (parse_long(a, v, 1, 1000, &o->blocks))
                return -1;
        } else if (!strcmp(a, "--variant")) {
            if (strcmp(v, "baseline") && strcmp(v, "optimized")) {
                fprintf(stderr, "tally_sample_pipeline: --variant: expected baseline or optimized\n");
                return -1;
            }
            o->variant = v;
        } else if (!strcmp(a, "--slow-rank")) {
            if (parse_long(a, v, -1, 1 << 20, &o->slow_rank))
                return -1;
        } else if (!strcmp(a, "--slow-factor")) {
            char *end;
            errno = 0;
            o->slow_factor = strtod(v, &end);
            if (errno || end == v || *end || !(o->slow_factor >= 0.1 && o->slow_factor <= 100)) {
                fprintf(stderr, "tally_sample_pipeline: --slow-factor: expected a number in [0.1, 100]\n");
                return -1;
            }
        } else if (!strcmp(a, "--seed")) {
            if (parse_long(a, v, 0, 1L << 30, &x))
                return -1;
            o->seed = (unsigned long)x;
        } else {
            fprintf(stderr, "tally_sample_pipeline: %s: unknown option\n", a);
            return -1;
        }
    }
    return 0;
}

static long env_int(const char *name, long fallback)
{
    const char *v = getenv(name);
    char *end;
    if (v == NULL || *v == '\0')
        return fallback;
    long x = strtol(v, &end, 10);
    return *end == '\0' && x >= 0 ? x : fallback;
}

/* ---- stage costs -------------------------------------------------------- */

/* Milliseconds per call. The optimized variant has a fused attention (about
 * half the cost, a small workspace) but decodes in more, smaller tiles, which
 * is slower overall (6 x 45 ms instead of 4 x 50 ms: +35 % for vae_decode,
 * though each chunk is faster): comparing the two shows a win in one stage
 * and a loss in another, and a count change that explains it. */
struct costs {
    double load, tokenize, text_encoder, image_encoder, vae_encode;
    double norm, attention, mlp, scheduler;
    double decode_chunk;
    int decode_chunks;
    size_t attention_workspace, decode_chunk_bytes;
};

#define MiB ((size_t)1 << 20)

/* Loading fills 62 MiB of model buffers before it waits: its cost leaves room
 * for that even on a loaded machine, so that the stage's time stays set. */
static const struct costs baseline_costs = {
    .load = 300,
    .tokenize = 2,
    .text_encoder = 40,
    .image_encoder = 25,
    .vae_encode = 30,
    .norm = 2,
    .attention = 12,
    .mlp = 8,
    .scheduler = 3,
    .decode_chunk = 50,
    .decode_chunks = 4,
    .attention_workspace = 6 * MiB,
    .decode_chunk_bytes = 3 * MiB,
};

static const struct costs optimized_costs = {
    .load = 300,
    .tokenize = 2,
    .text_encoder = 40,
    .image_encoder = 25,
    .vae_encode = 30,
    .norm = 2,
    .attention = 6.4,
    .mlp = 8,
    .scheduler = 3,
    .decode_chunk = 45,
    .decode_chunks = 6,
    .attention_workspace = 1 * MiB,
    .decode_chunk_bytes = 2 * MiB,
};

/* ---- a simulated caching GPU allocator ---------------------------------- */

/* Like PyTorch's caching allocator: "allocated" is what live tensors use,
 * "reserved" what the allocator holds from the device, grown in 2 MiB segments
 * and kept after frees until empty_cache. The buffers are real (malloc'd and
 * touched) so the process RSS moves too. The provider runs on whichever
 * thread takes the snapshot, and tally.h allows the sampler thread to call
 * it as well, hence the lock. */
struct sim_allocator {
    pthread_mutex_t lock;
    size_t allocated, reserved, peak_allocated;
};

#define SEGMENT (2 * MiB)

static struct sim_allocator gpu = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Freed blocks kept for reuse, like the caching allocator's free blocks: a
 * workspace allocated in every transformer block is filled once, not once
 * per block (filling megabytes would put host work, and the machine's load,
 * into the timed stages). */
#define CACHED_BLOCKS 8
static size_t *cached[CACHED_BLOCKS];

static void *sim_alloc(size_t bytes)
{
    /* The size lives in a header so sim_free can give it back. */
    size_t *p = NULL;
    pthread_mutex_lock(&gpu.lock);
    for (int i = 0; i < CACHED_BLOCKS && p == NULL; i++)
        if (cached[i] != NULL && cached[i][0] == bytes) {
            p = cached[i];
            cached[i] = NULL;
        }
    pthread_mutex_unlock(&gpu.lock);
    if (p == NULL) {
        p = malloc(sizeof(size_t) * 2 + bytes);
        if (p == NULL) {
            fprintf(stderr, "tally_sample_pipeline: out of memory\n");
            exit(1);
        }
        p[0] = bytes;
        memset(p + 2, 0x3c, bytes);
    }
    pthread_mutex_lock(&gpu.lock);
    gpu.allocated += bytes;
    if (gpu.allocated > gpu.peak_allocated)
        gpu.peak_allocated = gpu.allocated;
    if (gpu.allocated > gpu.reserved)
        gpu.reserved = round_up(gpu.allocated, SEGMENT);
    pthread_mutex_unlock(&gpu.lock);
    return p + 2;
}

static void sim_free(void *ptr)
{
    if (ptr == NULL)
        return;
    size_t *p = (size_t *)ptr - 2;
    pthread_mutex_lock(&gpu.lock);
    gpu.allocated -= p[0];
    for (int i = 0; i < CACHED_BLOCKS && p != NULL; i++)
        if (cached[i] == NULL) {
            cached[i] = p;
            p = NULL;
        }
    pthread_mutex_unlock(&gpu.lock);
    free(p);
}

static void sim_empty_cache(void)
{
    pthread_mutex_lock(&gpu.lock);
    for (int i = 0; i < CACHED_BLOCKS; i++) {
        free(cached[i]);
        cached[i] = NULL;
    }
    gpu.reserved = round_up(gpu.allocated, SEGMENT);
    pthread_mutex_unlock(&gpu.lock);
}

/* Registered with tally_register_memory_provider: called at every
 * tally_memory_snapshot. It must not call other tally functions. */
static void gpu_provider(tally_provider_sink *sink, void *user)
{
    struct sim_allocator *a = user;
    pthread_mutex_lock(&a->lock);
    double allocated = (double)a->allocated, reserved = (double)a->reserved;
    double peak = (double)a->peak_allocated;
    pthread_mutex_unlock(&a->lock);
    tally_provider_put(sink, "allocated", allocated);
    tally_provider_put(sink, "reserved", reserved);
    tally_provider_put(sink, "peak_allocated", peak);
}

/* ---- the work ----------------------------------------------------------- */

#define DIM 48

/* How long before its deadline a stage stops sleeping and watches the clock:
 * more than a wake-up takes on a loaded machine, little enough that the
 * watching ranks leave the cores to each other. */
#define SPIN_MS 1.0

struct worker {
    float a[DIM * DIM], b[DIM * DIM], c[DIM * DIM];
    double speed; /* > 1: this rank is slower */
    double rms;   /* of the last product, before rescaling */
    uint64_t rng;
    int on_timeline; /* stages end at `due` + their cost (timeline_begin) */
    struct timespec due;
};

static uint64_t next_random(uint64_t *s)
{
    /* splitmix64: small, and the same sequence everywhere for a given seed. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return (double)(next_random(s) >> 11) / 9007199254740992.0;
}

static void matmul(struct worker *w)
{
    for (int i = 0; i < DIM; i++) {
        float *ci = &w->c[i * DIM];
        for (int j = 0; j < DIM; j++)
            ci[j] = 0;
        for (int k = 0; k < DIM; k++) {
            float aik = w->a[i * DIM + k];
            const float *bk = &w->b[k * DIM];
            for (int j = 0; j < DIM; j++)
                ci[j] += aik * bk[j];
        }
    }
    /* Feed the result back so the products depend on each other and cannot
     * be skipped, rescaled to unit RMS: left alone the values would shrink
     * into denormals (slow) and then to zero (fast), and the cost would drift. */
    double sum = 0;
    for (int i = 0; i < DIM * DIM; i++)
        sum += (double)w->c[i] * w->c[i];
    w->rms = sqrt(sum / (DIM * DIM));
    float scale = w->rms > 0 ? (float)(1.0 / w->rms) : 1.0f;
    for (int i = 0; i < DIM * DIM; i++)
        w->a[i] = w->c[i] * scale;
}

static double ts_ms(const struct timespec *ts)
{
    return (double)ts->tv_sec * 1e3 + (double)ts->tv_nsec / 1e6;
}

static struct timespec ts_plus_ms(const struct timespec *ts, double ms)
{
    struct timespec out = *ts;
    long long ns = (long long)out.tv_nsec + llround(ms * 1e6);
    out.tv_sec += (time_t)(ns / 1000000000LL);
    out.tv_nsec = (long)(ns % 1000000000LL);
    return out;
}

static void worker_init(struct worker *w, uint64_t seed, double speed)
{
    w->rng = seed;
    w->speed = speed;
    for (int i = 0; i < DIM * DIM; i++) {
        w->a[i] = (float)(uniform(&w->rng) - 0.5);
        w->b[i] = (float)(uniform(&w->rng) - 0.5) * 2.0f;
    }
}

/* One call of a stage whose cost is *cost milliseconds, with noise: +-4 %
 * usually and, for stages marked spiky (the many small per-block stages), now
 * and then a 1.5x outlier, as on a shared device. The call is timed from
 * start (the section's beginning, so host work before the wait counts in).
 * Returns the RMS of a product (data-dependent, so it varies a little from
 * call to call). */
static double stage_from(struct worker *w, const double *cost, int spiky, const struct timespec *start)
{
    double ms = *cost * w->speed * (0.96 + 0.08 * uniform(&w->rng));
    if (spiky && uniform(&w->rng) < 0.02)
        ms *= 1.5;
    if (w->on_timeline)
        start = &w->due;
    struct timespec due = ts_plus_ms(start, ms), wake = ts_plus_ms(start, ms - SPIN_MS), now;
    w->due = due;
    matmul(w);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (ts_ms(&now) < ts_ms(&wake))
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR)
            ;
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while (ts_ms(&now) < ts_ms(&due));
    return w->rms;
}

/* Stages from here to timeline_end end one after the other from now:
 * stage_from's start is ignored. */
static void timeline_begin(struct worker *w)
{
    clock_gettime(CLOCK_MONOTONIC, &w->due);
    w->on_timeline = 1;
}

static void timeline_end(struct worker *w)
{
    w->on_timeline = 0;
}

static double stage(struct worker *w, const double *cost, int spiky)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return stage_from(w, cost, spiky, &now);
}

static double work(struct worker *w, const double *cost)
{
    return stage(w, cost, 0);
}
static double work_spiky(struct worker *w, const double *cost)
{
    return stage(w, cost, 1);
}

/* ---- the pipeline ------------------------------------------------------- */

struct models {
    void *text_encoder, *image_encoder, *transformer, *vae;
};

static void load_models(struct worker *w, const struct costs *c, struct models *m)
{
    TALLY_SCOPE("load_models");
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    m->text_encoder = sim_alloc(16 * MiB);
    m->image_encoder = sim_alloc(6 * MiB);
    m->transformer = sim_alloc(32 * MiB);
    m->vae = sim_alloc(8 * MiB);
    stage_from(w, &c->load, 0, &start);
}

static void text_encoding(struct worker *w, const struct costs *c, struct models *m)
{
    tally_begin("text_encoding");
    timeline_begin(w); /* the forward pass absorbs the buffer set up before it */
    tally_begin("tokenize");
    work(w, &c->tokenize);
    /* Prompt lengths vary; a counter keeps their count, mean and range. */
    double tokens = 77 + (double)(next_random(&w->rng) % 436);
    tally_counter("tokens", tokens);
    tally_end();
    void *hidden = sim_alloc(2 * MiB);
    tally_begin("text_encoder_forward");
    work(w, &c->text_encoder);
    tally_end();
    timeline_end(w);
    sim_free(hidden);
    tally_end();
    /* Offload the text encoder, as FramePack does on small GPUs. */
    sim_free(m->text_encoder);
    m->text_encoder = NULL;
}

static void transformer_block(struct worker *w, const struct costs *c)
{
    tally_begin("transformer_block");
    tally_begin("norm");
    work_spiky(w, &c->norm);
    tally_end();
    tally_begin("attention");
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    void *workspace = sim_alloc(c->attention_workspace);
    stage_from(w, &c->attention, 1, &start);
    sim_free(workspace);
    tally_end();
    tally_begin("mlp");
    work_spiky(w, &c->mlp);
    tally_end();
    tally_end();
}

static void sample(struct worker *w, const struct costs *c, const struct options *o)
{
    char args[96];
    tally_begin("sampling");
    for (long step = 0; step < o->steps; step++) {
        tally_iteration_begin("diffusion_step");
        for (long b = 0; b < o->blocks; b++)
            transformer_block(w, c);
        tally_begin("scheduler_step");
        /* The latent's norm falls as the noise is removed step by step. */
        double sigma = 1.0 - 0.8 * (double)(step + 1) / (double)o->steps;
        double norm = work(w, &c->scheduler) * (0.2 + sigma);
        tally_end();
        tally_iteration_end("diffusion_step");
        tally_counter("latent_norm", norm);
        if ((step + 1) % 5 == 0 || step + 1 == o->steps) {
            snprintf(args, sizeof args, "{\"step\":%ld,\"latent_norm\":%.4f}", step + 1, norm);
            tally_event("checkpoint", args);
        }
        /* One step of the profiling schedule (TALLY_SCHEDULE) per diffusion step. */
        tally_step();
    }
    tally_end();
}

/* Video frames each decoded chunk yields: every chunk is one block of the
 * generation (tally_block_begin/end), from which tally reports FPS and the
 * first-block delay as it does for Inferix's block-wise pipelines. */
#define FRAMES_PER_CHUNK 8

static void vae_decode(struct worker *w, const struct costs *c, void **frames)
{
    TALLY_SCOPE("vae_decode");
    timeline_begin(w);
    for (int i = 0; i < c->decode_chunks; i++) {
        tally_block_begin(FRAMES_PER_CHUNK);
        TALLY_SCOPE("vae_decode_chunk");
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        frames[i] = sim_alloc(c->decode_chunk_bytes);
        stage_from(w, &c->decode_chunk, 0, &start);
        tally_block_end();
    }
    timeline_end(w);
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    struct options o;
    struct models m = { 0 };
    void *frames[16] = { 0 };
    char text[32];

    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    const struct costs *c = strcmp(o.variant, "optimized") ? &baseline_costs : &optimized_costs;
    long rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1);
    double t0 = wall_ms();

    /* Optional (the first tally call would do it); configured from TALLY_*. */
    tally_init(NULL);
    tally_tag("model", "framepack-sim");
    tally_tag("variant", o.variant);
    snprintf(text, sizeof text, "%ld", o.steps);
    tally_tag("steps", text);
    snprintf(text, sizeof text, "%lu", o.seed);
    tally_tag("seed", text);
    tally_register_memory_provider("gpu", gpu_provider, &gpu);

    static struct worker w;
    worker_init(&w, (uint64_t)o.seed * 1000003u + (uint64_t)rank, rank == o.slow_rank ? o.slow_factor : 1.0);

    load_models(&w, c, &m);
    tally_memory_snapshot("after_load");

    text_encoding(&w, c, &m);
    tally_memory_snapshot("after_text_encoding");

    struct timespec start;
    tally_begin("image_encoder");
    clock_gettime(CLOCK_MONOTONIC, &start);
    void *image_embeds = sim_alloc(1 * MiB);
    stage_from(&w, &c->image_encoder, 0, &start);
    tally_end();

    tally_begin("vae_encode");
    clock_gettime(CLOCK_MONOTONIC, &start);
    void *latents = sim_alloc(4 * MiB);
    stage_from(&w, &c->vae_encode, 0, &start);
    tally_end();

    sample(&w, c, &o);
    tally_memory_snapshot("after_sampling");

    vae_decode(&w, c, frames);
    tally_memory_snapshot("after_vae_decode");

    for (int i = 0; i < c->decode_chunks; i++)
        sim_free(frames[i]);
    sim_free(latents);
    sim_free(image_embeds);
    sim_free(m.transformer);
    sim_free(m.image_encoder);
    sim_free(m.vae);
    sim_empty_cache();

    printf("rank %ld/%ld: %s, %ld steps x %ld blocks, %.0f ms%s\n", rank, world, o.variant, o.steps, o.blocks,
           wall_ms() - t0, rank == o.slow_rank ? " (slow rank)" : "");
    fflush(stdout);
    /* Also run at exit; calling it here writes the files before we return.
     * A write failure was already reported on stderr; the run itself is fine. */
    tally_shutdown();
    return 0;
}
