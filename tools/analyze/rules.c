/*
 * rules.c - the recommendation table and the headline.
 *
 * Each rule has an id, a severity scale, the condition under which it fires,
 * its preconditions (what must be true of the data for the rule to mean
 * anything), the evidence it shows and its advice. A rule whose
 * preconditions fail is silent and is listed in the aggregate's skips with
 * the reason; docs/analysis.md's rules section is generated from this table
 * (render/docs_tables.c; tests/unit/test_docs.c checks they agree). The
 * thresholds are the seed profilers' (FramePack, Inferix) and HTA's, named
 * where they are set.
 *
 * One row of rules[] carries a rule whole: its id and severity, the check
 * that decides it (a static function below; rules that share their
 * evidence share a check and sit together), and its texts, which name
 * thresholds as {NAME} so that each value is written once, in its #define
 * (the thresholds[] table maps names to values for the docs). The rows are
 * in the order tl_apply_rules runs their checks, which is the order findings
 * of one severity are listed in.
 */
#define _GNU_SOURCE
#include "aggregate.h"
#include "numbers.h"
#include "straggler_limits.h"

#include <inttypes.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STAGE_SHARE 30.0        /* a stage's self time over 30 % of the time (Inferix's bottleneck rule) */
#define MEMORY_PEAK_PCT 90.0    /* peak memory over 90 % of the device */
#define LOW_GPU_UTIL_PCT 50.0   /* GPU busy under 50 % of the kernel time */
#define COMM_HEAVY_PCT 10.0     /* communication not hidden under compute over 10 % of the kernel time */
#define LOW_OVERLAP_PCT 30.0    /* less than 30 % of communication hidden under compute ... */
#define OVERLAP_MIN_COMM 5.0    /* ... when communication is over 5 % of the kernel time */
#define LAUNCH_BOUND_SHARE 50.0 /* the host's part of host_wait over half of the idle gaps ... */
#define LAUNCH_BOUND_IDLE 50.0  /* ... of a GPU idle at least half of the kernel time ... */
#define REAL_WORK_PCT 10.0      /* ... over the streams that carry at least 10 % of the GPU's busy time */
#define HOST_MIN_GAPS 3         /* ... in at least 3 gaps: one or two long gaps are a pause, not a pattern */
/* Host-wait gaps are launch overhead when they are at most TL_LAUNCH_GAP_NS
 * (session.h, 1 ms): eager PyTorch spends tens of µs per operator on
 * dispatch and launch, so a host that only launches leaves gaps of a few
 * operators' worth, which CUDA graphs remove; gaps of milliseconds are host
 * work between launches (CPU ops, Python, data preparation), which graphs do
 * not remove. */
#define BLOCKED_SHARE 50.0                         /* blocking host calls cover over half of the GPU idle time ... */
#define BLOCKED_IDLE 10.0                          /* ... when idle is over 10 % */
#define DATA_LOADING_PCT 5.0                       /* data loading over 5 % of the step */
#define STEP_SPREAD 0.20                           /* (max - min) / median of step times over 20 % */
#define MIN_STEPS 3                                /* steps for anything said about steps */
#define FRAGMENTATION_RATIO 1.5                    /* reserved over 1.5 x allocated ... */
#define FRAGMENTATION_BYTES (1024.0 * 1024 * 1024) /* ... and over 1 GiB apart */
#define IMBALANCE 1.20                             /* a rank 20 % above the mean step time */
#define MIN_KERNEL_NS 1000000                      /* kernel-time shares need 1 ms of kernel time ... */
#define MIN_GPU_EVENTS 5                           /* ... and 5 GPU events: below, a share of nothing says nothing */
/* The seeds' rules on sampled telemetry and video diffusion (seed_rules below). */
#define LOW_SAMPLED_UTIL_PCT 50.0         /* a monitor's utilization averaging under 50 % (Inferix's GPU rule) */
#define MIN_UTIL_SAMPLES 3                /* ... over at least 3 samples */
#define HOT_WARN_C 90.0                   /* thermal: warning above 90 C ... */
#define HOT_CRIT_C 95.0                   /* ... critical at 95 C held over half of the samples */
#define HOT_SHARE_WARN 0.10               /* above 85 C in over 10 % of the samples: warning */
#define THERMAL_SLOWDOWN_CRIT 0.10        /* NVML thermal slowdown in over 10 % of the samples: critical */
#define POWER_CAP_SHARE 0.50              /* power at the cap in over half of the samples */
#define SLOW_CLOCK_SHARE 0.10             /* the SM clock below the base in over 10 % of the busy samples ... */
#define SLOW_CLOCK_MIN_SAMPLES 5          /* ... of at least 5 busy samples with both clocks */
#define GROWTH_PCT 10.0                   /* memory growth: over 10 % ... */
#define GROWTH_BYTES (64.0 * 1024 * 1024) /* ... and over 64 MiB from the first repetition to the last, */
#define GROWTH_BURST 0.75                 /* ... at most 75 % of it within 3 repetitions (else a one-time allocation) */
#define LOW_FPS 10.0                      /* Inferix's FPS rule: under 10 frames per second */
#define FIRST_BLOCK_RATIO 1.5             /* the first block over 1.5x the later blocks' median ... */
#define FIRST_BLOCK_EXTRA_NS 500000000    /* ... and 0.5 s more */
#define LAYER_SHARE 30.0                  /* a layer over 30 % of the layers' time (Inferix's computation bottleneck) */
#define JUMP_MIN_BYTES (256.0 * 1024 * 1024)    /* a reserved jump: 256 MiB or more ... */
#define JUMP_MIN_FRAC 0.10                      /* ... and 10 % of the reserved memory before it ... */
#define JUMP_EXPLAINED 0.25                     /* ... with the highest allocated rising under a quarter of it */
#define JUMP_MIN_COUNT 2                        /* twice or more ... */
#define JUMP_TOTAL_BYTES (1024.0 * 1024 * 1024) /* ... adding up to 1 GiB */
#define JUMP_MIN_READINGS 3
#define EAGER_MIN_SHARE 1.0 /* eager attention: 1 % of a rank's time or more ... */
#define EAGER_MIN_SEQ 128   /* ... with L x L scores of L 128 or more (softmax) */

/* Each threshold a rule's text names as {NAME}, with how the docs write it:
 * the value is the #define's, written once; render's docs table
 * (render/docs_tables.c) puts it into the text, and test_docs checks that
 * every {NAME} of the table is here. A fraction shows as a percentage. */
#define PCT(name) #name, TL_NUM_PCT_WHOLE, (name)
#define FRACTION(name) #name, TL_NUM_PCT_WHOLE, 100 * (name)
#define DURATION(name) #name, TL_NUM_DUR_ROUND, (name)
#define SIZE(name) #name, TL_NUM_BYTES_ROUND, (name)
#define COUNT(name) #name, TL_NUM_COUNT, (name)
#define RATIO(name) #name, TL_NUM_RATIO, (name)
static const tl_rule_threshold thresholds[] = {
    { PCT(STAGE_SHARE) },
    { PCT(MEMORY_PEAK_PCT) },
    { PCT(LOW_GPU_UTIL_PCT) },
    { PCT(COMM_HEAVY_PCT) },
    { PCT(LOW_OVERLAP_PCT) },
    { PCT(OVERLAP_MIN_COMM) },
    { PCT(LAUNCH_BOUND_SHARE) },
    { PCT(LAUNCH_BOUND_IDLE) },
    { PCT(REAL_WORK_PCT) },
    { COUNT(HOST_MIN_GAPS) },
    { DURATION(TL_LAUNCH_GAP_NS) },
    { PCT(BLOCKED_SHARE) },
    { PCT(BLOCKED_IDLE) },
    { PCT(DATA_LOADING_PCT) },
    { FRACTION(STEP_SPREAD) },
    { COUNT(MIN_STEPS) },
    { RATIO(FRAGMENTATION_RATIO) },
    { SIZE(FRAGMENTATION_BYTES) },
    { RATIO(IMBALANCE) },
    { DURATION(MIN_KERNEL_NS) },
    { COUNT(MIN_GPU_EVENTS) },
    { PCT(LOW_SAMPLED_UTIL_PCT) },
    { COUNT(MIN_UTIL_SAMPLES) },
    { COUNT(TL_HOT_C) },
    { COUNT(HOT_WARN_C) },
    { COUNT(HOT_CRIT_C) },
    { FRACTION(HOT_SHARE_WARN) },
    { FRACTION(THERMAL_SLOWDOWN_CRIT) },
    { FRACTION(TL_POWER_CAP_SHARE) },
    { FRACTION(SLOW_CLOCK_SHARE) },
    { COUNT(SLOW_CLOCK_MIN_SAMPLES) },
    { PCT(GROWTH_PCT) },
    { SIZE(GROWTH_BYTES) },
    { FRACTION(GROWTH_BURST) },
    { FRACTION(TL_GROWTH_NOISE) },
    { COUNT(TL_GROWTH_MIN_REPEATS) },
    { COUNT(TL_GROWTH_MIN_SAMPLES) },
    { COUNT(LOW_FPS) },
    { RATIO(FIRST_BLOCK_RATIO) },
    { DURATION(FIRST_BLOCK_EXTRA_NS) },
    { PCT(LAYER_SHARE) },
    { SIZE(JUMP_MIN_BYTES) },
    { FRACTION(JUMP_MIN_FRAC) },
    { SIZE(JUMP_TOTAL_BYTES) },
    { COUNT(JUMP_MIN_READINGS) },
    { COUNT(EAGER_MIN_SEQ) },
    { PCT(EAGER_MIN_SHARE) },
    { PCT(TL_DRIFT_PCT) },
    { COUNT(STRAGGLER_MIN_STEPS) },
    { FRACTION(STRAGGLER_FLOOR) },
    { FRACTION(STRAGGLER_SEVERE_EFFECT) },
    { FRACTION(STRAGGLER_SEVERE_SHARE) },
    { COUNT(STRAGGLER_SEVERE_STEPS) },
    { FRACTION(STRAGGLER_WARN_EFFECT) },
};

const tl_rule_threshold *tl_rule_thresholds(size_t *n)
{
    *n = sizeof thresholds / sizeof thresholds[0];
    return thresholds;
}

/* The check that decides each rule (below): one function may decide
 * several rules that share their evidence, and they sit together in the
 * table. tl_apply_rules runs them in the table's order, which is the order
 * findings of one severity are listed in. */
static void straggler_rule(tl_aggregate *a);
static void low_gpu_rule(tl_aggregate *a);
static void comm_rules(tl_aggregate *a);
static void memory_rule(tl_aggregate *a);
static void host_rules(tl_aggregate *a);
static void step_rules(tl_aggregate *a);
static void data_loading(tl_aggregate *a);
static void dominant_stage(tl_aggregate *a);
static void drift_rule(tl_aggregate *a);
static void sampled_utilization(tl_aggregate *a);
static void thermal(tl_aggregate *a);
static void power_at_cap(tl_aggregate *a);
static void clocks_below_base(tl_aggregate *a);
static void memory_growth(tl_aggregate *a);
static void diffusion_rules(tl_aggregate *a);
static void reserved_jumps(tl_aggregate *a);
static void eager_attention(tl_aggregate *a);

static const tl_rule_info rules[] = {
    { .id = "straggler",
      .severity = "warning",
      .check = straggler_rule,
      .condition =
          "a rank is slower than the median of the other ranks by over {STRAGGLER_FLOOR} in most comparable steps, "
          "and its mean excess is beyond {STRAGGLER_FLOOR} and two standard errors given the ranks' own step-to-step "
          "noise; or it arrives last to "
          "two thirds of the matched collectives or causes two thirds of the waiting in them (p < 0.01)",
      .preconditions =
          "two or more ranks; at least {STRAGGLER_MIN_STEPS} comparable steps on every rank (ProfilerStep or tally "
          "iterations, the last "
          "ProfilerStep of a trace left out) or at least 3 matched collectives; slow compute and last arrival agree",
      .evidence =
          "the per-step excess, steps slower / compared, the ranks' noise, and the kernels or sections that grew",
      .advice = "Check that rank's host and GPU (clocks, thermal throttling, neighbours) and its share of the data.",
      .scale = "critical: over {STRAGGLER_SEVERE_EFFECT} slower in {STRAGGLER_SEVERE_SHARE} of at least "
               "{STRAGGLER_SEVERE_STEPS} steps (or last to, or causing the waiting in, {STRAGGLER_SEVERE_SHARE} of at "
               "least {STRAGGLER_SEVERE_STEPS} collectives); warning: over {STRAGGLER_WARN_EFFECT} slower in two "
               "thirds of the steps (or last to two thirds of "
               "the collectives, or causing two thirds of the waiting); else info" },
    { .id = "low-gpu-utilization",
      .severity = "warning",
      .check = low_gpu_rule,
      .condition = "the GPU is busy less than {LOW_GPU_UTIL_PCT} of the kernel time (from the trace's GPU events)",
      .preconditions = "GPU events present, with at least {MIN_KERNEL_NS} of kernel time and {MIN_GPU_EVENTS} GPU "
                       "events (a share of less says nothing); the trace does not only capture graphs (captured "
                       "kernels did not run); a monitor's sampled utilization is low-sampled-utilization's",
      .evidence = "busy %, kernel time, idle, compute",
      .advice = "Find what the GPU waits for: the idle breakdown says whether it is the host (launch-bound) or gaps "
                "between kernels.",
      .scale = NULL },
    { .id = "communication-heavy",
      .severity = "warning",
      .check = comm_rules,
      .condition = "communication kernels not overlapping compute (exposed communication) take over {COMM_HEAVY_PCT} "
                   "of the kernel time",
      .preconditions = "GPU events present; communication kernels present (the kernel-type table)",
      .evidence = "communication % and its exposed part, its time, the share overlapping compute",
      .advice = "Overlap communication with compute (bucketed all-reduce, prefetching) or reduce its volume.",
      .scale = NULL },
    { .id = "low-overlap",
      .severity = "info",
      .check = comm_rules,
      .condition = "less than {LOW_OVERLAP_PCT} of the communication time overlaps compute",
      .preconditions = "communication over {OVERLAP_MIN_COMM} of the kernel time",
      .evidence = "overlap %, communication time",
      .advice = "Schedule collectives on a separate stream alongside independent compute.",
      .scale = NULL },
    { .id = "memory-near-capacity",
      .severity = "warning",
      .check = memory_rule,
      .condition = "peak device memory (allocated, reserved or used on the device) over {MEMORY_PEAK_PCT} of the "
                   "device's capacity",
      .preconditions = "the device's capacity and a peak known",
      .evidence = "the peaks known (allocated, reserved, used on the device), the capacity",
      .advice = "Reduce activation memory (activation checkpointing, smaller micro-batches) before it runs out.",
      .scale = NULL },
    { .id = "blocking-host-call",
      .severity = "warning",
      .check = host_rules,
      .condition = "blocking host calls cover over {BLOCKED_SHARE} of the GPU idle time that had no work queued (no "
                   "kernel launched before it waiting to start), with idle over {BLOCKED_IDLE} of the kernel time",
      .preconditions =
          "GPU events present, with at least {MIN_KERNEL_NS} of kernel time and {MIN_GPU_EVENTS} GPU events; blocking "
          "host calls (cudaMemcpy, cudaStreamSynchronize, cudaDeviceSynchronize, hipMemcpyWithStream, ...; "
          "asynchronous copies, which block with pageable memory) in the trace; the trace does not only capture graphs",
      .evidence = "the idle time covered, the call covering most of it",
      .advice = "The host waits for the GPU in a synchronous call, so it cannot queue the next work: use the async "
                "variant (cudaMemcpyAsync with pinned memory, non_blocking=True), or move the synchronization out of "
                "the loop (.item(), .cpu(), printing tensors synchronize too).",
      .scale = NULL },
    { .id = "launch-bound",
      .severity = "warning",
      .check = host_rules,
      .condition =
          "the host's part of host_wait (each gap up to its launch) is over {LAUNCH_BOUND_SHARE} of the idle gaps of "
          "the streams that carry real work, in at least {HOST_MIN_GAPS} gaps, and gaps of at most {TL_LAUNCH_GAP_NS} "
          "(launch overhead) hold over half of the host's gap time (weighted by length, never by count)",
      .preconditions = "GPU events present, with at least {MIN_KERNEL_NS} of kernel time and {MIN_GPU_EVENTS} GPU "
                       "events; the GPU idle at least {LAUNCH_BOUND_IDLE} of the kernel time; streams carrying at "
                       "least {REAL_WORK_PCT} of the GPU's busy time and not mostly collectives (side streams with a "
                       "few tiny kernels, and the gaps between collectives, are left out); blocking host calls do not "
                       "explain the idle time; the host does not sit in a collective for half of the gap time (waiting "
                       "for another rank: Waits); the trace does not only capture graphs",
      .evidence = "the host's share, host_wait and its part after the launches, idle %, the streams counted",
      .advice = "The CPU does not launch kernels fast enough: use CUDA graphs (torch.compile "
                "mode=\"reduce-overhead\"), fuse small kernels, or move Python overhead off the critical path.",
      .scale = NULL },
    { .id = "host-bound",
      .severity = "warning",
      .check = host_rules,
      .condition =
          "the host's part of host_wait (each gap up to its launch) is over {LAUNCH_BOUND_SHARE} of the idle gaps of "
          "the streams that carry real work, in at least {HOST_MIN_GAPS} gaps, and gaps over {TL_LAUNCH_GAP_NS} hold "
          "half of the host's gap time or more (weighted by length), or between CUDA/HIP graph replays; when the host "
          "loads data for half of that time it says so, with the data-loading advice",
      .preconditions =
          "GPU events present, with at least {MIN_KERNEL_NS} of kernel time and {MIN_GPU_EVENTS} GPU events; the GPU "
          "idle at least {LAUNCH_BOUND_IDLE} of the kernel time; streams carrying at least {REAL_WORK_PCT} of the "
          "GPU's busy time and not mostly collectives; blocking host calls do not explain the idle time; the host does "
          "not sit in a collective for half of the gap time (Waits); the trace does not only capture graphs",
      .evidence = "the host's share, the number of host-wait gaps and the mean of the host's part, host_wait and its "
                  "part after the launches, idle %, the streams counted",
      .advice = "The GPU waits while the host does other work between launches, not while it launches: find the CPU "
                "work that covers the gaps (the CPU lanes of the timeline, the operators by self time: CPU-side "
                "optimizer steps, data preparation, Python, logging) and overlap it with GPU work or move it off the "
                "critical path. CUDA graphs would not help here.",
      .scale = NULL },
    { .id = "memory-fragmentation",
      .severity = "info",
      .check = step_rules,
      .condition =
          "reserved memory is over {FRAGMENTATION_RATIO} the allocated memory and over {FRAGMENTATION_BYTES} more",
      .preconditions = "peak allocated and peak reserved known",
      .evidence = "peak reserved and allocated",
      .advice = "The caching allocator keeps blocks reserved that no tensor uses; when they are fragmented it cannot "
                "reuse them for larger tensors: try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
      .scale = NULL },
    { .id = "step-time-variance",
      .severity = "info",
      .check = step_rules,
      .condition = "(max - min) / median of the comparable step times is over {STEP_SPREAD}, and still is without "
                   "the step farthest from the median (one slow step is not variance)",
      .preconditions = "at least {MIN_STEPS} comparable steps on the rank (the last ProfilerStep of a trace left out; "
                       "the first and the last comparable step too where {MIN_STEPS} remain without them: a "
                       "program's first step starts up, a recorder starts and stops at the edges)",
      .evidence = "min, median, max",
      .advice = "Look for periodic work (checkpointing, logging, garbage collection) or input-dependent shapes.",
      .scale = NULL },
    { .id = "rank-imbalance",
      .severity = "warning",
      .check = step_rules,
      .condition = "a rank's mean step time is over {IMBALANCE} the mean of all ranks",
      .preconditions = "two or more ranks with at least {MIN_STEPS} steps each; the per-step straggler analysis could "
                       "not compare steps (reports with loop summaries only), since where it can it decides",
      .evidence = "max, mean and min step time with their ranks",
      .advice = "Balance the work across ranks (data sharding, pipeline stage sizes).",
      .scale = NULL },
    { .id = "data-loading",
      .severity = "warning",
      .check = data_loading,
      .condition = "data loading takes over {DATA_LOADING_PCT} of the step time (without steps: of the profiled time)",
      .preconditions = "steps or a profiled span; a data-loading section or operator (DataLoader, data_load)",
      .evidence = "its time over the steps or the span",
      .advice = "Use more DataLoader workers, pinned memory and prefetching so the next batch is ready.",
      .scale = NULL },
    { .id = "dominant-stage",
      .severity = "info",
      .check = dominant_stage,
      .condition = "a section's self time is over {STAGE_SHARE} of a rank's time",
      .preconditions = "sections present (user annotations, a report's stages); self time where the input nests, so a "
                       "parent is not blamed for its children; without self time, sections that do not run inside one "
                       "another (their totals fit in the rank's time)",
      .evidence = "the section's self (and inclusive) time and share",
      .advice = "Optimize this stage first: it bounds what any other optimization can gain.",
      .scale = NULL },
    { .id = "session-drift",
      .severity = "warning",
      .check = drift_rule,
      .condition = "a stage's time per call (or the median step) in the last session differs from the first by over "
                   "{TL_DRIFT_PCT} (median over the ranks)",
      .preconditions = "a rank with two or more sessions (drift.h)",
      .evidence = "the stage's time per call (the median step) and its calls in the first and last session, its trend",
      .advice = "Sessions of one run should cost the same: look for what changed between them (data, caches, memory "
                "growth, thermal state), and confirm with tally compare --sessions.",
      .scale = NULL },
    { .id = "low-sampled-utilization",
      .severity = "warning",
      .check = sampled_utilization,
      .condition = "the GPU utilization a monitor sampled averages under {LOW_SAMPLED_UTIL_PCT} (NVML's utilization: "
                   "the share of each sample period in which any kernel ran; not the trace's kernel time)",
      .preconditions = "at least {MIN_UTIL_SAMPLES} utilization samples on the rank (libtally's NVML sampler, "
                       "Inferix's GPU monitor, which reports the busiest of the GPUs it watches)",
      .evidence = "the mean and highest sampled utilization, the samples, the rank's GPUs",
      .advice = "The GPU sits without a kernel for half of the time: find what it waits for (the host, data loading, "
                "communication) by profiling a few steps with torch.profiler; sampled utilization counts any kernel as "
                "busy, so a high figure does not prove the GPU is used well.",
      .scale = NULL },
    { .id = "thermal",
      .severity = "warning",
      .check = thermal,
      .condition = "a GPU's peak sampled temperature is over {TL_HOT_C} C, or NVML reports a thermal slowdown",
      .preconditions = "GPU temperature samples (libtally's NVML sampler; Inferix's monitor reports the hottest GPU it "
                       "watches), or NVML's clocks event reasons",
      .evidence =
          "the peak temperature, the samples and time above {TL_HOT_C} C, NVML's thermal slowdowns, the GPU and rank",
      .advice = "A GPU this hot lowers its clocks to cool down (thermal throttling): check its cooling (airflow, fans, "
                "a blocked inlet, hot neighbours in the chassis) and compare its step time with the other GPUs'.",
      .scale =
          "critical: NVML reports a thermal slowdown in over {THERMAL_SLOWDOWN_CRIT} of the samples, or above "
          "{TL_HOT_C} C in over half of them with a peak of {HOT_CRIT_C} C or more; warning: a peak over {HOT_WARN_C} "
          "C, above {TL_HOT_C} C in over {HOT_SHARE_WARN} of the samples, or any thermal slowdown; else info" },
    { .id = "power-at-cap",
      .severity = "info",
      .check = power_at_cap,
      .condition = "a GPU's sampled power is at {TL_POWER_CAP_SHARE} of its power limit or above in over half of its "
                   "samples, or NVML reports the power cap (or power brake) in over half of them",
      .preconditions = "power samples with the device's power limit (libtally records NVML's enforced limit; Inferix "
                       "reports and traces do not record it), or NVML's clocks event reasons",
      .evidence =
          "the share of samples at the cap, the limit, the highest sample, NVML's power-cap reasons, the GPU and rank",
      .advice = "The GPU runs at its power limit and lowers its clocks to stay under it: expected of a compute-bound "
                "job on a busy GPU. If the limit is below the board's default (nvidia-smi -q -d POWER), raising it "
                "buys speed; otherwise speed has to come from less work per step (lower precision, fused kernels).",
      .scale = NULL },
    { .id = "clocks-below-base",
      .severity = "warning",
      .check = clocks_below_base,
      .condition = "a busy GPU's SM clock is below its base clock in over {SLOW_CLOCK_SHARE} of its busy samples "
                   "(utilization 50% or more)",
      .preconditions = "at least {SLOW_CLOCK_MIN_SAMPLES} busy samples with NVML's SM clock and base clock (libtally's "
                       "sampler records both; Inferix reports and traces do not)",
      .evidence = "the share of busy samples below the base clock, the lowest clock against the base, NVML's power or "
                  "thermal reasons in those samples, the GPU and rank",
      .advice = "A busy GPU should run at its base clock or above: below it the GPU slows itself down (a power cap or "
                "brake, heat, or a clock locked low by nvidia-smi -lgc or application clocks). Check nvidia-smi -q -d "
                "PERFORMANCE,CLOCK,POWER on that node; a slow GPU makes its rank the straggler of every collective.",
      .scale = NULL },
    { .id = "memory-growth",
      .severity = "warning",
      .check = memory_growth,
      .condition = "a memory reading taken again and again at one point of the work rises (no drop over "
                   "{TL_GROWTH_NOISE}) and ends over {GROWTH_PCT} and over {GROWTH_BYTES} above its first value, "
                   "no more than {GROWTH_BURST} of the rise made within three consecutive repetitions (a "
                   "one-time allocation, such as a warm-up that outlasts the first quarter of the samples, is not a "
                   "leak; a leak adds a little every time)",
      .preconditions =
          "a repeated reading of the program's own memory: a snapshot label taken {TL_GROWTH_MIN_REPEATS} or more "
          "times (digits in labels ignored), the lowest allocator reading of each of {TL_GROWTH_MIN_REPEATS} or more "
          "ProfilerSteps, or {TL_GROWTH_MIN_SAMPLES} or more monitor samples (the process's own GPU memory by NVML's "
          "per-process accounting, process RSS: the eighths after their first quarter, so model loading does not "
          "count); device-wide used memory is every process's on the GPU and never supports the finding alone",
      .evidence =
          "the reading, the repetitions, its first, last and highest value, the growth and the time it took, the rank",
      .advice = "Memory that is higher every time the program comes back to the same point is leak-like: look for "
                "references kept across steps (tensors appended to a list, a loss kept with its graph instead of "
                "loss.item(), caches without a bound); torch.cuda.memory_snapshot() or tracemalloc show what holds it.",
      .scale = NULL },
    { .id = "low-fps",
      .severity = "info",
      .check = diffusion_rules,
      .condition = "the blocks generate under {LOW_FPS} frames per second of block computation (frames / block time)",
      .preconditions = "block records with their sizes (Inferix's block_analysis)",
      .evidence = "FPS, frames, blocks, block time, blocks per second",
      .advice = "Generation is slower than real-time playback: for streaming or interactive use, fewer denoising steps "
                "per block, a smaller model or resolution, or blocks spread over more GPUs; for offline generation it "
                "only sets the wait.",
      .scale = NULL },
    { .id = "first-block-delay",
      .severity = "info",
      .check = diffusion_rules,
      .condition = "the first block takes over {FIRST_BLOCK_RATIO} the median of the later blocks, and over "
                   "{FIRST_BLOCK_EXTRA_NS} more",
      .preconditions = "at least 3 block records (Inferix's block_analysis): the first and two later ones",
      .evidence = "the first block's time, the later blocks' median, the excess",
      .advice = "The first block pays for warm-up (CUDA context, kernel compilation or autotuning, cache allocation): "
                "for latency-sensitive generation, warm up before the first request (a dummy block, ahead-of-time "
                "compilation) or keep the pipeline resident between requests.",
      .scale = NULL },
    { .id = "dominant-layer",
      .severity = "info",
      .check = diffusion_rules,
      .condition = "a layer takes over {LAYER_SHARE} of the time of all timed layers",
      .preconditions = "timings of at least 2 layers (Inferix's computation_analysis.layer_performance)",
      .evidence = "the layer, its time, the layers' time and its share",
      .advice = "This layer bounds what optimizing the others can gain: look at its kernels first (attention "
                "implementation, precision, fusion).",
      .scale = NULL },
    { .id = "reserved-memory-jumps",
      .severity = "info",
      .check = reserved_jumps,
      .condition = "between consecutive memory readings of one device, reserved memory grows by {JUMP_MIN_BYTES} and "
                   "{JUMP_MIN_FRAC} or more while the highest allocated memory so far rises by under a quarter of that "
                   "growth; twice or more, adding up to {JUMP_TOTAL_BYTES}",
      .preconditions =
          "{JUMP_MIN_READINGS} or more readings of one device with both allocated and reserved memory: memory "
          "snapshots (FramePack, libtally's cuda.allocated and cuda.reserved providers) or a trace's [memory] events "
          "(the series' maxima); a snapshot's peak allocated counts where the report has it",
      .evidence = "the jumps, the largest with its readings (label or time), the allocated memory then, the reserved "
                  "growth added up, the rank",
      .advice = "The caching allocator reserved new segments although the tensors did not grow: its free cached blocks "
                "did not fit the requests (fragmentation; allocations of changing sizes). Try "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, allocate the largest buffers first, or keep shapes "
                "fixed (padding, bucketing); torch.cuda.memory_snapshot() shows the segments.",
      .scale = NULL },
    { .id = "eager-attention",
      .severity = "info",
      .check = eager_attention,
      .condition = "a trace runs attention on the math path: aten::_scaled_dot_product_attention_math, or softmax over "
                   "square L x L scores (L {EAGER_MIN_SEQ} or more) beside batched matrix products without any fused "
                   "attention operator or kernel, in fp16 or bf16, for {EAGER_MIN_SHARE} of a rank's time or more",
      .preconditions =
          "the device known as an NVIDIA GPU with a fused attention kernel for the dtype (compute capability 8.0 or "
          "more: A100, A10, L4, L40, H100, H200, B200, GeForce RTX 30-50 ...) and the operators' dtypes recorded "
          "(record_shapes): on another or an unknown device, or without dtypes, nothing is said",
      .evidence = "the operator, its calls, shape and dtype, its time and share of the rank's time, the device",
      .advice = "PyTorch computed attention unfused (Q K^T, softmax, then V: the L x L scores written to memory) "
                "although a fused kernel (FlashAttention, memory-efficient attention) exists for this GPU and dtype. "
                "Call torch.nn.functional.scaled_dot_product_attention instead of a hand-written softmax(Q K^T) V; if "
                "it is already called, find what keeps it on the math path (an explicit attn_mask of another dtype, "
                "dropout with the flash kernel unavailable, a head dimension over 256, a disabled backend: "
                "torch.nn.attention.sdpa_kernel).",
      .scale = NULL },
};

#define NRULES (sizeof rules / sizeof rules[0])

const tl_rule_info *tl_rules(size_t *n)
{
    *n = NRULES;
    return rules;
}

static const tl_rule_info *rule(const char *id)
{
    for (size_t i = 0; i < NRULES; i++)
        if (strcmp(rules[i].id, id) == 0)
            return &rules[i];
    return &rules[0];
}

static void vskip(tl_aggregate *a, const char *id, int absent, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void vskip(tl_aggregate *a, const char *id, int absent, const char *fmt, va_list ap)
{
    if (a->nskips == TL_MAX_RECOMMENDATIONS)
        return;
    a->skips[a->nskips].id = rule(id)->id;
    a->skips[a->nskips].absent = absent;
    a->skips[a->nskips++].why = tl_vformat(fmt, ap);
}

/* A rule that does not apply to this data, and why. */
static void skip(tl_aggregate *a, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void skip(tl_aggregate *a, const char *id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vskip(a, id, 0, fmt, ap);
    va_end(ap);
}

char *tl_rule_skip_absent_list(const tl_aggregate *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return NULL;
    int n = 0;
    for (int i = 0; i < a->nskips; i++)
        if (a->skips[i].absent)
            fprintf(m, "%s%s", n++ ? ", " : "", a->skips[i].id);
    fputs(" (the inputs carry no such data; the aggregate JSON and the HTML report say what each needs)", m);
    return fclose(m) == 0 ? buf : (free(buf), NULL);
}

/* The same when the inputs carry no data of the kind the rule reads at all. */
static void skip_absent(tl_aggregate *a, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void skip_absent(tl_aggregate *a, const char *id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vskip(a, id, 1, fmt, ap);
    va_end(ap);
}

static void fire_full(tl_aggregate *a, const char *id, const char *severity, const char *advice, int rank,
                      const char *finding, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void fire_full(tl_aggregate *a, const char *id, const char *severity, const char *advice, int rank,
                      const char *finding, const char *fmt, ...)
{
    if (a->nrecs == TL_MAX_RECOMMENDATIONS)
        return;
    const tl_rule_info *r = rule(id);
    tl_recommendation *rec = &a->recs[a->nrecs++];
    memset(rec, 0, sizeof *rec);
    va_list ap;
    va_start(ap, fmt);
    rec->evidence = tl_vformat(fmt, ap);
    va_end(ap);
    rec->id = r->id;
    rec->severity = severity ? severity : r->severity;
    rec->advice = advice ? advice : r->advice;
    rec->rank = rank;
    rec->finding = strdup(finding);
    rec->message = tl_format("%s %s", finding, rec->advice);
}

#define fire(a, id, rank, finding, ...) fire_full(a, id, NULL, NULL, rank, finding, __VA_ARGS__)

/* The finding of a rule that fired, or NULL. */
static const tl_recommendation *find_rec(const tl_aggregate *a, const char *id)
{
    for (int i = 0; i < a->nrecs; i++)
        if (strcmp(a->recs[i].id, id) == 0)
            return &a->recs[i];
    return NULL;
}

/* ---- what the data has ------------------------------------------------------------ */

static int any_gpu(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].gpu.present)
            return 1;
    return 0;
}

static uint64_t rank_graph_launches(const tl_aggregate *a, const tl_rank_result *r)
{
    uint64_t n = 0;
    for (size_t k = 0; k < r->nsessions; k++)
        n += a->sessions[r->sessions[k]].graph_launches;
    return n;
}

/* Training leaves backward operators (autograd's nodes, its engine, a
 * backward section or kernel); an inference server does not. Python frames
 * do not count: vLLM's capture has a frame named save_for_backward. */
static int has_backward(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->names.n; i++) {
        const tl_name_row *row = &a->names.rows[i];
        const char *n = row->name;
        if (row->group == TL_GROUP_PYTHON || strstr(n, "save_for_backward"))
            continue;
        if (strstr(n, "Backward") || strstr(n, "autograd::engine") || strcasestr(n, "backward"))
            return 1;
    }
    return 0;
}

/* Graph captures without a replay: the trace recorded kernels while capturing
 * a graph, and those did not run there (a capture-only trace). */
static int capture_only(const tl_aggregate *a)
{
    uint64_t captures = 0, launches = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        if (tl_session_counts(&a->sessions[i])) {
            captures += a->sessions[i].graph_captures;
            launches += a->sessions[i].graph_launches;
        }
    return captures > 0 && launches == 0;
}

static size_t comparable_steps(const tl_rank_result *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->nsteps; k++)
        n += !r->steps[k].partial;
    return n;
}

/* ---- dominant stage --------------------------------------------------------------- */

static double self_or_total(const tl_name_row *row, size_t ri)
{
    return row->rank_self && row->rank_self[ri] >= 0 ? row->rank_self[ri] : row->rank_total[ri];
}

/* A share of the host-wait gap time (length-weighted; session.h): NaN unknown. */
static double host_gap_share(const tl_rank_result *r, int64_t part)
{
    return r->gpu.host_gap_ns > 0 && part >= 0 ? (double)part / (double)r->gpu.host_gap_ns : NAN;
}

static void dominant_stage(tl_aggregate *a)
{
    const tl_name_table *t = &a->names;
    double best = 0;
    const tl_name_row *brow = NULL;
    int brank = -1, any = 0, unknown_nesting = 0, judged = 0;
    double overlap_pct = 0;
    size_t bri = 0;
    double *whole_of = calloc(a->nranks + 1, sizeof *whole_of); /* each judged rank's time; 0 not judged */
    unsigned char *of_sections = calloc(a->nranks + 1, 1);      /* ... that time the sum of its sections */
    if (whole_of == NULL || of_sections == NULL) {
        free(whole_of);
        free(of_sections);
        return;
    }
    for (size_t ri = 0; ri < a->nranks; ri++) {
        const tl_rank_result *r = &a->ranks[ri];
        /* The rank's time: its wall span, else the sum of its sections (a
         * report's span can be shorter than its sections: FramePack's span is
         * its snapshots'). */
        double whole = r->span_ns > 0 ? (double)r->span_ns : 0, sections = 0, largest = 0, totals = 0;
        int self_known = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->rows[i].group == TL_GROUP_SECTIONS && t->rows[i].rank_count[ri] > 0) {
                any = 1;
                sections += self_or_total(&t->rows[i], ri);
                totals += t->rows[i].rank_total[ri];
                self_known |= t->rows[i].rank_self && t->rows[i].rank_self[ri] >= 0;
                if (t->rows[i].rank_total[ri] > largest)
                    largest = t->rows[i].rank_total[ri];
            }
        if (whole < largest) {
            whole = sections;
            of_sections[ri] = 1;
        }
        if (whole <= 0)
            continue;
        /* Sections whose totals add up to more than the rank's time run
         * inside one another; without self time nothing says which is the
         * parent, and a parent's share would be its children's: no finding. */
        if (!self_known && totals > whole * 1.01) {
            unknown_nesting = 1;
            if (100 * totals / whole > overlap_pct)
                overlap_pct = 100 * totals / whole;
            continue;
        }
        judged = 1;
        whole_of[ri] = whole;
        for (size_t i = 0; i < t->n; i++) {
            const tl_name_row *row = &t->rows[i];
            /* a collective's range is mostly waiting for the other ranks: never
             * the stage for the waiting rank to optimize (Waits says for whom) */
            if (row->group != TL_GROUP_SECTIONS || row->rank_count[ri] == 0 ||
                tl_coll_side_of_name(row->name, strlen(row->name)) >= 0)
                continue;
            double share = 100 * self_or_total(row, ri) / whole;
            /* A section that covers the whole run (a "main" wrapper) says nothing. */
            if (share > best && share < 99.0) {
                best = share;
                brow = row;
                brank = r->rank;
                bri = ri;
            }
        }
    }
    if (!any) {
        skip_absent(a, "dominant-stage", "no sections in the inputs");
        free(whole_of);
        free(of_sections);
        return;
    }
    if (!judged && unknown_nesting) {
        /* "the input does not say" was wrong on HTA's MTIA trace: its
         * annotations nest, but 32,825 of its events arrive beyond the
         * reorder window, and self time is then not given */
        skip(a, "dominant-stage",
             "the sections run inside one another (their totals add up to %s of the time) and "
             "which runs inside which is not known (a report gives no nesting; a trace whose events arrive too far "
             "out of time order has it, but tally could not restore it)",
             TL_PCT_WHOLE(overlap_pct));
        free(whole_of);
        free(of_sections);
        return;
    }
    if (brow != NULL && best > STAGE_SHARE) {
        int has_self = brow->rank_self && brow->rank_self[bri] >= 0;
        /* on how many ranks, and the typical one: DLRM's DDP.forward is 40 %
         * of rank 1's time with a 6.6 ms sync inside it, 11-16 % on the ranks
         * that do not wait; the worst rank alone read as the job's stage */
        size_t over = 0, with = 0;
        double *shares = malloc((a->nranks + 1) * sizeof *shares);
        for (size_t ri = 0; shares != NULL && ri < a->nranks; ri++)
            if (whole_of[ri] > 0 && brow->rank_count[ri] > 0) {
                shares[with] = 100 * self_or_total(brow, ri) / whole_of[ri];
                over += shares[with] > STAGE_SHARE;
                with++;
            }
        double median = shares != NULL && with > 0 ? tl_median_sort(shares, with) : NAN;
        free(shares);
        char ranks[240] = "";
        if (with > 1)
            snprintf(ranks, sizeof ranks, "; over %s on %zu of the %zu ranks it runs on, their median %s",
                     TL_PCT_WHOLE(STAGE_SHARE), over, with, TL_PCT(median));
        char msg[900];
        /* a report without a wall time (FramePack's): a share of what it timed */
        const char *of = of_sections[bri] ? "timed sections" : "time";
        /* a name on several threads adds them up: said, or 93 % of a rank's
         * time reads as wall-clock time (gloo's all-reduce on two threads:
         * 93.4 % against 76.3 % of the wall clock) */
        int threads = 0;
        const tl_rank_result *br = &a->ranks[bri];
        for (size_t k = 0; k < br->nsessions; k++) {
            tl_session *ss = &a->sessions[br->sessions[k]];
            tl_spill_hold(ss); /* names: the bulk (spill.h) */
            for (size_t j = 0; j < ss->nnames; j++)
                if (ss->names[j].group == brow->group && ss->names[j].threads > threads &&
                    strcmp(ss->names[j].name, brow->name) == 0)
                    threads = ss->names[j].threads;
            tl_spill_drop(ss);
        }
        char summed[48] = "";
        if (threads > 1)
            snprintf(summed, sizeof summed, ", summed over its %d threads", threads);
        int mlen = snprintf(msg, sizeof msg, "\"%.200s\" takes %s of rank %d's %s%s%s%s.", brow->name, TL_PCT(best),
                            brank, of, has_self ? " outside the sections inside it (self time)" : "", summed,
                            with > 1 && 2 * over <= with ? ranks : "");
        /* a stage that waits for a collective on another thread (DDP's
         * backward waits for gloo's all-reduce) holds that waiting too */
        double waited = tl_waits_waited_pct(a, bri);
        if (isfinite(waited) && waited >= 10 && mlen > 0 && (size_t)mlen < sizeof msg)
            snprintf(msg + mlen, sizeof msg - (size_t)mlen,
                     " Rank %d also waits %s of its step in collectives for "
                     "other ranks, which may be inside this stage (Waits).",
                     brank, TL_PCT(waited));
        /* the stage that dominates is data loading: the data-loading finding
         * says it (with steps, or over the profiled span without them) --
         * twice the same 8204.993 ms on PARAM's trace said nothing more;
         * where that rule could not look, this one does, with its advice */
        int loading = tl_is_data_loading(brow->name);
        if (loading && find_rec(a, "data-loading") != NULL) {
            skip(a, "dominant-stage",
                 "its largest section, \"%.120s\" (%s of rank %d's time), is data loading, "
                 "which the data-loading finding names",
                 brow->name, TL_PCT(best), brank);
            free(whole_of);
            free(of_sections);
            return;
        }
        fire_full(a, "dominant-stage", NULL, loading ? rule("data-loading")->advice : NULL, brank, msg,
                  "%s: %s %s (inclusive %s), %s of rank %d's %s%s; threshold %s%s%s", brow->name,
                  has_self ? "self" : "total", TL_DUR(self_or_total(brow, bri)), TL_DUR(brow->rank_total[bri]),
                  TL_PCT(best), brank, of, of_sections[bri] ? " (the report has no wall time as long as them)" : "",
                  TL_PCT_WHOLE(STAGE_SHARE), ranks, loading ? "; it is data loading" : "");
    }
    free(whole_of);
    free(of_sections);
}

/* ---- per-rank rules ----------------------------------------------------------------- */

static double peak_memory_pct(const tl_rank_result *r)
{
    return tl_rank_peak_device_pct(r);
}

/* GPU events enough for a share of the kernel time to mean something. */
static int gpu_enough(const tl_rank_result *r)
{
    return r->gpu.present && r->gpu.kernel_time >= MIN_KERNEL_NS && r->gpu.events >= MIN_GPU_EVENTS;
}

static int any_gpu_enough(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (gpu_enough(&a->ranks[i]))
            return 1;
    return 0;
}

/* Why the kernel-time rules do not apply. */
static const char *gpu_unmet(const tl_aggregate *a)
{
    return any_gpu(a) ? "under 1 ms of kernel time or under 5 GPU events on every rank: too little GPU work for a "
                        "share of it to mean anything"
                      : "no GPU events in the inputs";
}

static double busy_pct(const tl_rank_result *r)
{
    return gpu_enough(r) ? tl_pct(r->gpu.busy, r->gpu.kernel_time) : NAN;
}

static double comm_pct(const tl_rank_result *r)
{
    return r->gpu.present && r->gpu.comm > 0 ? tl_pct(r->gpu.comm, r->gpu.kernel_time) : NAN;
}

/* Communication not overlapping compute, over the kernel time: what it costs.
 * HTA's trace_diff test rank: communication 33.8 % of the kernel time, 71 %
 * of it under compute, 9.8 % exposed -- "overlap communication with compute"
 * would be advice it already follows. */
static double exposed_comm_pct(const tl_rank_result *r)
{
    return r->gpu.present && r->gpu.comm > 0 ? tl_pct(r->gpu.comm - r->gpu.comm_compute, r->gpu.kernel_time) : NAN;
}

static double overlap_pct(const tl_rank_result *r)
{
    if (!r->gpu.present || r->gpu.comm <= 0 || comm_pct(r) <= OVERLAP_MIN_COMM)
        return NAN;
    return tl_pct(r->gpu.comm_compute, r->gpu.comm);
}

static double idle_pct(const tl_rank_result *r)
{
    return r->gpu.present ? tl_pct(r->gpu.idle, r->gpu.kernel_time) : NAN;
}

/* The host's share of the idle gaps of the streams that carry real work:
 * at least REAL_WORK_PCT of the GPU's busy time, and not mostly collectives
 * (a collectives' stream idles between collectives while the compute stream
 * works: not a wait for the host). The host's part of a host_wait gap is the
 * time up to the launch; after it the kernel waited on the GPU side (another
 * stream, an event: on HTA's trace_filter 67 of 214 ms of rank 0's
 * host_wait). Older partials lack some of it (host_part, comm_busy -1; no
 * host_gaps: 0 with host_wait): then all of host_wait, every stream, no
 * minimum of gaps, and the evidence says only what is known. */
typedef struct host_share {
    double pct; /* NaN when no stream counts */
    int streams;
    int64_t host_ns, wait_ns; /* the host's part; HTA's host_wait of the same streams */
    uint64_t gaps;            /* host-wait gaps */
    int part_known, comm_known, gaps_known;
} host_share;

static host_share host_wait_share(const tl_rank_result *r)
{
    host_share h = { NAN, 0, 0, 0, 0, 1, 1, 1 };
    int64_t gaps = 0, busy = 0;
    for (size_t s = 0; s < r->gpu.nstreams; s++)
        busy = tl_ns_add(busy, r->gpu.streams[s].busy);
    for (size_t s = 0; s < r->gpu.nstreams; s++) {
        const tl_stream_idle *st = &r->gpu.streams[s];
        if (busy <= 0 || 100.0 * (double)st->busy / (double)busy < REAL_WORK_PCT)
            continue;
        h.comm_known &= st->comm_busy >= 0;
        if (st->comm_busy >= 0 && 2 * st->comm_busy > st->busy)
            continue;
        h.streams++;
        h.part_known &= st->host_part >= 0;
        h.gaps_known &= !(st->host_gaps == 0 && st->host_wait > 0);
        h.host_ns = tl_ns_add(h.host_ns, st->host_part >= 0 ? st->host_part : st->host_wait);
        h.wait_ns = tl_ns_add(h.wait_ns, st->host_wait);
        h.gaps += st->host_gaps;
        gaps = tl_ns_add(gaps, tl_ns_add(st->host_wait, tl_ns_add(st->kernel_wait, st->other)));
    }
    h.pct = gaps > 0 ? tl_pct(h.host_ns, gaps) : NAN;
    return h;
}

static double blocked_share(const tl_rank_result *r)
{
    return r->gpu.present && r->gpu.idle > 0 ? tl_pct(r->gpu.blocked_idle, r->gpu.idle) : NAN;
}

/* The worst rank of a metric among those it applies to. */
typedef struct worst_rank {
    const tl_rank_result *r;
    double v;
    int hits, with;
} worst_rank;

static worst_rank worst_of(const tl_aggregate *a, double (*metric)(const tl_rank_result *), double threshold, int below)
{
    worst_rank w = { NULL, 0, 0, 0 };
    for (size_t i = 0; i < a->nranks; i++) {
        double v = metric(&a->ranks[i]);
        if (!isfinite(v))
            continue;
        w.with++;
        if (below ? v < threshold : v > threshold) {
            w.hits++;
            if (w.r == NULL || (below ? v < w.v : v > w.v)) {
                w.r = &a->ranks[i];
                w.v = v;
            }
        }
    }
    return w;
}

static void gpu_evidence(char *buf, size_t n, const tl_rank_result *r)
{
    const tl_gpu_breakdown *g = &r->gpu;
    if (g->present)
        snprintf(buf, n, "; rank %d: kernel time %s, idle %s, compute %s, communication %s", r->rank,
                 TL_DUR(g->kernel_time), TL_PCT(tl_pct(g->idle, g->kernel_time)),
                 TL_PCT(tl_pct(g->compute, g->kernel_time)), TL_DUR(g->comm));
    else
        buf[0] = '\0';
}

static void simple_rule(tl_aggregate *a, const char *id, double (*metric)(const tl_rank_result *), double threshold,
                        int below, const char *before, const char *after, const char *unmet)
{
    worst_rank w = worst_of(a, metric, threshold, below);
    if (w.with == 0) {
        /* the three simple rules read the GPU events */
        (any_gpu(a) ? skip : skip_absent)(a, id, "%s", unmet);
        return;
    }
    if (w.r == NULL)
        return;
    char msg[400], g[320];
    snprintf(msg, sizeof msg, "On rank %d, %s%s%s.", w.r->rank, before, TL_PCT(w.v), after);
    gpu_evidence(g, sizeof g, w.r);
    fire(a, id, w.r->rank, msg, "rank %d: %s%s%s; %s the threshold of %s on %d of the %d ranks it applies to%s",
         w.r->rank, before, TL_PCT(w.v), after, below ? "below" : "above", TL_PCT_WHOLE(threshold), w.hits, w.with, g);
}

static void memory_rule(tl_aggregate *a)
{
    worst_rank w = worst_of(a, peak_memory_pct, MEMORY_PEAK_PCT, 0);
    if (w.with == 0) {
        skip_absent(a, "memory-near-capacity", "no device capacity or no peak memory in the inputs");
        return;
    }
    if (w.r == NULL)
        return;
    const tl_rank_result *r = w.r;
    int reserved_high = isfinite(r->peak_reserved) && isfinite(r->peak_allocated) &&
                        r->peak_reserved > FRAGMENTATION_RATIO * r->peak_allocated;
    const char *advice;
    if (!has_backward(a))
        advice = reserved_high
                     ? "No backward pass in the trace (inference): most of this is memory the allocator reserved, not "
                       "tensors in use; if it is a deliberate reservation (an inference server's KV cache), nothing is "
                       "wrong; otherwise lower the reservation (e.g. gpu_memory_utilization) or the batch size."
                     : "No backward pass in the trace (inference): lower the batch size or sequence length, or free "
                       "caches between requests, if it must fit alongside something else.";
    else
        advice = reserved_high ? "Most of the peak is reserved, not allocated: the caching allocator keeps blocks no "
                                 "tensor uses, and fragmented ones it cannot reuse for larger tensors (try "
                                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)."
                               : rule("memory-near-capacity")->advice;
    char msg[300], peaks[300];
    snprintf(msg, sizeof msg, "On rank %d, peak device memory at %s of the device.", r->rank, TL_PCT(w.v));
    /* the peaks the input gives, each named (an Inferix report has the
     * device's used memory only: no "nan" and no false 0) */
    const double peak[3] = { r->peak_allocated, r->peak_reserved, r->peak_device_used };
    static const char *const peak_name[3] = { "allocated", "reserved", "used on the device" };
    size_t len = 0;
    for (int k = 0; k < 3 && len < sizeof peaks; k++)
        if (isfinite(peak[k]))
            len += (size_t)snprintf(peaks + len, sizeof peaks - len, "%speak %s %s", len ? ", " : "", peak_name[k],
                                    TL_BYTES(peak[k]));
    fire_full(a, "memory-near-capacity", NULL, advice, r->rank, msg,
              "rank %d: %s, of a device of %s (%s); above the threshold of %s on %d of the %d ranks it "
              "applies to",
              r->rank, peaks, TL_BYTES(r->device_total), TL_PCT(w.v), TL_PCT_WHOLE(MEMORY_PEAK_PCT), w.hits, w.with);
}

/* Launch-bound, host-bound (the same wait, in long gaps: host work between
 * launches) and their alternative explanation, blocking host calls. */
static void host_rules(tl_aggregate *a)
{
    if (capture_only(a)) {
        static const char *ids[] = { "blocking-host-call", "launch-bound", "host-bound" };
        for (int k = 0; k < 3; k++)
            skip(a, ids[k],
                 "the trace captures CUDA/HIP graphs and replays none: the GPU's gaps between captured "
                 "kernels are not waits");
        return;
    }
    if (!any_gpu_enough(a)) {
        (any_gpu(a) ? skip : skip_absent)(a, "blocking-host-call", "%s", gpu_unmet(a));
        (any_gpu(a) ? skip : skip_absent)(a, "launch-bound", "%s", gpu_unmet(a));
        (any_gpu(a) ? skip : skip_absent)(a, "host-bound", "%s", gpu_unmet(a));
        return;
    }
    const tl_rank_result *bw = NULL, *lw = NULL;
    double bv = 0, lv = 0;
    int bhits = 0, lhits = 0, idle_ok = 0, streams_ok = 0, any_blocking = 0, few_gaps = 0, in_colls = 0;
    const tl_rank_result *cw = NULL; /* a rank whose host waits in collectives in its GPU's gaps */
    host_share lh = { NAN, 0, 0, 0, 0, 1, 1, 1 };
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (!gpu_enough(r))
            continue;
        double idle = idle_pct(r), blocked = blocked_share(r);
        any_blocking |= r->gpu.blocked_idle > 0;
        if (idle > BLOCKED_IDLE && blocked > BLOCKED_SHARE) {
            bhits++;
            if (bw == NULL || blocked > bv) {
                bw = r;
                bv = blocked;
            }
            continue; /* the idle time has its cause */
        }
        if (!(idle >= LAUNCH_BOUND_IDLE))
            continue;
        idle_ok = 1;
        host_share h = host_wait_share(r);
        if (!isfinite(h.pct))
            continue;
        streams_ok = 1;
        if (h.pct > LAUNCH_BOUND_SHARE && h.gaps_known && h.gaps < HOST_MIN_GAPS)
            few_gaps = 1;
        else if (h.pct > LAUNCH_BOUND_SHARE && host_gap_share(r, r->gpu.host_coll_ns) >= 0.5) {
            /* the host sat in a collective, waiting for another rank: that
             * time is the rank waited for's (the Waits section) */
            in_colls++;
            if (cw == NULL)
                cw = r;
        } else if (h.pct > LAUNCH_BOUND_SHARE) {
            lhits++;
            if (lw == NULL || h.pct > lv) {
                lw = r;
                lv = h.pct;
                lh = h;
            }
        }
    }
    if (bw != NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "On rank %d, the host sits in %s during %s of the GPU idle time.", bw->rank,
                 bw->gpu.blocking_call, TL_PCT(tl_pct(bw->gpu.blocking_call_ns, bw->gpu.idle)));
        /* An asynchronous copy that blocks copies to or from pageable memory:
         * "use the async variant" is what the program already does. */
        const char *advice =
            strstr(bw->gpu.blocking_call, "Async") != NULL
                ? "An asynchronous copy blocks the host when its host memory is pageable (the GPU side shows Memcpy "
                  "... Pageable): copy into pinned memory (tensor.to(device, non_blocking=True) from or into a "
                  "pin_memory() buffer, DataLoader(pin_memory=True)), or move the copy (.item(), .cpu(), .tolist()) "
                  "off "
                  "the step's critical path."
                : NULL;
        fire_full(a, "blocking-host-call", NULL, advice, bw->rank, msg,
                  "rank %d: blocking host calls cover %s of %s GPU idle (%s), %s alone %s; idle %s of "
                  "the kernel time; on %d rank%s",
                  bw->rank, TL_DUR(bw->gpu.blocked_idle), TL_DUR(bw->gpu.idle), TL_PCT(bv), bw->gpu.blocking_call,
                  TL_DUR(bw->gpu.blocking_call_ns), TL_PCT(idle_pct(bw)), bhits, bhits == 1 ? "" : "s");
    } else if (!any_blocking) {
        int64_t queued = 0;
        for (size_t i = 0; i < a->nranks; i++)
            queued += a->ranks[i].gpu.queued_idle > 0 ? a->ranks[i].gpu.queued_idle : 0;
        if (queued > 0)
            skip(a, "blocking-host-call",
                 "no blocking host call covers GPU idle time without work queued: %s "
                 "of idle time had a kernel launched before it waiting to start (the GPU was busy outside the trace)",
                 TL_DUR(queued));
        else
            skip(a, "blocking-host-call", "no blocking host call covers GPU idle time");
    }
    if (lw == NULL) {
        for (int k = 0; k < 2; k++) {
            const char *id = k ? "host-bound" : "launch-bound";
            if (!idle_ok && bw == NULL)
                skip(a, id, "the GPU is not mostly idle (idle under %s of the kernel time on every rank)",
                     TL_PCT_WHOLE(LAUNCH_BOUND_IDLE));
            else if (!streams_ok && bw == NULL)
                skip(a, id,
                     "no idle gaps on the streams that carry at least %s of the GPU's busy time (other than "
                     "collectives' streams)",
                     TL_PCT_WHOLE(REAL_WORK_PCT));
            else if (in_colls)
                skip(a, id,
                     "the GPU idles while the host waits in a collective for another rank (on %d rank%s, "
                     "rank %d first: %s of its host-wait gap time): the time belongs to the rank waited for "
                     "(Waits)",
                     in_colls, in_colls == 1 ? "" : "s", cw->rank,
                     TL_PCT(100 * host_gap_share(cw, cw->gpu.host_coll_ns)));
            else if (few_gaps)
                skip(a, id,
                     "the host's part is over %s of the idle gaps only on ranks with fewer than %d "
                     "host-wait gaps: a pause, not a pattern",
                     TL_PCT_WHOLE(LAUNCH_BOUND_SHARE), HOST_MIN_GAPS);
        }
        return;
    }
    uint64_t graphs = rank_graph_launches(a, lw);
    /* Which wait it is: launch overhead leaves many short gaps; long gaps are
     * host work between launches, and with graph replays the launches are
     * batched already. An older partial without the gap count: launch-bound. */
    double mean_gap = lh.gaps > 0 ? (double)lh.host_ns / (double)lh.gaps : NAN;
    /* weighted by length (a mean of many tiny gaps hides the few long ones:
     * 517 gaps of 0.74 ms on average, 89 % of the wait in 16 of 20-34 ms);
     * the mean only for partials that do not know the gaps' lengths */
    double short_share = host_gap_share(lw, lw->gpu.host_short_ns);
    double load_share = host_gap_share(lw, lw->gpu.host_load_ns);
    int host_bound =
        graphs || (isfinite(short_share) ? short_share <= 0.5 : isfinite(mean_gap) && mean_gap > TL_LAUNCH_GAP_NS);
    int loading = host_bound && !graphs && load_share >= 0.5;
    const char *id = host_bound ? "host-bound" : "launch-bound";
    char gapinfo[320] = "", after[120] = "";
    if (lh.part_known)
        snprintf(after, sizeof after, ", of it %s after the launches", TL_DUR((double)(lh.wait_ns - lh.host_ns)));
    if (isfinite(mean_gap))
        snprintf(gapinfo, sizeof gapinfo,
                 " (%" PRIu64 " host-wait gap%s, the host's part averaging %s; HTA's "
                 "host_wait %s%s)",
                 lh.gaps, lh.gaps == 1 ? "" : "s", TL_DUR(mean_gap), TL_DUR(lh.wait_ns), after);
    char weights[320] = "";
    if (isfinite(short_share))
        snprintf(weights, sizeof weights,
                 "; of the host's gap time %s in gaps up to %s (launch overhead), "
                 "%s loading data, %s in collectives",
                 TL_PCT(100 * short_share), TL_DUR_ROUND(TL_LAUNCH_GAP_NS), TL_PCT(100 * load_share),
                 TL_PCT(100 * host_gap_share(lw, lw->gpu.host_coll_ns)));
    const char *advice =
        graphs
            ? "The trace replays CUDA/HIP graphs, so kernel launches are already batched: the gaps are host work "
              "between "
              "replays. Look at what runs between graph launches (Python, graph breaks, input preparation, shapes not "
              "covered by a captured graph that fall back to eager launches)."
            : NULL;
    char msg[500];
    if (loading) {
        snprintf(msg, sizeof msg,
                 "On rank %d, the GPU waits for the host during %s of its idle gaps, and the host "
                 "is loading data during %s of that time.",
                 lw->rank, TL_PCT(lv), TL_PCT(100 * load_share));
        advice = rule("data-loading")->advice;
    } else if (host_bound && !graphs)
        snprintf(msg, sizeof msg,
                 "On rank %d, the GPU waits for host work between launches during %s of its idle "
                 "gaps, %s a gap on average%s.",
                 lw->rank, TL_PCT(lv), TL_DUR(mean_gap), isfinite(short_share) ? "" : "");
    else if (graphs)
        snprintf(msg, sizeof msg,
                 "On rank %d, the GPU waits for the host during %s of its idle gaps, between graph "
                 "replays.",
                 lw->rank, TL_PCT(lv));
    else
        snprintf(msg, sizeof msg,
                 "On rank %d, the GPU waits for the host to launch work during %s of its idle "
                 "gaps.",
                 lw->rank, TL_PCT(lv));
    char g[320];
    gpu_evidence(g, sizeof g, lw);
    skip(a, host_bound ? "launch-bound" : "host-bound",
         host_bound ? "the host-wait gaps are not launch overhead (host-bound says what they are)"
                    : "the host-wait gaps are launch overhead (launch-bound says so)");
    fire_full(a, id, NULL, advice, lw->rank, msg,
              "rank %d: the host's part of host_wait %s of the idle gaps of the %d stream%s carrying at least "
              "%s of the GPU's busy time%s%s%s; threshold %s in %d gaps or more on %d rank%s%s%s",
              lw->rank, TL_PCT(lv), lh.streams, lh.streams == 1 ? "" : "s", TL_PCT_WHOLE(REAL_WORK_PCT),
              lh.comm_known ? ", collectives' streams left out" : "", gapinfo, weights,
              TL_PCT_WHOLE(LAUNCH_BOUND_SHARE), HOST_MIN_GAPS, lhits, lhits == 1 ? "" : "s", g,
              graphs ? "; graph launches in the trace" : "");
}

/* The collectives a rank ran (its sessions'); *names: a hash of the
 * multiset of their kernels' names (FNV-1a of each, summed), so that ranks
 * that ran as many collectives of other kinds (another parallel group) do not
 * count as running the same ones. */
static size_t rank_collectives(const tl_aggregate *a, const tl_rank_result *r, uint64_t *names)
{
    size_t n = 0;
    uint64_t sum = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        n += a->sessions[r->sessions[k]].ncolls;
        sum += a->facts[r->sessions[k]].colls_hash;
    }
    *names = sum;
    return n;
}

/* The rank that spends least in the same collectives as r, when r spends
 * over twice as long: every rank ran as many collectives, and a collective's
 * kernel runs until all its ranks have arrived, so the rest of r's time in
 * them is likely waiting for a rank that arrived later (PARAM's 8 DLRM ranks:
 * the same 8 collectives take 11.3 ms on rank 1 and 1.7 ms on rank 7, which
 * starts its step 7.5 ms after rank 1). NULL otherwise; *ncolls: how
 * many collectives r ran. */
static const tl_rank_result *least_in_collectives(const tl_aggregate *a, const tl_rank_result *r, size_t *ncolls)
{
    uint64_t names, other;
    size_t n = *ncolls = rank_collectives(a, r, &names);
    const tl_rank_result *least = NULL;
    for (size_t i = 0; i < a->nranks && n > 0 && n < TL_MAX_COLLECTIVES; i++) {
        const tl_rank_result *o = &a->ranks[i];
        if (!o->gpu.present || o->gpu.comm <= 0)
            continue;
        if (rank_collectives(a, o, &other) != n || other != names)
            return NULL; /* different collectives: their times say nothing of waiting */
        if (least == NULL || o->gpu.comm < least->gpu.comm)
            least = o;
    }
    return least != NULL && least != r && 2 * least->gpu.comm < r->gpu.comm ? least : NULL;
}

/* Communication-heavy: the exposed share decides; the message gives both. */
/* When the ranks wait in their communication kernels for one rank (waits.h),
 * their communication time is that rank's: neither "reduce or overlap your
 * communication" on a rank that waits. 1 when the rules were skipped. */
static int comm_is_waiting(tl_aggregate *a)
{
    const tl_waits *w = &a->waits;
    if (w->straggler < 0 || w->source != TL_WAITS_GPU)
        return 0;
    static const char *ids[] = { "communication-heavy", "low-overlap" };
    for (int k = 0; k < 2; k++)
        skip(a, ids[k],
             "the ranks' communication time is mostly waiting for rank %d, which arrives last to %llu of "
             "%llu collectives (the straggler finding and Waits say why)",
             w->straggler, (unsigned long long)w->straggler_last, (unsigned long long)w->matched);
    return 1;
}

static void comm_rule(tl_aggregate *a)
{
    worst_rank w = worst_of(a, exposed_comm_pct, COMM_HEAVY_PCT, 0);
    if (w.with == 0) {
        (any_gpu(a) ? skip : skip_absent)(a, "communication-heavy", "%s",
                                          any_gpu(a) ? "no communication kernels (see the kernel-type table; "
                                                       "--kernel-class adds patterns)"
                                                     : "no GPU events in the inputs");
        return;
    }
    if (w.r == NULL)
        return;
    const tl_gpu_breakdown *gb = &w.r->gpu;
    size_t ncolls;
    const tl_rank_result *least = least_in_collectives(a, w.r, &ncolls);
    char msg[700], g[320], waits[400] = "";
    /* advice is kept by pointer: static text */
    static const char wait_advice[] =
        "A collective's kernel runs until every rank has arrived, so the ranks that arrive early wait for the late "
        "one: find what delays the rank that spends least in the same collectives (its work before them, its step's "
        "start, the straggler analysis) before reducing the volume.";
    const tl_waits *wt = &a->waits;
    if (least != NULL && wt->most_last >= 0 && wt->most_last != w.r->rank && wt->source == TL_WAITS_GPU)
        snprintf(waits, sizeof waits,
                 " The same %zu collectives take %s on rank %d against %s here: most of "
                 "it is likely waiting, for rank %d above all, which arrives last to %llu of %llu (Waits).",
                 ncolls, TL_DUR(least->gpu.comm), least->rank, TL_DUR(gb->comm), wt->most_last,
                 (unsigned long long)wt->most_last_n, (unsigned long long)wt->matched);
    else if (least != NULL)
        snprintf(waits, sizeof waits,
                 " The same %zu collectives take %s on rank %d against %s here: most of "
                 "it is likely waiting for a rank that arrives later.",
                 ncolls, TL_DUR(least->gpu.comm), least->rank, TL_DUR(gb->comm));
    snprintf(msg, sizeof msg,
             "On rank %d, communication takes %s of the kernel time, %s not hidden under "
             "compute.%s",
             w.r->rank, TL_PCT(comm_pct(w.r)), TL_PCT(w.v), waits);
    gpu_evidence(g, sizeof g, w.r);
    fire_full(a, "communication-heavy", NULL, least != NULL ? wait_advice : NULL, w.r->rank, msg,
              "rank %d: communication %s of the kernel time, %s of it overlapping compute, exposed %s; "
              "above the threshold of %s on %d of the %d ranks it applies to%s",
              w.r->rank, TL_PCT(comm_pct(w.r)), TL_PCT(tl_pct(gb->comm_compute, gb->comm)), TL_PCT(w.v),
              TL_PCT_WHOLE(COMM_HEAVY_PCT), w.hits, w.with, g);
}

static void low_gpu_rule(tl_aggregate *a)
{
    if (capture_only(a))
        skip(a, "low-gpu-utilization",
             "the trace captures CUDA/HIP graphs and replays none: the kernels it records "
             "were captured, not run, so their time says nothing of the GPU's use");
    else
        simple_rule(a, "low-gpu-utilization", busy_pct, LOW_GPU_UTIL_PCT, 1, "the GPU is busy only ",
                    " of the kernel time", gpu_unmet(a));
}

/* communication-heavy and low-overlap */
static void comm_rules(tl_aggregate *a)
{
    if (!comm_is_waiting(a)) {
        comm_rule(a);
        /* the reason that holds: without GPU events, there is no communication
         * to speak of at all (it said "not over 5%" of FramePack reports) */
        char unmet[120];
        snprintf(unmet, sizeof unmet, "communication is not over %s of the kernel time on any rank",
                 TL_PCT_WHOLE(OVERLAP_MIN_COMM));
        simple_rule(a, "low-overlap", overlap_pct, LOW_OVERLAP_PCT, 1, "only ",
                    " of the communication overlaps compute", any_gpu(a) ? unmet : gpu_unmet(a));
    }
}

/* Data loading over the steps, or, in a trace without steps, over the
 * rank's profiled span (PARAM's 26 MB trace: the DataLoader's __next__ is
 * 8.2 of 16.2 s, and covers 68 % of the GPU idle time). */
static void data_loading(tl_aggregate *a)
{
    const tl_name_table *t = &a->names;
    const tl_rank_result *worst = NULL;
    const char *wname = NULL;
    double wpct = 0, wload = 0, wtotal = 0;
    int steps = 0, found = 0, hits = 0, with = 0;
    /* Which rows are data loading, once: the test is three case-blind
     * substring searches, and ranks x rows of them were 4 % of a 512-rank
     * report's CPU. NULL (out of memory): asked row by row. */
    unsigned char *loading_row = malloc(t->n + 1);
    for (size_t i = 0; loading_row != NULL && i < t->n; i++)
        loading_row[i] = (t->rows[i].group == TL_GROUP_SECTIONS || t->rows[i].group == TL_GROUP_OPS) &&
                         tl_is_data_loading(t->rows[i].name);
    for (size_t ri = 0; ri < a->nranks; ri++) {
        const tl_rank_result *r = &a->ranks[ri];
        if (r->nsteps == 0 && !(r->span_ns > 0))
            continue;
        steps = 1;
        double step_total = 0, load = 0;
        for (size_t k = 0; k < r->nsteps; k++)
            step_total += (double)r->steps[k].dur_ns;
        if (r->nsteps == 0)
            step_total = (double)r->span_ns;
        /* The outermost data loading: the largest matching row per rank (rows
         * nest, e.g. enumerate(DataLoader) around its __next__). */
        const char *which = NULL;
        for (size_t i = 0; i < t->n; i++)
            if ((loading_row ? loading_row[i]
                             : (t->rows[i].group == TL_GROUP_SECTIONS || t->rows[i].group == TL_GROUP_OPS) &&
                                   tl_is_data_loading(t->rows[i].name)) &&
                t->rows[i].rank_total[ri] > load) {
                load = t->rows[i].rank_total[ri];
                which = t->rows[i].name;
            }
        found |= which != NULL;
        double pct = step_total > 0 ? 100 * load / step_total : 0;
        with += which != NULL;
        hits += which != NULL && pct > DATA_LOADING_PCT;
        if (which && pct > DATA_LOADING_PCT && pct > wpct) {
            worst = r;
            wname = which;
            wpct = pct;
            wload = load;
            wtotal = step_total;
        }
    }
    free(loading_row);
    if (!steps || !found) {
        /* the missing section first: a report with steps but no
         * data-loading section said "no steps" */
        int any_loading = found;
        for (size_t i = 0; i < t->n && !any_loading; i++)
            any_loading = (t->rows[i].group == TL_GROUP_SECTIONS || t->rows[i].group == TL_GROUP_OPS) &&
                          tl_is_data_loading(t->rows[i].name);
        skip_absent(a, "data-loading", "%s",
                    !any_loading ? "no data-loading section or operator"
                                 : "no steps and no profiled span in the inputs");
        return;
    }
    if (worst != NULL && worst->nsteps == 0) {
        char msg[300];
        snprintf(msg, sizeof msg, "Data loading takes %s of rank %d's profiled time.", TL_PCT(wpct), worst->rank);
        fire(a, "data-loading", worst->rank, msg,
             "%s: %s of the %s profiled (%s; no steps in the trace); threshold %s on %d of the %d "
             "ranks it applies to",
             wname, TL_DUR(wload), TL_DUR(wtotal), TL_PCT(wpct), TL_PCT_WHOLE(DATA_LOADING_PCT), hits, with);
    } else if (worst != NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "Data loading takes %s of rank %d's step time.", TL_PCT(wpct), worst->rank);
        fire(a, "data-loading", worst->rank, msg,
             "%s: %s over %zu step%s of %s total (%s); threshold "
             "%s on %d of the %d ranks it applies to",
             wname, TL_DUR(wload), worst->nsteps, worst->nsteps == 1 ? "" : "s", TL_DUR(wtotal), TL_PCT(wpct),
             TL_PCT_WHOLE(DATA_LOADING_PCT), hits, with);
    }
}

/* A step's time for its spread: its span, or the GPU compute it launched
 * when that is longer. A host that runs ahead of the GPU (the first steps,
 * before anything synchronizes) records short steps whose work the GPU does
 * later: HTA's ns_resolution trace has steps of 35, 72, 96 and 96 ms on the
 * CPU, each launching 94 ms of kernels -- the GPU's steps are 96-98 ms. */
static double step_cost(const tl_sstep *s, int *ahead)
{
    double d = (double)s->dur_ns;
    if (s->compute_ns > s->dur_ns) {
        (*ahead)++;
        return (double)s->compute_ns;
    }
    return d;
}

/* The mean step time (step_time_ns's: each rank's mean over its steps, then
 * over the ranks) with each step counted as step_cost does: a host that ran
 * ahead of the GPU (ns_resolution: 35, 72, 96, 96 ms on the host, 94 ms of
 * kernels each) finished its steps early, not the GPU its work. NAN without
 * per-step records. */
static double step_mean_with_compute(const tl_aggregate *a)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->steps_summarized || r->nsteps == 0)
            continue;
        double t = 0;
        int ahead = 0;
        for (size_t k = 0; k < r->nsteps; k++)
            t += step_cost(&r->steps[k], &ahead);
        sum += t / (double)r->nsteps;
        n++;
    }
    return n ? sum / (double)n : NAN;
}

static void step_rules(tl_aggregate *a)
{
    const tl_rank_result *vw = NULL;
    double vspread = 0, vmin = 0, vmed = 0, vmax = 0;
    size_t vn = 0;
    int vahead = 0, vedges = 0;
    int any_steps = 0, any_mem = 0, training = has_backward(a);
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        size_t n = comparable_steps(r);
        if (n >= MIN_STEPS) {
            any_steps = 1;
            double *v = malloc(n * sizeof *v);
            if (v != NULL) {
                /* the steady state: the first and the last comparable step
                 * left out where MIN_STEPS remain. A program's first step
                 * starts up (CUDA context, cuBLAS, the allocator, compiling)
                 * and a recorder starts and stops in the steps at its edges:
                 * a real H200 job's 14 steps read 393, 116, 64 ... 66,
                 * 149 ms, each slow step at an edge, the others within 8 %. */
                size_t edge = n >= MIN_STEPS + 2 ? 1 : 0, k = 0, c = 0;
                int ahead = 0;
                for (size_t s = 0; s < r->nsteps; s++)
                    if (!r->steps[s].partial && c++ >= edge && c <= n - edge)
                        v[k++] = step_cost(&r->steps[s], &ahead);
                double med = tl_median_sort(v, k), spread = med > 0 ? (v[k - 1] - v[0]) / med : 0;
                /* ... and one slow (or fast) step is not variance: the
                 * spread must hold without the step farthest from the
                 * median (periodic work repeats) */
                double rest = v[k - 1] - med >= med - v[0] ? v[k - 2] - v[0] : v[k - 1] - v[1];
                if (spread > STEP_SPREAD && med > 0 && rest / med > STEP_SPREAD && spread > vspread) {
                    vw = r;
                    vspread = spread;
                    vmin = v[0];
                    vmed = med;
                    vmax = v[k - 1];
                    vn = k;
                    vahead = ahead;
                    vedges = edge > 0;
                }
                free(v);
            }
        }
        if (isfinite(r->peak_allocated) && isfinite(r->peak_reserved)) {
            any_mem = 1;
            if (r->peak_reserved > FRAGMENTATION_RATIO * r->peak_allocated &&
                r->peak_reserved - r->peak_allocated > FRAGMENTATION_BYTES) {
                char msg[256];
                snprintf(msg, sizeof msg, "Rank %d reserves %.1fx the memory it allocates.", r->rank,
                         r->peak_reserved / r->peak_allocated);
                fire_full(a, "memory-fragmentation", NULL,
                          training ? NULL
                                   : "No backward pass in the trace (inference): reserved memory far above allocated "
                                     "is often a deliberate pool (a KV cache, CUDA graph memory pools); if it is not, "
                                     "try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
                          r->rank, msg, "peak reserved %s vs allocated %s; thresholds %.1fx and %s",
                          TL_BYTES(r->peak_reserved), TL_BYTES(r->peak_allocated), FRAGMENTATION_RATIO,
                          TL_BYTES_ROUND(FRAGMENTATION_BYTES));
            }
        }
    }
    if (!any_steps)
        skip(a, "step-time-variance", "fewer than %d comparable steps on every rank", MIN_STEPS);
    else if (vw != NULL) {
        char msg[256];
        snprintf(msg, sizeof msg, "Rank %d's step times vary by %s of the median.", vw->rank,
                 TL_PCT_WHOLE(100 * vspread));
        char ahead[160] = "";
        if (vahead > 0)
            snprintf(ahead, sizeof ahead,
                     " (%d step%s shorter on the host than the GPU compute %s launched counted as "
                     "that compute)",
                     vahead, vahead == 1 ? "" : "s", vahead == 1 ? "it" : "they");
        fire(a, "step-time-variance", vw->rank, msg,
             "min %s, median %s, max %s over %zu comparable steps%s%s; threshold %s", TL_DUR(vmin), TL_DUR(vmed),
             TL_DUR(vmax), vn, vedges ? " (the first and the last left out: start-up and the recording's edges)" : "",
             ahead, TL_PCT_WHOLE(100 * STEP_SPREAD));
    }
    if (!any_mem)
        skip_absent(a, "memory-fragmentation", "no allocated and reserved peaks in the inputs");

    /* rank-imbalance: only where the per-step analysis could not compare. */
    const tl_across *st = tl_aggregate_across(a, "step_time_ns");
    if (a->nranks < 2) {
        skip(a, "rank-imbalance", "one rank");
        return;
    }
    if (a->steps_compared) {
        skip(a, "rank-imbalance", "the per-step straggler analysis compared %d steps and decides", a->steps_compared);
        return;
    }
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        size_t n = comparable_steps(r);
        if (n == 0) { /* a report's loop summary: its count */
            for (size_t k = 0; k < r->nsessions; k++) {
                tl_session *s = &a->sessions[r->sessions[k]];
                tl_spill_hold(s); /* names: the bulk (spill.h) */
                for (size_t j = 0; j < s->nnames; j++)
                    if (s->names[j].group == TL_GROUP_ITERATIONS && s->names[j].d.count > n)
                        n = s->names[j].d.count;
                tl_spill_drop(s);
            }
        }
        if (n < MIN_STEPS) {
            skip(a, "rank-imbalance", "rank %d has %zu step%s: need %d on every rank", r->rank, n, n == 1 ? "" : "s",
                 MIN_STEPS);
            return;
        }
    }
    if (st != NULL && st->n >= 2 && st->imbalance > IMBALANCE) {
        char msg[256];
        snprintf(msg, sizeof msg, "Rank %d's steps take %.2fx the mean step time of all ranks.", st->max_rank,
                 st->imbalance);
        fire(a, "rank-imbalance", st->max_rank, msg,
             "step time max %s (rank %d), mean %s, min %s (rank %d); threshold %.2fx", TL_DUR(st->max), st->max_rank,
             TL_DUR(st->mean), TL_DUR(st->min), st->min_rank, IMBALANCE);
    }
}

/* The rank the others wait for in one sentence (waits.h): who, how often
 * last, how long the others wait, and what it does meanwhile. */
static int waits_sentence(const tl_aggregate *a, char *buf, size_t size, const tl_straggler *s)
{
    const tl_waits *w = &a->waits;
    int others = (int)w->used - 1;
    int len = snprintf(buf, size, "Rank %d holds the others back: it arrives last to %d of %d collectives", s->rank,
                       s->slower, s->units);
    if (w->by_cause && len > 0 && (size_t)len < size)
        len +=
            snprintf(buf + len, size - (size_t)len, ", causing %s of the waiting", TL_PCT_WHOLE(w->caused_share_pct));
    if (len > 0 && (size_t)len < size) {
        if (w->steps > 0 && isfinite(w->step_share_pct))
            len += snprintf(buf + len, size - (size_t)len,
                            ", and the other %d rank%s wait %s a step for it "
                            "(%s of their step)",
                            others, others == 1 ? "" : "s", TL_DUR(w->caused_per_step_ns),
                            TL_PCT_WHOLE(w->step_share_pct));
        else
            len += snprintf(buf + len, size - (size_t)len, ", and the other %d rank%s wait %s each time", others,
                            others == 1 ? "" : "s", TL_DUR(w->caused_per_step_ns));
    }
    if (w->ncause > 0 && len > 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, "; it spends %s %s more than the others in \"%.120s\"",
                        TL_DUR(w->cause[0].delta_ns), w->steps > 0 ? "a step" : "each time", w->cause[0].name);
    if (w->window_cause >= 0 && len > 0 && (size_t)len < size) {
        int c = w->window_cause;
        len += snprintf(buf + len, size - (size_t)len,
                        "; before its late arrivals it spends %s in %s against "
                        "%s on the others",
                        TL_DUR(w->window_mine_ns[c]), tl_stepcat_phrase(c), TL_DUR(w->window_others_ns[c]));
    }
    return len;
}

static void straggler_rule(tl_aggregate *a)
{
    if (a->nstragglers == 0 && a->straggler_note != NULL)
        skip(a, "straggler", "%s", a->straggler_note);
    for (int i = 0; i < a->nstragglers; i++) {
        const tl_straggler *s = &a->stragglers[i];
        char msg[900];
        const char *advice = NULL;
        if (strcmp(s->kind, "compute") == 0)
            snprintf(msg, sizeof msg, "Rank %d is a straggler (slow compute).", s->rank);
        else {
            int len = waits_sentence(a, msg, sizeof msg - 1, s);
            if (len > 0 && (size_t)len < sizeof msg - 1)
                snprintf(msg + len, sizeof msg - (size_t)len, ".");
            if ((a->waits.ncause > 0 && tl_is_data_loading(a->waits.cause[0].name)) ||
                a->waits.window_cause == TL_SC_DATA)
                advice = "Its data loading is what the others wait for: use more DataLoader workers, pinned memory and "
                         "prefetching on that rank, and check its storage and its share of the data.";
        }
        fire_full(a, "straggler", s->severity ? s->severity : "warning", advice, s->rank, msg, "%s",
                  s->summary ? s->summary : "");
    }
}

/* The stage that drifts most across sessions (drift.h), with the step time
 * when it drifts too. */
static void drift_rule(tl_aggregate *a)
{
    const tl_drift *d = &a->drift;
    const tl_drift_stage *worst = NULL, *step = NULL;
    size_t n = 0;
    for (size_t i = 0; i < d->nstages; i++) {
        const tl_drift_stage *s = &d->stages[i];
        if (!s->drifts)
            continue;
        n++;
        if (s->group < 0)
            step = s;
        else if (worst == NULL || fabs(s->change_pct) > fabs(worst->change_pct))
            worst = s;
    }
    if (d->nsessions < 2) {
        skip_absent(a, "session-drift", "no rank has two or more sessions");
        return;
    }
    if (worst == NULL && step == NULL)
        return;
    const tl_drift_stage *s = worst ? worst : step;
    char msg[400];
    if (s == step)
        snprintf(msg, sizeof msg,
                 "The median step is %s %s in the last of %d sessions than in the first (%zu "
                 "stage%s drift).",
                 TL_PCT_WHOLE(fabs(s->change_pct)), s->change_pct > 0 ? "slower" : "faster", d->nsessions, n,
                 n == 1 ? "" : "s");
    else
        snprintf(msg, sizeof msg,
                 "\"%.120s\" is %s %s a call in the last of %d sessions than in the first (%zu "
                 "stage%s drift).",
                 s->name, TL_PCT_WHOLE(fabs(s->change_pct)), s->change_pct > 0 ? "slower" : "faster", d->nsessions, n,
                 n == 1 ? "" : "s");
    int last = d->nsessions - 1;
    while (last > 0 && !isfinite(s->value[last]))
        last--;
    const char *per = s == step ? "median step" : "a call", *unit = s == step ? "step" : "call";
    fire(a, "session-drift", -1, msg,
         "%s: %s %s in session 1 (%.4g %s%s), %s in session %d (%.4g %s%s) "
         "(%s, trend %s per session)%s%s; median over the ranks; threshold %s",
         s->name, TL_DUR(s->value[0]), per, s->calls[0], unit, s->calls[0] == 1 ? "" : "s", TL_DUR(s->value[last]),
         last + 1, s->calls[last], unit, s->calls[last] == 1 ? "" : "s", TL_PCT_SIGNED(s->change_pct),
         TL_PCT_SIGNED(s->slope_pct), step && step != s ? "; step time " : "",
         step && step != s ? (step->change_pct > 0 ? "slower too" : "faster too") : "", TL_PCT_WHOLE(TL_DRIFT_PCT));
}

/* ---- the seeds' rules on sampled telemetry, memory growth and video diffusion ------- */

static const tl_session *session_of(const tl_aggregate *a, const tl_rank_result *r, size_t k)
{
    return &a->sessions[r->sessions[k]];
}

/* Inferix's monitor watches every GPU NVML sees and reports one series for them all. */
static const char *monitor_note(const tl_session *s)
{
    return s->id.format == TL_FMT_INFERIX ? " (Inferix's monitor: the hottest / busiest of the GPUs it watches)" : "";
}

static void sampled_utilization(tl_aggregate *a)
{
    const tl_rank_result *w = NULL;
    int with = 0, hits = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->tel.n[TL_SERIES_GPU_UTIL] < MIN_UTIL_SAMPLES || !isfinite(r->tel.mean[TL_SERIES_GPU_UTIL]))
            continue;
        with++;
        if (r->tel.mean[TL_SERIES_GPU_UTIL] < LOW_SAMPLED_UTIL_PCT) {
            hits++;
            if (w == NULL || r->tel.mean[TL_SERIES_GPU_UTIL] < w->tel.mean[TL_SERIES_GPU_UTIL])
                w = r;
        }
    }
    if (with == 0) {
        skip_absent(a, "low-sampled-utilization",
                    "no rank has %d or more GPU utilization samples (libtally's NVML sampler, "
                    "Inferix's GPU monitor)",
                    MIN_UTIL_SAMPLES);
        return;
    }
    if (w == NULL)
        return;
    const char *note = w->nsessions ? monitor_note(session_of(a, w, 0)) : "";
    char msg[300];
    snprintf(msg, sizeof msg,
             "On rank %d, the sampled GPU utilization averages %s: no kernel runs for over half "
             "of the time.",
             w->rank, TL_PCT(w->tel.mean[TL_SERIES_GPU_UTIL]));
    fire(a, "low-sampled-utilization", w->rank, msg,
         "rank %d: sampled utilization mean %s, highest %s, %llu samples over %d GPU%s%s; below the threshold "
         "of %s on %d of the %d ranks with samples",
         w->rank, TL_PCT(w->tel.mean[TL_SERIES_GPU_UTIL]), TL_PCT(w->tel.max[TL_SERIES_GPU_UTIL]),
         (unsigned long long)w->tel.n[TL_SERIES_GPU_UTIL], w->tel.gpus, w->tel.gpus == 1 ? "" : "s", note,
         TL_PCT_WHOLE(LOW_SAMPLED_UTIL_PCT), hits, with);
}

/* The GPUs a rule counts: one per (host, device) when the collector recorded
 * the host (ranks of one node sample the same GPUs), else per (rank, device). */
typedef struct gpu_set {
    const tl_session *s[TL_MAX_RECOMMENDATIONS * 8];
    int64_t dev[TL_MAX_RECOMMENDATIONS * 8];
    int n, overflow;
} gpu_set;

static void gpu_set_add(gpu_set *g, const tl_session *s, int64_t device)
{
    for (int i = 0; i < g->n; i++) {
        if (g->dev[i] != device)
            continue;
        if (s->sys.hostname ? g->s[i]->sys.hostname && strcmp(g->s[i]->sys.hostname, s->sys.hostname) == 0
                            : !g->s[i]->sys.hostname && g->s[i]->id.rank == s->id.rank)
            return;
    }
    if (g->n == (int)(sizeof g->dev / sizeof g->dev[0])) {
        g->overflow++;
        return;
    }
    g->s[g->n] = s;
    g->dev[g->n++] = device;
}

static int gpu_set_count(const gpu_set *g)
{
    return g->n + g->overflow;
}

/* A GPU's thermal severity: 0 none, 1 info, 2 warning, 3 critical. */
static int thermal_level(const tl_shealth *h)
{
    double hot = h->temp_n ? (double)h->hot_n / (double)h->temp_n : 0;
    double slow = h->reasons_n ? (double)h->thermal_n / (double)h->reasons_n : 0;
    if (!(h->temp_max > TL_HOT_C) && h->thermal_n == 0)
        return 0;
    if (slow > THERMAL_SLOWDOWN_CRIT || (hot > 0.5 && h->temp_max >= HOT_CRIT_C))
        return 3;
    if (h->temp_max > HOT_WARN_C || hot > HOT_SHARE_WARN || h->thermal_n > 0)
        return 2;
    return 1;
}

static void thermal(tl_aggregate *a)
{
    static const char *const level[] = { "", "info", "warning", "critical" };
    const tl_shealth *w = NULL;
    const tl_session *ws = NULL;
    int wl = 0, any = 0;
    gpu_set hot = { .n = 0 };
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t k = 0; k < a->ranks[i].nsessions; k++) {
            const tl_session *s = session_of(a, &a->ranks[i], k);
            for (size_t d = 0; d < s->nhealth; d++) {
                const tl_shealth *h = &s->health[d];
                if (h->temp_n == 0 && h->reasons_n == 0)
                    continue;
                any = 1;
                int l = thermal_level(h);
                if (l > 0)
                    gpu_set_add(&hot, s, h->device);
                if (l > wl || (l == wl && l > 0 && h->temp_max > w->temp_max)) {
                    w = h;
                    ws = s;
                    wl = l;
                }
            }
        }
    if (!any) {
        skip_absent(a, "thermal", "no GPU temperature samples and no NVML clocks event reasons in the inputs");
        return;
    }
    if (wl == 0)
        return;
    int hot_gpus = gpu_set_count(&hot);
    char msg[300], temp[64] = "", slow[128] = "";
    if (isfinite(w->temp_max))
        snprintf(temp, sizeof temp,
                 "reaches %.0f \xc2\xb0"
                 "C",
                 w->temp_max);
    if (w->thermal_n > 0)
        snprintf(slow, sizeof slow, "%sNVML reports a thermal slowdown in %llu of %llu samples", temp[0] ? "; " : "",
                 (unsigned long long)w->thermal_n, (unsigned long long)w->reasons_n);
    snprintf(msg, sizeof msg, "On rank %d, GPU %lld %s%s.", ws->id.rank, (long long)w->device, temp, slow);
    char reasons[128] = "no NVML clocks event reasons recorded";
    if (w->reasons_n)
        snprintf(reasons, sizeof reasons, "NVML thermal slowdown in %llu of %llu samples",
                 (unsigned long long)w->thermal_n, (unsigned long long)w->reasons_n);
    fire_full(a, "thermal", level[wl], NULL, ws->id.rank, msg,
              "rank %d GPU %lld: peak %.0f \xc2\xb0"
              "C%s; above %.0f \xc2\xb0"
              "C in %llu of %llu samples (%s); %s; %d GPU%s over the "
              "threshold",
              ws->id.rank, (long long)w->device, w->temp_max, monitor_note(ws), TL_HOT_C, (unsigned long long)w->hot_n,
              (unsigned long long)w->temp_n, TL_DUR(w->hot_ns), reasons, hot_gpus, hot_gpus == 1 ? "" : "s");
}

static void power_at_cap(tl_aggregate *a)
{
    const tl_shealth *w = NULL;
    const tl_session *ws = NULL;
    double wv = 0;
    int any = 0;
    gpu_set capped = { .n = 0 };
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t k = 0; k < a->ranks[i].nsessions; k++) {
            const tl_session *s = session_of(a, &a->ranks[i], k);
            for (size_t d = 0; d < s->nhealth; d++) {
                const tl_shealth *h = &s->health[d];
                double at = h->power_n ? (double)h->cap_n / (double)h->power_n : NAN;
                double nv = h->reasons_n ? (double)h->power_throttle_n / (double)h->reasons_n : NAN;
                if (!isfinite(at) && !isfinite(nv))
                    continue;
                any = 1;
                double v = fmax(isfinite(at) ? at : 0, isfinite(nv) ? nv : 0);
                if (v > POWER_CAP_SHARE) {
                    gpu_set_add(&capped, s, h->device);
                    if (w == NULL || v > wv) {
                        w = h;
                        ws = s;
                        wv = v;
                    }
                }
            }
        }
    if (!any) {
        skip_absent(a, "power-at-cap",
                    "no power limit recorded (libtally records NVML's; Inferix reports and traces do not) "
                    "and no NVML clocks event reasons");
        return;
    }
    if (w == NULL)
        return;
    int hits = gpu_set_count(&capped);
    char msg[300], lim[220] = "no limit recorded", rs[160] = "no NVML reasons recorded";
    if (w->power_n)
        snprintf(lim, sizeof lim, "at %s of the %.0f W limit or above in %llu of %llu samples (highest %.0f W)",
                 TL_PCT_WHOLE(100 * TL_POWER_CAP_SHARE), w->power_limit_w, (unsigned long long)w->cap_n,
                 (unsigned long long)w->power_n, w->power_max);
    if (w->reasons_n)
        snprintf(rs, sizeof rs, "NVML power cap or brake in %llu of %llu samples",
                 (unsigned long long)w->power_throttle_n, (unsigned long long)w->reasons_n);
    snprintf(msg, sizeof msg, "On rank %d, GPU %lld runs at its power limit %s of the time.", ws->id.rank,
             (long long)w->device, TL_PCT_WHOLE(100 * wv));
    fire(a, "power-at-cap", ws->id.rank, msg, "rank %d GPU %lld: %s; %s; threshold %s of the samples; %d GPU%s over it",
         ws->id.rank, (long long)w->device, lim, rs, TL_PCT_WHOLE(100 * POWER_CAP_SHARE), hits, hits == 1 ? "" : "s");
}

/* Only the program's own memory supports a leak: allocated, its own device
 * memory by NVML's per-process accounting, its RSS. Device-wide used memory
 * is every process's on the GPU (another program allocating 973 MiB once read
 * as "leak-like"): said only as device-wide, never a finding alone. */
static void memory_growth(tl_aggregate *a)
{
    const tl_sgrowth *w = NULL, *dw = NULL, *jw = NULL;
    const tl_session *ws = NULL, *dws = NULL, *jws = NULL;
    double wv = 0, dwv = 0, jwv = 0;
    int any = 0, any_device = 0;
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t k = 0; k < a->ranks[i].nsessions; k++) {
            const tl_session *s = session_of(a, &a->ranks[i], k);
            for (size_t g = 0; g < s->ngrowth; g++) {
                const tl_sgrowth *x = &s->growth[g];
                if (x->n < TL_GROWTH_MIN_REPEATS || !(x->first > 0) || !isfinite(x->last))
                    continue;
                int device = x->metric == TL_GROWTH_DEVICE_USED;
                *(device ? &any_device : &any) = 1;
                double pct = 100 * (x->last - x->first) / x->first;
                if (x->drops != 0 || !(pct > GROWTH_PCT) || !(x->last - x->first > GROWTH_BYTES))
                    continue;
                /* one jump: a one-time allocation, not a leak (NAN: an older
                 * partial without the figure, read as before) */
                if (!device && x->max_rise > GROWTH_BURST * (x->last - x->first)) {
                    if (pct > jwv) {
                        jw = x;
                        jws = s;
                        jwv = pct;
                    }
                    continue;
                }
                if (pct > (device ? dwv : wv)) {
                    *(device ? &dw : &w) = x;
                    *(device ? &dws : &ws) = s;
                    *(device ? &dwv : &wv) = pct;
                }
            }
        }
    if (!any && dw != NULL) {
        skip(a, "memory-growth",
             "only device-wide used memory repeats, and it rises (rank %d: %.150s, +%s): that is "
             "every process's memory on the GPU, other programs' included, never a leak finding alone; the program's "
             "own memory (an allocator's allocated, NVML's per-process figure, the RSS) was not read at a repeated "
             "point",
             dws->id.rank, dw->what, TL_PCT_WHOLE(dwv));
        return;
    }
    if (!any) {
        skip_absent(a, "memory-growth",
                    "no memory reading repeats at one point of the work (a snapshot label taken %d or "
                    "more times, %d or more steps with allocator events, or %d or more monitor samples)%s",
                    TL_GROWTH_MIN_REPEATS, TL_GROWTH_MIN_REPEATS, TL_GROWTH_MIN_SAMPLES,
                    any_device ? "; device-wide used memory (every process's) repeats but is never read as a leak alone"
                               : "");
        return;
    }
    if (w == NULL) {
        if (jw != NULL)
            skip(a, "memory-growth",
                 "rank %d: %.150s rises %s (+%s) over %u repetitions, but %s of it (+%s) within three "
                 "consecutive ones: a one-time allocation (a warm-up, a late load), not a leak; over %s of the rise "
                 "that close together is not read as growth",
                 jws->id.rank, jw->what, TL_PCT_WHOLE(jwv), TL_BYTES(jw->last - jw->first), jw->n,
                 TL_PCT_WHOLE(100 * jw->max_rise / (jw->last - jw->first)), TL_BYTES(jw->max_rise),
                 TL_PCT_WHOLE(100 * GROWTH_BURST));
        return;
    }
    char msg[400], span[64] = "", wide[300] = "";
    if (w->span_ns > 0)
        snprintf(span, sizeof span, " over %s", TL_DUR(w->span_ns));
    if (dw != NULL)
        snprintf(wide, sizeof wide,
                 "; device-wide used memory (every process's, other programs' included) rises "
                 "too: %.120s +%s",
                 dw->what, TL_PCT_WHOLE(dwv));
    snprintf(msg, sizeof msg,
             "On rank %d, memory grows at a repeated point of the work: %.150s rises %s over %u "
             "repetitions.",
             ws->id.rank, w->what, TL_PCT_WHOLE(wv), w->n);
    fire(a, "memory-growth", ws->id.rank, msg,
         "rank %d: %s: %s first, %s last (+%s, +%s)%s, highest %s, %u repetitions, none "
         "lower than the one before by over %s; thresholds %s and %s%s",
         ws->id.rank, w->what, TL_BYTES(w->first), TL_BYTES(w->last), TL_PCT_WHOLE(wv), TL_BYTES(w->last - w->first),
         span, TL_BYTES(w->max), w->n, TL_PCT_WHOLE(100 * TL_GROWTH_NOISE), TL_PCT_WHOLE(GROWTH_PCT),
         TL_BYTES_ROUND(GROWTH_BYTES), wide);
}

static void diffusion_rules(tl_aggregate *a)
{
    const tl_rank_result *fw = NULL, *dw = NULL;
    const tl_session *lw = NULL;
    int sized = 0, blocks3 = 0, layered = 0, fhits = 0, dhits = 0;
    double lshare = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        const tl_rank_diffusion *d = &r->diff;
        if (isfinite(d->fps)) {
            sized++;
            if (d->fps < LOW_FPS) {
                fhits++;
                if (fw == NULL || d->fps < fw->diff.fps)
                    fw = r;
            }
        }
        if (d->first_block_ns >= 0 && d->later_median_ns > 0) {
            blocks3++;
            double ratio = (double)d->first_block_ns / (double)d->later_median_ns;
            if (ratio > FIRST_BLOCK_RATIO && d->first_block_ns - d->later_median_ns > FIRST_BLOCK_EXTRA_NS) {
                dhits++;
                if (dw == NULL || ratio > (double)dw->diff.first_block_ns / (double)dw->diff.later_median_ns)
                    dw = r;
            }
        }
        for (size_t k = 0; k < r->nsessions; k++) {
            const tl_session *s = session_of(a, r, k);
            if (s->diff.layers < 2 || s->diff.layers_ns <= 0 || s->diff.top_layer == NULL)
                continue;
            layered++;
            double share = 100.0 * (double)s->diff.top_layer_ns / (double)s->diff.layers_ns;
            if (share > LAYER_SHARE && share > lshare) {
                lshare = share;
                lw = s;
            }
        }
    }
    if (!sized)
        skip_absent(a, "low-fps", "no block records with their sizes (Inferix's block_analysis)");
    else if (fw != NULL) {
        const tl_rank_diffusion *d = &fw->diff;
        char msg[300];
        snprintf(msg, sizeof msg, "On rank %d, the blocks generate %.2f frames per second.", fw->rank, d->fps);
        fire(a, "low-fps", fw->rank, msg,
             "rank %d: %.0f frames in %llu blocks over %s of block computation: %.2f FPS, %.2f blocks/s; "
             "threshold %.0f FPS on %d of the %d ranks with blocks",
             fw->rank, d->frames, (unsigned long long)d->blocks, TL_DUR(d->sized_ns), d->fps, d->bps, LOW_FPS, fhits,
             sized);
    }
    if (!blocks3)
        skip_absent(a, "first-block-delay", "fewer than 3 block records on every rank");
    else if (dw != NULL) {
        const tl_rank_diffusion *d = &dw->diff;
        char msg[300];
        snprintf(msg, sizeof msg, "On rank %d, the first block takes %s, %.1fx the later blocks.", dw->rank,
                 TL_DUR(d->first_block_ns), (double)d->first_block_ns / (double)d->later_median_ns);
        fire(a, "first-block-delay", dw->rank, msg,
             "rank %d: first block %s, later blocks' median %s (+%s, %.2fx); thresholds %.1fx and %s "
             "more, on %d of the %d ranks with 3 or more blocks",
             dw->rank, TL_DUR(d->first_block_ns), TL_DUR(d->later_median_ns),
             TL_DUR((double)(d->first_block_ns - d->later_median_ns)),
             (double)d->first_block_ns / (double)d->later_median_ns, FIRST_BLOCK_RATIO,
             TL_DUR_ROUND(FIRST_BLOCK_EXTRA_NS), dhits, blocks3);
    }
    if (!layered)
        skip_absent(a, "dominant-layer", "no layer timings (Inferix's computation_analysis) of 2 or more layers");
    else if (lw != NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "On rank %d, layer \"%.120s\" takes %s of the layers' time.", lw->id.rank,
                 lw->diff.top_layer, TL_PCT(lshare));
        fire(a, "dominant-layer", lw->id.rank, msg, "%s: %s of %s over %u layers (%s); threshold %s",
             lw->diff.top_layer, TL_DUR(lw->diff.top_layer_ns), TL_DUR(lw->diff.layers_ns), lw->diff.layers,
             TL_PCT(lshare), TL_PCT_WHOLE(LAYER_SHARE));
    }
}

/* A busy GPU below its base clock (NVML's default applications clock): the
 * GPU slows itself down. The reasons NVML gives (power, thermal) are named
 * as evidence; the thermal and power-at-cap rules judge them on their own. */
static void clocks_below_base(tl_aggregate *a)
{
    const tl_sclock *w = NULL;
    const tl_session *ws = NULL;
    double wv = 0;
    int any = 0;
    gpu_set slow = { .n = 0 };
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t k = 0; k < a->ranks[i].nsessions; k++) {
            const tl_session *s = session_of(a, &a->ranks[i], k);
            for (size_t d = 0; d < s->nclocks; d++) {
                const tl_sclock *c = &s->clocks[d];
                if (c->n < SLOW_CLOCK_MIN_SAMPLES)
                    continue;
                any = 1;
                double v = (double)c->slow_n / (double)c->n;
                if (v > SLOW_CLOCK_SHARE) {
                    gpu_set_add(&slow, s, c->device);
                    if (w == NULL || v > wv) {
                        w = c;
                        ws = s;
                        wv = v;
                    }
                }
            }
        }
    if (!any) {
        skip_absent(a, "clocks-below-base",
                    "no GPU with %d busy samples of NVML's SM clock and base clock (libtally's "
                    "sampler records them)",
                    SLOW_CLOCK_MIN_SAMPLES);
        return;
    }
    if (w == NULL)
        return;
    int hits = gpu_set_count(&slow);
    char msg[300], reasons[160];
    if (w->slow_reason_n)
        snprintf(reasons, sizeof reasons, "NVML's power or thermal reasons in %llu of them",
                 (unsigned long long)w->slow_reason_n);
    else
        snprintf(reasons, sizeof reasons, "no power or thermal reason from NVML in them");
    snprintf(msg, sizeof msg, "On rank %d, busy GPU %lld runs below its %.0f MHz base clock %s of the time.",
             ws->id.rank, (long long)w->device, w->base_mhz, TL_PCT_WHOLE(100 * wv));
    fire(a, "clocks-below-base", ws->id.rank, msg,
         "rank %d GPU %lld: SM clock below the %.0f MHz base in %llu of %llu busy samples (lowest %.0f MHz); %s; "
         "threshold %s of at least %d busy samples; %d GPU%s over it",
         ws->id.rank, (long long)w->device, w->base_mhz, (unsigned long long)w->slow_n, (unsigned long long)w->n,
         w->min_mhz, reasons, TL_PCT_WHOLE(100 * SLOW_CLOCK_SHARE), SLOW_CLOCK_MIN_SAMPLES, hits, hits == 1 ? "" : "s");
}

static int severity_rank(const char *s)
{
    return strcmp(s, "critical") == 0 ? 0 : strcmp(s, "warning") == 0 ? 1 : 2;
}

/* ---- reserved-memory jumps and eager attention ---------------------------- */

typedef struct jump_scan {
    int n;                 /* jumps */
    double total;          /* their reserved growth added up */
    double big, big_alloc; /* the largest, and the allocated memory at it */
    size_t big_at;         /* the reading after it */
} jump_scan;

/* One step of the scan: reading i (allocated al, reserved rs, the snapshot's
 * peak allocated pk or NaN) after the one before (prev_rs) with the highest
 * allocated so far *hi. */
static void jump_step(jump_scan *j, size_t i, double al, double rs, double pk, double prev_rs, double *hi)
{
    double before = *hi, now = al;
    if (isfinite(pk) && pk > now)
        now = pk;
    if (now > *hi)
        *hi = now;
    double d = rs - prev_rs;
    if (i == 0 || !(d >= JUMP_MIN_BYTES && d >= JUMP_MIN_FRAC * prev_rs))
        return;
    if (*hi - before > JUMP_EXPLAINED * d)
        return;
    j->n++;
    j->total += d;
    if (d > j->big) {
        j->big = d;
        j->big_alloc = al;
        j->big_at = i;
    }
}

/* The jumps of reserved memory in one session's readings: its snapshots when
 * it has enough of them, else its memory series (the bulk: read in the pass
 * over it, tl_rules_session_facts). */
static void scan_jumps(const tl_session *s, tl_session_facts *f)
{
    size_t ns = 0, nm = 0;
    for (size_t i = 0; i < s->nsnaps; i++)
        ns += isfinite(s->snaps[i].allocated) && isfinite(s->snaps[i].reserved);
    for (size_t i = 0; i < s->nmem; i++)
        nm += isfinite(s->mem[i].allocated) && isfinite(s->mem[i].reserved);
    if (ns < JUMP_MIN_READINGS && nm < JUMP_MIN_READINGS)
        return;
    f->jumps_read = 1;
    jump_scan j = { 0 };
    double hi = -INFINITY, prev = NAN;
    size_t idx = 0;
    int snaps = ns >= JUMP_MIN_READINGS;
    size_t n = snaps ? s->nsnaps : s->nmem;
    for (size_t i = 0; i < n; i++) {
        double al = snaps ? s->snaps[i].allocated : s->mem[i].allocated;
        double rs = snaps ? s->snaps[i].reserved : s->mem[i].reserved;
        double pk = snaps ? s->snaps[i].peak_allocated : NAN;
        if (!isfinite(al) || !isfinite(rs))
            continue;
        jump_step(&j, idx == 0 ? 0 : i, al, rs, pk, prev, &hi);
        prev = rs;
        idx++;
    }
    f->jumps_snaps = snaps;
    f->jumps_n = j.n;
    f->jumps_total = j.total;
    f->jumps_big = j.big;
    f->jumps_big_alloc = j.big_alloc;
    f->jumps_big_at = j.big_at;
    f->jumps_big_after_ns = !snaps && j.n > 0 ? s->mem[j.big_at].ts_ns - s->mem[0].ts_ns : 0;
}

static void reserved_jumps(tl_aggregate *a)
{
    int any = 0;
    const tl_session_facts *best = NULL;
    const tl_session *bs = NULL;
    for (size_t r = 0; r < a->nranks; r++)
        for (size_t k = 0; k < a->ranks[r].nsessions; k++) {
            const tl_session_facts *f = &a->facts[a->ranks[r].sessions[k]];
            if (!f->jumps_read)
                continue;
            any = 1;
            if (f->jumps_n >= JUMP_MIN_COUNT && f->jumps_total >= JUMP_TOTAL_BYTES &&
                (bs == NULL || f->jumps_total > best->jumps_total)) {
                best = f;
                bs = session_of(a, &a->ranks[r], k);
            }
        }
    if (!any) {
        skip_absent(a, "reserved-memory-jumps", "no %d readings of allocated and reserved memory of one device",
                    JUMP_MIN_READINGS);
        return;
    }
    if (bs == NULL)
        return;
    char where[260], msg[300];
    if (best->jumps_snaps)
        snprintf(where, sizeof where, "at snapshot '%.80s'",
                 bs->snaps[best->jumps_big_at].label ? bs->snaps[best->jumps_big_at].label : "");
    else
        snprintf(where, sizeof where, "%s after the first reading", TL_DUR((double)best->jumps_big_after_ns));
    snprintf(msg, sizeof msg,
             "On rank %d, reserved GPU memory grew in %d jumps (%s) while allocated memory "
             "stayed flat: the allocator fragments.",
             bs->id.rank, best->jumps_n, TL_BYTES(best->jumps_total));
    fire(a, "reserved-memory-jumps", bs->id.rank, msg,
         "%d jumps of reserved memory adding up to %s over %s; the largest +%s %s with %s "
         "allocated; thresholds: a jump of %s and %s, allocated rising under %s of it, %d jumps and %s",
         best->jumps_n, TL_BYTES(best->jumps_total),
         best->jumps_snaps ? "memory snapshots" : "the trace's [memory] events", TL_BYTES(best->jumps_big), where,
         TL_BYTES(best->jumps_big_alloc), TL_BYTES_ROUND(JUMP_MIN_BYTES), TL_PCT_WHOLE(100 * JUMP_MIN_FRAC),
         TL_PCT_WHOLE(100 * JUMP_EXPLAINED), JUMP_MIN_COUNT, TL_BYTES_ROUND(JUMP_TOTAL_BYTES));
}

/* Whether PyTorch has a fused attention kernel (FlashAttention-2, memory-
 * efficient attention) for fp16/bf16 on the device: NVIDIA GPUs of compute
 * capability 8.0 and later, by a part of their name. Unknown or other
 * devices (AMD, older NVIDIA): 0, and nothing is said. */
static int fused_attention_device(const char *name)
{
    static const char *const parts[] = { "A100",  "A800",   "A10",    "A16",    "A30",   "A40",          "A2 ",
                                         "A6000", "A5000",  "A4000",  "L4",     "L20",   "L40",          "H100",
                                         "H800",  "H200",   "H20",    "GH200",  "B100",  "B200",         "GB200",
                                         "B300",  "RTX 30", "RTX 40", "RTX 50", "RTX A", "RTX 6000 Ada", "RTX PRO" };
    if (name == NULL || strstr(name, "NVIDIA") == NULL)
        return 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(name, parts[i]) != NULL)
            return 1;
    return 0;
}

/* The first input's dtype in a shape key's types ("c10::BFloat16,Scalar"):
 * 1 half or bfloat16, 0 another, -1 none recorded. */
static int half_dtype(const char *types)
{
    if (types == NULL || types[0] == '\0')
        return -1;
    size_t n = strcspn(types, ",");
    return (n == 13 && !strncmp(types, "c10::BFloat16", n)) || (n == 9 && !strncmp(types, "c10::Half", n)) ||
           (n == 8 && !strncmp(types, "BFloat16", n)) || (n == 4 && !strncmp(types, "Half", n));
}

/* Softmax over square scores: the first input has 3 or more dimensions and
 * its last two are equal and at least EAGER_MIN_SEQ ("[[8,16,1024,1024],...").
 * Returns L, or 0. */
static long square_scores(const char *dims)
{
    if (dims == NULL || strncmp(dims, "[[", 2) != 0)
        return 0;
    long v[8];
    int n = 0;
    const char *p = dims + 2;
    while (n < 8) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p)
            break;
        v[n++] = x;
        p = end;
        if (*p != ',')
            break;
        p++;
    }
    if (*p != ']' || n < 3 || v[n - 1] != v[n - 2] || v[n - 1] < EAGER_MIN_SEQ)
        return 0;
    return v[n - 1];
}

static int is_fused_attention(const char *name)
{
    static const char *const fused[] = { "scaled_dot_product_flash",
                                         "scaled_dot_product_efficient",
                                         "scaled_dot_product_cudnn",
                                         "_flash_attention",
                                         "_efficient_attention",
                                         "flash_fwd",
                                         "flash_bwd",
                                         "fmha",
                                         "FlashAttn",
                                         "flash_attn",
                                         "cudnn_generated_fort_native_sdpa" };
    for (size_t i = 0; i < sizeof fused / sizeof fused[0]; i++)
        if (strstr(name, fused[i]) != NULL)
            return 1;
    return 0;
}

void tl_rules_session_facts(const tl_session *s, tl_session_facts *f)
{
    f->has_kernels = s->nkernels > 0;
    /* rank_collectives: a hash of the multiset of its collectives' kernel names */
    uint64_t sum = 0;
    for (size_t c = 0; c < s->ncolls; c++) {
        uint64_t h = 1469598103934665603ull;
        for (const unsigned char *p = (const unsigned char *)s->kernels[s->colls[c].kernel].name; *p; p++)
            h = (h ^ *p) * 1099511628211ull;
        sum += h;
    }
    f->colls_hash = sum;
    /* eager_attention: which attention paths its names and kernels show */
    unsigned at = 0;
    for (size_t i = 0; i < s->nnames; i++) {
        const char *n = s->names[i].name;
        if (!strcmp(n, "aten::_scaled_dot_product_attention_math"))
            at |= TL_ATTENTION_MATH;
        if (!strcmp(n, "aten::softmax") || !strcmp(n, "aten::_softmax"))
            at |= TL_ATTENTION_SOFTMAX;
        if (!strcmp(n, "aten::bmm") || !strcmp(n, "aten::matmul") || !strcmp(n, "aten::baddbmm"))
            at |= TL_ATTENTION_MATMUL;
        if (is_fused_attention(n))
            at |= TL_ATTENTION_FUSED;
    }
    for (size_t i = 0; i < s->nkernels && !(at & TL_ATTENTION_FUSED); i++)
        if (is_fused_attention(s->kernels[i].name))
            at |= TL_ATTENTION_FUSED;
    f->attention = at;
    scan_jumps(s, f); /* reserved_jumps */
}

static void eager_attention(tl_aggregate *a)
{
    int seen = 0, unknown_device = 0, no_dtype = 0, other_dtype = 0;
    const tl_session *ws = NULL;
    const tl_sshape *wshape = NULL;
    double wshare = 0;
    int64_t wtotal = 0;
    uint64_t wcalls = 0;
    for (size_t r = 0; r < a->nranks; r++)
        for (size_t k = 0; k < a->ranks[r].nsessions; k++) {
            const tl_session *s = session_of(a, &a->ranks[r], k);
            unsigned at = a->facts[a->ranks[r].sessions[k]].attention;
            int math = (at & TL_ATTENTION_MATH) != 0, soft = (at & TL_ATTENTION_SOFTMAX) != 0;
            int matmul = (at & TL_ATTENTION_MATMUL) != 0, fused = (at & TL_ATTENTION_FUSED) != 0;
            if (!math && !(soft && matmul && !fused))
                continue;
            seen = 1;
            if (!fused_attention_device(s->device_name)) {
                unknown_device = 1;
                continue;
            }
            if (s->span_ns <= 0)
                continue;
            /* each candidate shape key of the math path in half precision */
            int typed = 0;
            for (size_t i = 0; i < s->nshapes; i++) {
                const tl_sshape *sh = &s->shapes[i];
                int is_math = !strcmp(sh->name, "aten::_scaled_dot_product_attention_math");
                int is_soft = (!strcmp(sh->name, "aten::softmax") || !strcmp(sh->name, "aten::_softmax")) && matmul &&
                              !fused && square_scores(sh->dims) > 0;
                if (!is_math && !is_soft)
                    continue;
                int h = half_dtype(sh->types);
                typed |= h >= 0;
                other_dtype |= h == 0;
                if (h != 1)
                    continue;
                double share = 100.0 * (double)sh->total_ns / (double)s->span_ns;
                if (share >= EAGER_MIN_SHARE && share > wshare) {
                    ws = s;
                    wshape = sh;
                    wshare = share;
                    wtotal = sh->total_ns;
                    wcalls = sh->count;
                }
            }
            no_dtype |= !typed;
        }
    if (!seen) {
        skip_absent(a, "eager-attention",
                    "no attention on the math path (aten::_scaled_dot_product_attention_math, "
                    "softmax beside batched matrix products without a fused attention operator)");
        return;
    }
    if (ws == NULL) {
        if (unknown_device)
            skip(a, "eager-attention",
                 "the device is not known to have a fused attention kernel (an NVIDIA GPU "
                 "of compute capability 8.0 or more by its name): nothing is said");
        else if (no_dtype)
            skip(a, "eager-attention", "the math path's dtypes are not recorded (record_shapes): nothing is said");
        else if (other_dtype)
            skip(a, "eager-attention",
                 "the math path runs in another dtype than fp16 or bf16 (the fused kernels' "
                 "own), or under %s of the time",
                 TL_PCT_WHOLE(EAGER_MIN_SHARE));
        return;
    }
    char msg[300];
    snprintf(msg, sizeof msg,
             "On rank %d, attention runs unfused (%.60s) for %s of the time although %.60s has "
             "a fused kernel for its dtype.",
             ws->id.rank, wshape->name, TL_PCT(wshare), ws->device_name);
    fire(a, "eager-attention", ws->id.rank, msg,
         "%s: %llu calls, inputs %.120s of %.60s, %s (%s of the rank's %s); device %.60s; threshold %s", wshape->name,
         (unsigned long long)wcalls, wshape->dims, wshape->types, TL_DUR(wtotal), TL_PCT(wshare), TL_DUR(ws->span_ns),
         ws->device_name, TL_PCT_WHOLE(EAGER_MIN_SHARE));
}

void tl_apply_rules(tl_aggregate *a)
{
    /* each check once, in the table's order (rules a check decides together are adjacent) */
    for (size_t i = 0; i < NRULES; i++)
        if (i == 0 || rules[i].check != rules[i - 1].check)
            rules[i].check(a);
    /* Most severe first; within a severity, the order they fired in
     * (insertion sort: stable, and there are few). */
    for (int i = 1; i < a->nrecs; i++) {
        tl_recommendation r = a->recs[i];
        int j = i;
        while (j > 0 && severity_rank(a->recs[j - 1].severity) > severity_rank(r.severity)) {
            a->recs[j] = a->recs[j - 1];
            j--;
        }
        a->recs[j] = r;
    }
    tl_decide_headline(a);
}

/* ---- the headline ----------------------------------------------------------------- */

/* The finding that says why the GPU idles (blocking-host-call, launch-bound,
 * host-bound) at the severity sev, or NULL. */
static const tl_recommendation *idle_cause(const tl_aggregate *a, const char *sev)
{
    for (int i = 0; i < a->nrecs; i++) {
        const tl_recommendation *r = &a->recs[i];
        if (strcmp(r->severity, sev) == 0 &&
            (!strcmp(r->id, "blocking-host-call") || !strcmp(r->id, "launch-bound") || !strcmp(r->id, "host-bound")))
            return r;
    }
    return NULL;
}

/* "On rank 0, the GPU is busy only 36.1% of the kernel time: the host sits in
 * cudaMemcpyAsync during 70.7% of the GPU idle time." -- the symptom with its
 * cause, so the headline does not stop at a number the next finding
 * explains. Another rank's cause keeps its own "On rank N". */
static void symptom_and_cause(char *buf, size_t n, const tl_recommendation *low, const tl_recommendation *cause)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "On rank %d, ", low->rank);
    size_t ll = strlen(low->finding), pl = strlen(prefix);
    if (ll > 0 && low->finding[ll - 1] == '.')
        ll--;
    const char *why = cause->finding + pl;
    if (cause->rank == low->rank && strncmp(cause->finding, prefix, pl) == 0 && strncmp(why, "the GPU ", 8) == 0)
        snprintf(buf, n, "%.*s: it %s", (int)ll, low->finding, why + 8);
    else if (cause->rank == low->rank && strncmp(cause->finding, prefix, pl) == 0)
        snprintf(buf, n, "%.*s: %s", (int)ll, low->finding, why);
    else /* "...; on rank 5, the host ..." */
        snprintf(buf, n, "%.*s; %c%s", (int)ll, low->finding, tolower((unsigned char)cause->finding[0]),
                 cause->finding[0] ? cause->finding + 1 : "");
}

/* What the headline counts: ranks, or, when no input declared one (every
 * rank given by input order: FramePack's full run and its Gradio demo run,
 * catapult's unrelated traces), inputs -- "No problem found in 24 ranks"
 * called 24 unrelated files one job's ranks. */
static const char *ranks_word(const tl_aggregate *a)
{
    int declared = 0;
    for (size_t i = 0; i < a->nsessions && !declared; i++)
        declared = tl_session_counts(&a->sessions[i]) && a->sessions[i].id.rank_source != TL_RANK_ORDER;
    if (declared || a->nranks < 2)
        return a->nranks == 1 ? "rank" : "ranks";
    return "inputs (ranks by input order)";
}

/* How many rules did not apply (a rule may say why more than once). */
static size_t rules_skipped(const tl_aggregate *a)
{
    size_t n = 0;
    for (size_t i = 0; i < NRULES; i++)
        for (int k = 0; k < a->nskips; k++)
            if (a->skips[k].id == rules[i].id) {
                n++;
                break;
            }
    return n;
}

void tl_decide_headline(tl_aggregate *a)
{
    char buf[1200];
    free(a->headline);
    a->headline = NULL;
    if (a->nranks == 0) {
        a->headline_severity = "ok";
        a->headline = strdup("No usable input: none of the inputs is a profile tally can read (see Inputs).");
        return;
    }
    if (a->nrecs > 0 && strcmp(a->recs[0].severity, "info") != 0) {
        const tl_recommendation *r = &a->recs[0];
        a->headline_severity = r->severity;
        if (strcmp(r->id, "straggler") == 0) {
            const tl_straggler *s = NULL;
            for (int i = 0; i < a->nstragglers && s == NULL; i++)
                if (a->stragglers[i].rank == r->rank)
                    s = &a->stragglers[i];
            int len = 0;
            if (s != NULL && strcmp(s->kind, "compute") == 0) {
                const tl_rank_result *rr = NULL;
                for (size_t i = 0; i < a->nranks; i++)
                    if (a->ranks[i].rank == s->rank)
                        rr = &a->ranks[i];
                int gpu = rr != NULL && rr->nsteps > 0 && rr->steps[0].compute_ns > 0;
                len = snprintf(buf, sizeof buf,
                               "Rank %d is a straggler: its %s is %s above the other ranks' median on average, "
                               "slower in %d of %d comparable steps (%s vs %s)",
                               s->rank, gpu ? "GPU compute per step" : "step time", TL_PCT_WHOLE(s->delta_pct),
                               s->slower, s->units, TL_DUR(s->value), TL_DUR(s->others_median));
                if (s->nitems > 0 && len > 0 && (size_t)len < sizeof buf)
                    len += snprintf(buf + len, sizeof buf - (size_t)len, ", %s %.120s (+%s per step)",
                                    tl_straggler_lead(s), s->items[0].name, TL_DUR(s->items[0].delta_ns));
            } else if (s != NULL) {
                len = waits_sentence(a, buf, sizeof buf, s);
            } else {
                len = snprintf(buf, sizeof buf, "%s", r->finding);
            }
            if (len > 0 && (size_t)len + 1 < sizeof buf && buf[len - 1] != '.')
                snprintf(buf + len, sizeof buf - (size_t)len, ".");
            a->headline = strdup(buf);
        } else if (!strcmp(r->id, "low-gpu-utilization") && idle_cause(a, r->severity) != NULL) {
            symptom_and_cause(buf, sizeof buf, r, idle_cause(a, r->severity));
            a->headline = strdup(buf);
        } else {
            a->headline = strdup(r->finding);
        }
        return;
    }
    /* Nothing wrong: say what the run looks like, calmly -- unless no rule
     * could look (two kineto-docs traces with 110 ns of GPU work, no steps,
     * no sections): "no problem found" would claim a look that was not taken. */
    a->headline_severity = "ok";
    const tl_across *st = tl_aggregate_across(a, "step_time_ns"), *idle = tl_aggregate_across(a, "gpu.idle_pct");
    int judged = a->nrecs > 0 || rules_skipped(a) < NRULES;
    int len = snprintf(buf, sizeof buf, "%s in %zu %s", judged ? "No problem found" : "Too little to judge", a->nranks,
                       ranks_word(a));
    if (st != NULL && len > 0 && (size_t)len < sizeof buf) {
        len += snprintf(buf + len, sizeof buf - (size_t)len, ": mean step time %s", TL_DUR(st->mean));
        double gpu_mean = step_mean_with_compute(a);
        if (gpu_mean > 1.05 * st->mean && len > 0 && (size_t)len < sizeof buf)
            len += snprintf(buf + len, sizeof buf - (size_t)len,
                            " on the host, %s counting the GPU compute each "
                            "step launched",
                            TL_DUR(gpu_mean));
    }
    if (idle != NULL && any_gpu_enough(a) && len > 0 && (size_t)len < sizeof buf)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s GPU busy %s of the kernel time", st ? "," : ":",
                        TL_PCT(100 - idle->mean));
    if (a->nrecs > 0 && len > 0 && (size_t)len < sizeof buf) {
        /* one sentence: the finding goes on in lower case ("; on rank 0, the
         * blocks ..."), unless it opens with a name or an acronym */
        const char *f = a->recs[0].finding;
        int lower = isupper((unsigned char)f[0]) && islower((unsigned char)f[1]);
        len += snprintf(buf + len, sizeof buf - (size_t)len, "; %c%s", lower ? tolower((unsigned char)f[0]) : f[0],
                        f[0] ? f + 1 : "");
    } else if (!judged && len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len,
                 "%s no rule's preconditions hold (see the rules that did not "
                 "apply).",
                 st != NULL ? ";" : ":");
    else if (len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len, ".");
    a->headline = strdup(buf);
}
