/*
 * partial_fields.c - the partial aggregate format as data (partial.h): one
 * table per struct of a session result, in the order the writer writes the
 * keys. render/partial_json.c writes by these tables, read_partial.c reads by
 * them; schema/tally-partial.schema.json says the same in JSON Schema (and
 * test_partial checks that it does).
 *
 * A field's range is what the analysis can hold (partial.h's TL_PARTIAL_MAX_*),
 * or an earlier field of the same struct ("sized" blocks at most "blocks").
 * Fields added after version 1's first release are TL_FF_OPTIONAL with the
 * value an older partial means; enums that older partials wrote as integers
 * are TL_FF_ENUM_INT.
 */
#include "partial.h"

#include <stddef.h>
#include <string.h>

/* How a member is stored, from its type. */
#define CT(m)                                                                                                          \
    _Generic(((ST *)0)->m, int                                                                                         \
             : TL_C_INT, int64_t                                                                                       \
             : TL_C_I64, uint64_t                                                                                      \
             : TL_C_U64, uint32_t                                                                                      \
             : TL_C_U32, uint8_t                                                                                       \
             : TL_C_U8, double                                                                                         \
             : TL_C_DOUBLE)

#define FIELD(k, ty, m, ...)                                                                                           \
    {                                                                                                                  \
        .key = k, .type = ty, .offset = offsetof(ST, m), __VA_ARGS__                                                   \
    }
#define STR(k, m) FIELD(k, TL_F_STR, m, .ctype = TL_C_PTR)
#define STR_NULL(k, m) FIELD(k, TL_F_STR_NULL, m, .ctype = TL_C_PTR, .flags = TL_FF_OPTIONAL)
#define INT(k, m, l, h, ...) FIELD(k, TL_F_INT, m, .ctype = CT(m), .lo = (l), .hi = (h), __VA_ARGS__)
#define OPT_INT(k, m, d, l, h) INT(k, m, l, h, .flags = TL_FF_OPTIONAL, .def = (d))
#define INT_UPTO(k, m, bound) INT(k, m, 0, 0, .hi_key = bound) /* 0 .. an earlier field */
#define NS(k, m) INT(k, m, 0, TL_PARTIAL_MAX_NS)               /* a duration or a sum of them */
#define COUNT(k, m) INT(k, m, 0, TL_PARTIAL_MAX_COUNT)
#define ANY(k, m) INT(k, m, INT64_MIN, INT64_MAX)
#define FLAG(k, m) INT(k, m, 0, 1) /* written 0 or 1 */
#define TS(k, m) FIELD(k, TL_F_TS, m, .ctype = CT(m))
#define TS_NULL(k, m, ...) FIELD(k, TL_F_TS_NULL, m, .ctype = CT(m), .def = INT64_MIN, __VA_ARGS__)
#define NUM(k, m, ...) FIELD(k, TL_F_NUM, m, .ctype = TL_C_DOUBLE, __VA_ARGS__)
#define ENUM(k, m, fn, l, h, ...) FIELD(k, TL_F_ENUM, m, .ctype = CT(m), .name = fn, .lo = (l), .hi = (h), __VA_ARGS__)
/* The offset of an array's count, which must be a size_t (else no _Generic association: an error). */
#define COUNT_OF(n) (offsetof(ST, n) + 0 * sizeof(char[_Generic(((ST *)0)->n, size_t : 1)]))
#define STRINGS(k, m, n, ...) FIELD(k, TL_F_STRINGS, m, .ctype = TL_C_PTR, .count = COUNT_OF(n), __VA_ARGS__)
#define OBJECT(k, m, t, ...) FIELD(k, TL_F_OBJECT, m, .sub = &(t), __VA_ARGS__)
#define ARRAY(k, m, n, t, ...)                                                                                         \
    FIELD(k, TL_F_ARRAY, m, .ctype = TL_C_PTR, .count = COUNT_OF(n), .sub = &(t), __VA_ARGS__)
#define CUSTOM(k, id, ...)                                                                                             \
    {                                                                                                                  \
        .key = k, .type = TL_F_CUSTOM, .custom = id, __VA_ARGS__                                                       \
    }
#define TABLE(name, what, st, is_tuple, chk)                                                                           \
    const tl_fields name = { what, name##_f, sizeof name##_f / sizeof name##_f[0], sizeof(st), is_tuple, chk }

#define OPT .flags = TL_FF_OPTIONAL

int64_t tl_field_int(const void *base, const tl_field *f)
{
    const char *p = (const char *)base + f->offset;
    switch (f->ctype) {
    case TL_C_INT:
        return *(const int *)p;
    case TL_C_I64:
        return *(const int64_t *)p;
    case TL_C_U64:
        return (int64_t) * (const uint64_t *)p;
    case TL_C_U32:
        return *(const uint32_t *)p;
    case TL_C_U8:
        return *(const uint8_t *)p;
    default:
        return 0;
    }
}

void tl_field_set_int(void *base, const tl_field *f, int64_t v)
{
    char *p = (char *)base + f->offset;
    switch (f->ctype) {
    case TL_C_INT:
        *(int *)p = (int)v;
        break;
    case TL_C_I64:
        *(int64_t *)p = v;
        break;
    case TL_C_U64:
        *(uint64_t *)p = (uint64_t)v;
        break;
    case TL_C_U32:
        *(uint32_t *)p = (uint32_t)v;
        break;
    case TL_C_U8:
        *(uint8_t *)p = (uint8_t)v;
        break;
    default:
        break;
    }
}

void tl_field_set_ptr(void *base, size_t offset, void *v)
{
    memcpy((char *)base + offset, &v, sizeof v);
}

const char *tl_partial_window_name(int whole_trace)
{
    return whole_trace == 0 ? "profiler-steps" : whole_trace == 1 ? "whole-trace" : NULL;
}

/* ---- the partial's "options" -------------------------------------------------- */
#define ST tl_partial
static const tl_field options_f[] = {
    ENUM("window", whole_trace, tl_partial_window_name, 0, 1),
    NS("kernel_wait_ns", kernel_wait_ns),
    FIELD("kernel_classes", TL_F_STR_NULL, kernel_classes, .ctype = TL_C_PTR,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    /* the read bounds, 0 when the default (tl_partial_options_of) */
    INT("max_names", max_names, 0, UINT32_MAX, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = 0),
    INT("max_events", max_events, 0, INT64_MAX, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = 0),
    INT("max_input_bytes", max_input_bytes, 0, INT64_MAX, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = 0),
};
#undef ST
const tl_fields tl_partial_options_fields = { "options",          options_f, sizeof options_f / sizeof options_f[0],
                                              sizeof(tl_partial), 0,         TL_FK_NONE };

/* ---- statistics of a name or kernel (stats.h's tl_dur_stat) ---------------------- */
#define ST tl_dur_stat
static const tl_field stat_f_f[] = {
    COUNT("count", count),
    NS("total", total),
    NS("min", min),
    NS("max", max),
    NUM("mean", mean),
    NUM("m2", m2),
    CUSTOM("hist", TL_FC_STAT_HIST),
    CUSTOM("samples", TL_FC_STAT_SAMPLES),
    COUNT("samples_dropped", samples_dropped),
};
#undef ST
static TABLE(stat_f, "stat", tl_dur_stat, 0, TL_FK_STAT);

#define ST tl_sname
static const tl_field name_f_f[] = {
    ENUM("group", group, tl_group_name, 0, TL_GROUP_COUNT - 1, .flags = TL_FF_ENUM_INT),
    STR("name", name),
    FLAG("exact", exact),
    NUM("median_ns", median_ns),
    NUM("p95_ns", p95_ns),
    NUM("std_ns", std_ns),
    OPT_INT("incl_ns", incl_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("self_ns", self_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OBJECT("stat", d, stat_f),
    OPT_INT("threads", threads, 0, 0, 64),
};
#undef ST
static TABLE(name_f, "name", tl_sname, 0, TL_FK_NONE);

#define ST tl_skernel
static const tl_field kernel_f_f[] = {
    STR("name", name),
    ENUM("type", type, tl_kernel_type_name, 0, TL_KT_COUNT - 1, .flags = TL_FF_ENUM_INT),
    OBJECT("stat", d, stat_f),
};
#undef ST
static TABLE(kernel_f, "kernel", tl_skernel, 0, TL_FK_NONE);

/* [number, dur_ns, compute_ns, ts_ns, partial] */
#define ST tl_sstep
static const tl_field step_f_f[] = {
    ANY("number", number),
    NS("dur_ns", dur_ns),
    INT("compute_ns", compute_ns, -1, TL_PARTIAL_MAX_NS),
    TS("ts_ns", ts_ns),
    OPT_INT("partial", partial, 0, 0, 1),
};
#undef ST
static TABLE(step_f, "step", tl_sstep, 1, TL_FK_NONE);

/* The time of a span by category (tl_stepcat), in tl_stepcat's order: a
 * step's and a collective instance's window share it. */
#define STEPCAT_FIELDS                                                                                                 \
    NS("kernel", ns[TL_SC_KERNEL]), NS("memcpy", ns[TL_SC_MEMCPY]), NS("memset", ns[TL_SC_MEMSET]),                    \
        NS("communication", ns[TL_SC_COMM]), NS("runtime", ns[TL_SC_RUNTIME]), NS("data_loading", ns[TL_SC_DATA]),     \
        NS("cpu_exec", ns[TL_SC_CPU]), NS("other", ns[TL_SC_OTHER])

/* [number, kernel, memcpy, memset, communication, runtime, data_loading, cpu_exec, other] */
#define ST tl_sstepcat
static const tl_field stepcat_f_f[] = {
    ANY("number", number),
    STEPCAT_FIELDS,
};
#undef ST
static TABLE(stepcat_f, "step_category", tl_sstepcat, 1, TL_FK_NONE);

/* [name, op, ops, op_ns, linked_ns, grid x, y, z, block x, y, z, regs, smem, occupancy, varies] */
#define ST tl_skinfo
static const tl_field kinfo_f_f[] = {
    STR("name", name),
    FIELD("op", TL_F_STR_NULL, op, .ctype = TL_C_PTR), /* null: unknown (not optional: mid-tuple) */
    COUNT("ops", ops),
    NS("op_ns", op_ns),
    NS("linked_ns", linked_ns),
    INT("grid_x", grid[0], -1, INT32_MAX),
    INT("grid_y", grid[1], -1, INT32_MAX),
    INT("grid_z", grid[2], -1, INT32_MAX),
    INT("block_x", block[0], -1, INT32_MAX),
    INT("block_y", block[1], -1, INT32_MAX),
    INT("block_z", block[2], -1, INT32_MAX),
    INT("registers", regs, -1, 1000000),
    INT("shared_memory", smem, -1, 1000000000000LL),
    NUM("occupancy_pct", occupancy),
    FLAG("varies", varies),
};
#undef ST
static TABLE(kinfo_f, "kernel_launch", tl_skinfo, 1, TL_FK_NONE);

/* [instance, kernel, memcpy, memset, communication, runtime, data_loading, cpu_exec, other] */
#define ST tl_sstepcat
static const tl_field collwin_f_f[] = {
    INT("instance", number, 0, TL_PROFILE_MAX_COLLS - 1),
    STEPCAT_FIELDS,
};
#undef ST
static TABLE(collwin_f, "collective_window", tl_sstepcat, 1, TL_FK_NONE);

/* ---- the GPU breakdown --------------------------------------------------------- */

/* [device, stream, host_wait, kernel_wait, other, gaps, busy, host_gaps, host_part, comm_busy] */
#define ST tl_stream_idle
static const tl_field stream_f_f[] = {
    ANY("device", device),
    ANY("stream", stream),
    NS("host_wait", host_wait),
    NS("kernel_wait", kernel_wait),
    NS("other", other),
    COUNT("gaps", gaps),
    OPT_INT("busy", busy, 0, 0, TL_PARTIAL_MAX_NS),
    OPT_INT("host_gaps", host_gaps, 0, 0, TL_PARTIAL_MAX_COUNT),
    OPT_INT("host_part", host_part, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("comm_busy", comm_busy, -1, -1, TL_PARTIAL_MAX_NS),
};
#undef ST
static TABLE(stream_f, "stream", tl_stream_idle, 1, TL_FK_NONE);

#define ST tl_gpu_breakdown
static const tl_field gpu_f_f[] = {
    FLAG("present", present),
    FLAG("whole_trace", whole_trace),
    INT("steps_in_window", steps_in_window, 0, INT32_MAX),
    TS("window_start", window_start),
    TS("window_end", window_end),
    COUNT("events", events),
    NS("kernel_time", kernel_time),
    NS("busy", busy),
    NS("idle", idle),
    NS("compute", compute),
    NS("non_compute", non_compute),
    NS("comm", comm),
    NS("comm_compute", comm_compute),
    CUSTOM("by_mask", TL_FC_GPU_BY_MASK),
    ARRAY("streams", streams, nstreams, stream_f),
    OPT_INT("blocked_idle", blocked_idle, 0, 0, TL_PARTIAL_MAX_NS),
    FIELD("blocking_call", TL_F_STR_BUF, blocking_call, .ctype = TL_C_CHARS, .size = sizeof(((ST *)0)->blocking_call),
          OPT),
    OPT_INT("blocking_call_ns", blocking_call_ns, 0, 0, TL_PARTIAL_MAX_NS),
    OPT_INT("host_gap_ns", host_gap_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("host_short_ns", host_short_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("host_coll_ns", host_coll_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("host_load_ns", host_load_ns, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("queued_idle", queued_idle, -1, -1, TL_PARTIAL_MAX_NS),
    OPT_INT("devices", devices, 0, 0, 1024),
};
#undef ST
static TABLE(gpu_f, "gpu", tl_gpu_breakdown, 0, TL_FK_NONE);

/* [kernel index, dur_ns]; the index is checked against the session's kernels */
#define ST tl_collective
static const tl_field coll_f_f[] = {
    INT("kernel", kernel, 0, UINT32_MAX),
    NS("dur_ns", dur_ns),
};
#undef ST
static TABLE(coll_f, "collective", tl_collective, 1, TL_FK_NONE);

/* [name, side, ts_ns, dur_ns, seq, nelems, group, elem_bytes, group_size] */
#define ST tl_scoll
static const tl_field inst_f_f[] = {
    INT("name", name, 0, TL_SESSION_MAX_COLL_NAMES - 1),
    INT("side", side, 0, TL_COLL_SIDES - 1),
    TS("ts_ns", ts_ns),
    NS("dur_ns", dur_ns),
    INT("seq", seq, -1, INT64_MAX),
    INT("nelems", nelems, -1, INT64_MAX),
    INT("group", group, -1, TL_SESSION_MAX_COLL_NAMES - 1),
    OPT_INT("elem_bytes", elem_bytes, -1, -1, 64),
    OPT_INT("group_size", group_size, -1, -1, TL_PARTIAL_MAX_RANK),
};
#undef ST
static TABLE(inst_f, "collective_instance", tl_scoll, 1, TL_FK_NONE);

#define ST tl_ssnap
static const tl_field snap_f_f[] = {
    STR("label", label),
    NUM("allocated", allocated),
    NUM("reserved", reserved),
    NUM("peak_allocated", peak_allocated),
    NUM("rss", rss),
    NUM("device_used", device_used, OPT),
    TS_NULL("ts_ns", ts_ns, OPT),
};
#undef ST
static TABLE(snap_f, "snapshot", tl_ssnap, 0, TL_FK_NONE);

/* ---- the timeline ------------------------------------------------------------ */
#define ST tl_lane
static const tl_field lane_f_f[] = {
    ENUM("kind", kind, tl_lane_kind_name, TL_LANE_GPU, TL_LANE_CPU, .flags = TL_FF_ENUM_INT),
    ANY("a", a),
    ANY("b", b),
    STR("label", label),
    CUSTOM("busy", TL_FC_LANE_BUSY),
    CUSTOM("calls", TL_FC_LANE_CALLS, OPT),
};
#undef ST
static TABLE(lane_f, "lane", tl_lane, 0, TL_FK_NONE);

#define ST tl_timeline
static const tl_field timeline_f_f[] = {
    INT("start_ns", start_ns, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
    INT("end_ns", end_ns, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
    ARRAY("lanes", lanes, nlanes, lane_f, .max = TL_TIMELINE_MAX_LANES),
    CUSTOM("names", TL_FC_TIMELINE_NAMES, OPT),
};
#undef ST
static TABLE(timeline_f, "timeline", tl_timeline, 0, TL_FK_TIMELINE);

/* [ts_ns, allocated, reserved] */
#define ST tl_mem_sample
static const tl_field mem_f_f[] = {
    INT("ts_ns", ts_ns, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
    NUM("allocated", allocated),
    NUM("reserved", reserved),
};
#undef ST
static TABLE(mem_f, "memory sample", tl_mem_sample, 1, TL_FK_NONE);

/* [id, name, total_memory] */
#define ST tl_sdevice
static const tl_field device_f_f[] = {
    INT("id", id, -1, TL_PARTIAL_MAX_RANK),
    STR("name", name),
    NUM("total_memory", total_memory),
};
#undef ST
static TABLE(device_f, "device", tl_sdevice, 1, TL_FK_NONE);

/* [id, peak_allocated, peak_reserved, peak_used] */
#define ST tl_sdevmem
static const tl_field devmem_f_f[] = {
    INT("id", id, -1, TL_PARTIAL_MAX_RANK),
    NUM("peak_allocated", peak_allocated),
    NUM("peak_reserved", peak_reserved),
    NUM("peak_used", peak_used),
};
#undef ST
static TABLE(devmem_f, "devmem", tl_sdevmem, 1, TL_FK_NONE);

#define ST tl_tseries
static const tl_field series_f_f[] = {
    ENUM("series", kind, tl_series_kind_name, 0, TL_SERIES_COUNT - 1),
    INT("device", device, -1, TL_PARTIAL_MAX_RANK),
    INT("n", n, 1, TL_PARTIAL_MAX_COUNT),
    INT("start_ns", start_ns, -TL_PARTIAL_MAX_TS, TL_PARTIAL_MAX_TS),
    INT("end_ns", end_ns, 0, TL_PARTIAL_MAX_TS, .lo_key = "start_ns"),
    NUM("min", min),
    NUM("max", max),
    NUM("mean", mean),
    NUM("energy_j", energy_j),
    CUSTOM("bins", TL_FC_SERIES_BINS),
};
#undef ST
static TABLE(series_f, "telemetry series", tl_tseries, 0, TL_FK_NONE);

/* ---- besides the timings: events, counters, the host, diffusion, health, growth -- */

/* [ts_ns | null, name, payload] */
#define ST tl_sevent
static const tl_field event_f_f[] = {
    TS_NULL("ts_ns", ts_ns),
    STR("name", name),
    STR("payload", payload),
};
#undef ST
static TABLE(event_f, "event", tl_sevent, 1, TL_FK_NONE);

/* [name, source, count, min, mean, max]: only the program's own counters are kept */
#define ST tl_scounter
static const tl_field counter_f_f[] = {
    STR("name", name),
    ENUM("source", source, tl_counter_source_name, TL_COUNTER_USER, TL_COUNTER_RATE, .flags = TL_FF_ENUM_INT),
    INT("count", count, 1, TL_PARTIAL_MAX_COUNT),
    NUM("min", min),
    NUM("mean", mean),
    NUM("max", max),
};
#undef ST
static TABLE(counter_f, "counter", tl_scounter, 1, TL_FK_NONE);

#define ST tl_ssystem
static const tl_field system_f_f[] = {
    STR_NULL("hostname", hostname),
    STR_NULL("os", os),
    INT("cpus", cpus, 0, 1 << 24),
    NUM("memory_bytes", memory_bytes, .flags = TL_FF_POSITIVE),
};
#undef ST
static TABLE(system_f, "system", tl_ssystem, 0, TL_FK_NONE);

/* null when there are no blocks, steps or layers (TL_FF_PRESENCE) */
#define ST tl_sdiffusion
static const tl_field diffusion_f_f[] = {
    INT("blocks", blocks, 0, TL_PARTIAL_MAX_COUNT, .flags = TL_FF_PRESENCE),
    INT_UPTO("sized", sized, "blocks"),
    NUM("frames", frames),
    NUM("size_min", size_min),
    NUM("size_max", size_max),
    NS("block_ns", block_ns),
    INT_UPTO("sized_ns", sized_ns, "block_ns"),
    INT("first_block_ns", first_block_ns, -1, TL_PARTIAL_MAX_NS),
    INT("later_median_ns", later_median_ns, -1, TL_PARTIAL_MAX_NS),
    INT("steps", steps, 0, TL_PARTIAL_MAX_COUNT, .flags = TL_FF_PRESENCE),
    NS("step_ns", step_ns),
    INT("layers", layers, 0, INT32_MAX, .flags = TL_FF_PRESENCE),
    NS("layers_ns", layers_ns),
    STR_NULL("top_layer", top_layer),
    INT_UPTO("top_layer_ns", top_layer_ns, "layers_ns"),
    NUM("block_memory_peak", mem_peak, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    NUM("block_rss_peak", rss_peak, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
};
#undef ST
static TABLE(diffusion_f, "diffusion", tl_sdiffusion, 0, TL_FK_DIFFUSION);

/* [device, temp_n, hot_n, hot_ns, temp_max, power_n, cap_n, power_limit_w,
 *  power_max, reasons_n, thermal_n, power_throttle_n] */
#define ST tl_shealth
static const tl_field health_f_f[] = {
    INT("device", device, -1, TL_PARTIAL_MAX_RANK),
    COUNT("temp_n", temp_n),
    INT_UPTO("hot_n", hot_n, "temp_n"),
    NS("hot_ns", hot_ns),
    NUM("temp_max", temp_max),
    COUNT("power_n", power_n),
    INT_UPTO("cap_n", cap_n, "power_n"),
    NUM("power_limit_w", power_limit_w),
    NUM("power_max", power_max),
    COUNT("reasons_n", reasons_n),
    INT_UPTO("thermal_n", thermal_n, "reasons_n"),
    INT_UPTO("power_throttle_n", power_throttle_n, "reasons_n"),
};
#undef ST
static TABLE(health_f, "health", tl_shealth, 1, TL_FK_NONE);

/* [device, n, slow_n, slow_reason_n, base_mhz, min_mhz] (issue 36) */
#define ST tl_sclock
static const tl_field clock_f_f[] = {
    INT("device", device, -1, TL_PARTIAL_MAX_RANK),
    COUNT("n", n),
    INT_UPTO("slow_n", slow_n, "n"),
    INT_UPTO("slow_reason_n", slow_reason_n, "slow_n"),
    NUM("base_mhz", base_mhz),
    NUM("min_mhz", min_mhz),
};
#undef ST
static TABLE(clock_f, "clock", tl_sclock, 1, TL_FK_NONE);

/* [what, metric, n, drops, first, last, max, span_ns, max_rise] */
#define ST tl_sgrowth
static const tl_field growth_f_f[] = {
    STR("what", what),
    ENUM("metric", metric, tl_growth_metric_name, 0, TL_GROWTH_COUNT - 1, .flags = TL_FF_ENUM_INT),
    INT("n", n, TL_GROWTH_MIN_REPEATS, INT32_MAX),
    INT_UPTO("drops", drops, "n"),
    NUM("first", first),
    NUM("last", last),
    NUM("max", max),
    INT("span_ns", span_ns, -1, TL_PARTIAL_MAX_NS),
    NUM("max_rise", max_rise, OPT),
};
#undef ST
static TABLE(growth_f, "growth", tl_sgrowth, 1, TL_FK_NONE);

/* [name, dims, types, count, total_ns, min_ns, max_ns, flops, flops_n, gpu_ns, kernels] */
#define ST tl_sshape
static const tl_field shape_f_f[] = {
    STR("name", name),
    STR("dims", dims),
    STR("types", types),
    INT("count", count, 1, TL_PARTIAL_MAX_COUNT),
    NS("total_ns", total_ns),
    NS("min_ns", min_ns),
    NS("max_ns", max_ns),
    NUM("flops", flops),
    INT_UPTO("flops_n", flops_n, "count"),
    NS("gpu_ns", gpu_ns),
    COUNT("kernels", kernels),
};
#undef ST
static TABLE(shape_f, "shape", tl_sshape, 1, TL_FK_NONE);

/* [name, allocs, bytes, peak_bytes]: device memory by operator (mem_ops.h) */
#define ST tl_smemop
static const tl_field memop_f_f[] = {
    STR("name", name),
    COUNT("allocs", allocs),
    INT("bytes", bytes, 0, INT64_MAX),
    INT("peak_bytes", peak_bytes, -1, INT64_MAX),
};
#undef ST
static TABLE(memop_f, "memop", tl_smemop, 1, TL_FK_NONE);

/* [ts_ns, PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT,
 * AUTOGRAD_DETAIL, UNKNOWN]: a memory timeline's bytes by category at a time
 * (read_mem_timeline.h); a category's bytes may be below 0 (freed unseen) */
#define ST tl_memcat_point
static const tl_field memcat_f_f[] = {
    TS("ts_ns", ts_ns),        ANY("parameter", bytes[0]),       ANY("optimizer_state", bytes[1]),
    ANY("input", bytes[2]),    ANY("temporary", bytes[3]),       ANY("activation", bytes[4]),
    ANY("gradient", bytes[5]), ANY("autograd_detail", bytes[6]), ANY("unknown", bytes[7]),
};
#undef ST
static TABLE(memcat_f, "memcat", tl_memcat_point, 1, TL_FK_NONE);
_Static_assert(TL_MEM_CATEGORIES == 8, "memcat_f has a field per category");

/* ---- the session ----------------------------------------------------------------- */
#define ST tl_session
static const tl_field session_f[] = {
    /* the identity (identity.h): run and session are settled again over
     * every session read (tl_sessions_settle), so they are not written */
    STR("path", id.path),
    ENUM("format", id.format, tl_format_name, TL_FMT_UNKNOWN, TL_FMT_FRAMEPACK_MEMLOG, .flags = TL_FF_ENUM_INT),
    INT("rank", id.rank, -1, TL_PARTIAL_MAX_RANK),
    INT("world_size", id.world_size, 0, TL_PARTIAL_MAX_RANK),
    ENUM("rank_source", id.rank_source, tl_rank_source_name, TL_RANK_UNKNOWN, TL_RANK_ORDER, .flags = TL_FF_ENUM_INT),
    STR("rank_detail", id.rank_detail),
    TS("start_ns", start_ns),
    INT("span_ns", span_ns, -1, TL_PARTIAL_MAX_NS),
    FLAG("truncated", truncated),
    STR_NULL("companion_of", id.companion_of),
    CUSTOM("warnings", TL_FC_PROBLEMS),
    CUSTOM("offsets", TL_FC_PROBLEM_OFFSETS, OPT),
    ARRAY("names", names, nnames, name_f),
    ARRAY("kernels", kernels, nkernels, kernel_f),
    ARRAY("steps", steps, nsteps, step_f),
    OBJECT("gpu", gpu, gpu_f),
    ARRAY("collectives", colls, ncolls, coll_f, .max = TL_MAX_COLLECTIVES),
    STRINGS("coll_names", coll_names, ncoll_names, .max = TL_SESSION_MAX_COLL_NAMES, OPT),
    ARRAY("coll_instances", insts, ninsts, inst_f, .max = TL_PROFILE_MAX_COLLS, OPT),
    OPT_INT("coll_instances_dropped", insts_dropped, 0, 0, TL_PARTIAL_MAX_COUNT),
    OPT_INT("graph_captures", graph_captures, 0, 0, TL_PARTIAL_MAX_COUNT),
    ARRAY("snapshots", snaps, nsnaps, snap_f),
    OBJECT("timeline", timeline, timeline_f),
    ARRAY("mem", mem, nmem, mem_f, .max = TL_MEM_SERIES),
    STR_NULL("device_name", device_name),
    NUM("peak_allocated", peak_allocated),
    NUM("peak_reserved", peak_reserved),
    NUM("device_total", device_total),
    NUM("peak_rss", peak_rss),
    NUM("peak_device_used", peak_device_used, OPT),
    NUM("gpu_util_mean", gpu_util_mean),
    OPT_INT("abs_time", abs_time, 0, 0, 1),
    OPT_INT("pid", pid, -1, -1, INT64_MAX),
    OPT_INT("graph_launches", graph_launches, 0, 0, TL_PARTIAL_MAX_COUNT),
    ARRAY("devices", devices, ndevices, device_f, .max = TL_SESSION_MAX_DEVICES, OPT),
    ARRAY("telemetry", series, nseries, series_f, .max = TL_SERIES_MAX, OPT),
    OPT_INT("events_total", events_total, 0, 0, TL_PARTIAL_MAX_COUNT),
    ARRAY("events", events, nevents, event_f, .max = TL_SESSION_MAX_EVENTS, .max_key = "events_total", OPT),
    STRINGS("tags", tags, ntags, .max = TL_SESSION_MAX_TAGS, OPT),
    OPT_INT("counters_total", counters_total, 0, 0, TL_PARTIAL_MAX_COUNT),
    ARRAY("counters", counters, ncounters, counter_f, .max = TL_SESSION_MAX_COUNTERS, .max_key = "counters_total", OPT),
    OBJECT("system", sys, system_f, OPT),
    OBJECT("diffusion", diff, diffusion_f, .flags = TL_FF_OPTIONAL | TL_FF_NULLABLE),
    ARRAY("health", health, nhealth, health_f, .max = TL_SESSION_MAX_DEVICES, OPT),
    /* optional, omitted when empty: partials without it keep their bytes */
    ARRAY("clocks", clocks, nclocks, clock_f, .max = TL_SESSION_MAX_DEVICES,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    ARRAY("devmem", devmem, ndevmem, devmem_f, .max = TL_SESSION_MAX_DEVICES,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    ARRAY("growth", growth, ngrowth, growth_f, .max = TL_SESSION_MAX_GROWTH, OPT),
    CUSTOM("calltree", TL_FC_CALLTREE, OPT),
    ARRAY("shapes", shapes, nshapes, shape_f, .max = TL_SESSION_MAX_SHAPES, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    INT("shapes_dropped_keys", shapes_dropped_keys, 0, TL_PARTIAL_MAX_COUNT, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY,
        .def = 0),
    INT("shapes_dropped_calls", shapes_dropped_calls, 0, TL_PARTIAL_MAX_COUNT,
        .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = 0),
    /* each step's time by category (stepcats.c), one per step */
    ARRAY("step_categories", stepcats, nstepcats, stepcat_f, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    INT("step_categories_cut", stepcats_cut, 0, 1, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = 0),
    /* device memory by operator (mem_ops.h), by bytes allocated */
    ARRAY("mem_ops", memops, nmemops, memop_f, .max = TL_SESSION_MAX_MEMOPS,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    INT("mem_ops_dropped", memops_dropped, 0, TL_PARTIAL_MAX_COUNT, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY,
        .def = 0),
    INT("mem_ops_peak", memops_peak, -1, INT64_MAX, .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY, .def = -1),
    /* each kernel's launching operator and launch configuration (kernel_ops.h) */
    ARRAY("kernel_launches", kinfo, nkinfo, kinfo_f, .max = TL_SESSION_MAX_KINFO,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    /* each collective instance's window by category (stepcats.c), by instance */
    ARRAY("coll_windows", coll_windows, ncoll_windows, collwin_f, .max = TL_PROFILE_MAX_COLLS,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    /* a memory timeline's bytes by category over time (read_mem_timeline.h), downsampled */
    ARRAY("mem_categories", memcats, nmemcats, memcat_f, .max = TL_MEMCAT_POINTS,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
};
/* A session's bulk (session.h, tl_session_release_bulk): the fields above that
 * analyze/spill.h writes to disk and reads back, described once. */
static const tl_field session_bulk_f[] = {
    ARRAY("names", names, nnames, name_f),
    ARRAY("kernels", kernels, nkernels, kernel_f),
    OBJECT("timeline", timeline, timeline_f),
    CUSTOM("calltree", TL_FC_CALLTREE, OPT),
    ARRAY("kernel_launches", kinfo, nkinfo, kinfo_f, .max = TL_SESSION_MAX_KINFO,
          .flags = TL_FF_OPTIONAL | TL_FF_OMIT_EMPTY),
    ARRAY("mem", mem, nmem, mem_f, .max = TL_MEM_SERIES),
};
#undef ST
const tl_fields tl_partial_session_fields = { "session",          session_f, sizeof session_f / sizeof session_f[0],
                                              sizeof(tl_session), 0,         TL_FK_SESSION };
const tl_fields tl_partial_session_bulk_fields = {
    "session bulk", session_bulk_f, sizeof session_bulk_f / sizeof session_bulk_f[0], sizeof(tl_session), 0,
    TL_FK_SESSION
};
