/*
 * test_sampler.c - the background sampler end to end (lib/sampler.c, issue
 * 36): tally_current(), each part's own period, the readings chosen
 * (TALLY_SAMPLE) and the devices (TALLY_GPUS), the disk rate from a fake
 * /proc (TALLY_PROC_ROOT), the clocks from the fake NVML, the point budget
 * and its decimation, the message when NVML is absent, presets in a real
 * run, and TALLY_FLUSH_S.
 *
 * Each scenario runs in a forked child (collector_test_util.h); the child
 * checks what only it can see (tally_current) with TT_REQUIRE, the test
 * reads the report.
 */
#include "collector_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "tally/tally.h"

#define GIB (1024.0 * 1024 * 1024)
#define MIB (1024.0 * 1024)

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int body_wait(void *arg)
{
    long ms = arg ? *(const long *)arg : 200;
    tally_begin("work");
    sleep_ms(ms);
    tally_end();
    return 0;
}

/* ---- tally_current ---------------------------------------------------------- */

/* Before init: ESTATE. With the sampler: the fake NVML's numbers and the host
 * readings, with a sequence that grows; the copy never waits. */
static int body_current(void *arg)
{
    (void)arg;
    tally_reading r;
    TT_REQUIRE(tally_current(NULL) == TALLY_EINVAL);
    TT_REQUIRE(tally_current(&r) == TALLY_ESTATE);
    tally_begin("work");
    tally_end(); /* initialized now */
    int rc;
    for (int i = 0; i < 400 && (rc = tally_current(&r)) == TALLY_ENOENT; i++)
        sleep_ms(5);
    TT_REQUIRE(rc == 0);
    TT_REQUIRE(r.sequence >= 1);
    TT_REQUIRE((r.valid & (TALLY_READING_CPU | TALLY_READING_MEMORY | TALLY_READING_LOAD | TALLY_READING_GPU)) ==
               (TALLY_READING_CPU | TALLY_READING_MEMORY | TALLY_READING_LOAD | TALLY_READING_GPU));
    TT_REQUIRE(r.rss_bytes > 1e5);
    TT_REQUIRE(r.time_unix_ns > 1600000000LL * 1000000000LL);
    TT_REQUIRE(r.host_time_unix_ns > 0 && r.gpu_time_unix_ns > 0);
    TT_REQUIRE(r.ngpus == 2);
    for (int g = 0; g < 2; g++) {
        const tally_gpu_reading *x = &r.gpus[g];
        TT_REQUIRE(x->index == g);
        TT_REQUIRE(x->valid & TALLY_GPU_UTIL && x->utilization_pct == 75);
        TT_REQUIRE(x->valid & TALLY_GPU_MEMORY && x->used_bytes == (g + 1) * 10 * GIB);
        TT_REQUIRE(x->total_bytes == 80 * GIB);
        TT_REQUIRE(x->valid & TALLY_GPU_TEMP && x->temperature_c == 60);
        TT_REQUIRE(x->valid & TALLY_GPU_POWER && x->power_w == 300);
        TT_REQUIRE(x->valid & TALLY_GPU_LIMIT && x->power_limit_w == 400);
        TT_REQUIRE(x->valid & TALLY_GPU_CLOCKS && x->sm_clock_mhz == 1410 && x->memory_clock_mhz == 1593);
        TT_REQUIRE(x->valid & TALLY_GPU_BASE_CLOCK && x->base_sm_clock_mhz == 1095);
        TT_REQUIRE(x->valid & TALLY_GPU_THROTTLE && x->throttle_reasons == 0);
        TT_REQUIRE(!(x->valid & TALLY_GPU_PROCESS));
    }
    uint64_t first = r.sequence;
    sleep_ms(100);
    TT_REQUIRE(tally_current(&r) == 0);
    TT_REQUIRE(r.sequence > first);
    /* the cost: a copy, no waiting (1000 calls well under the sampler's 10 ms) */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 1000; i++)
        TT_REQUIRE(tally_current(&r) == 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("tally_current: %.0f ns a call\n", ns / 1000);
    TT_REQUIRE(ns / 1000 < 50000);
    tally_shutdown();
    TT_REQUIRE(tally_current(&r) == 0); /* the last reading stays readable */
    return 0;
}

static void test_current(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_current, NULL), 0);
    assert_string_equal(s.err, "");
    tt_end(&s);
}

/* The sampler off: ENOENT with *out zeroed; disabled: ESTATE. */
static int body_current_off(void *arg)
{
    (void)arg;
    tally_reading r;
    memset(&r, 0xff, sizeof r);
    tally_begin("work");
    tally_end();
    int want = tally_enabled() ? TALLY_ENOENT : TALLY_ESTATE;
    TT_REQUIRE(tally_current(&r) == want);
    TT_REQUIRE(r.valid == 0 && r.sequence == 0 && r.ngpus == 0);
    return 0;
}

static void test_current_without_sampler(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_current_off, NULL), 0);
    tt_end(&s);
    const char *off[] = { "TALLY_ENABLE=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, off, body_current_off, NULL), 0);
    tt_end(&s);
}

/* ---- periods, readings, devices ------------------------------------------- */

static size_t count_with(json_t *series, const char *key)
{
    size_t i, n = 0;
    json_t *pt;
    json_array_foreach(series, i, pt) n += json_object_get(pt, key) != NULL;
    return n;
}

/* GPU every 10 ms, host every 60 ms: about six GPU points a host point. */
static void test_two_periods(void **state)
{
    (void)state;
    tt_scenario s;
    long ms = 600;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_GPU_MS=10", "TALLY_SAMPLE_CPU_MS=60",
                          NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *cfg = json_object_get(r, "config");
    assert_int_equal(tt_int(cfg, "sample_gpu_ms"), 10);
    assert_int_equal(tt_int(cfg, "sample_cpu_ms"), 60);
    assert_string_equal(tt_str(cfg, "sample"), "gpu,cpu,memory,disk,load");
    json_t *sp = json_object_get(r, "sampler");
    assert_int_equal(tt_int(sp, "gpu_interval_ms"), 10);
    assert_int_equal(tt_int(sp, "host_interval_ms"), 60);
    assert_int_equal(tt_int(sp, "interval_ms"), 60);
    json_t *series = json_object_get(sp, "series");
    size_t gpu = count_with(series, "gpus"), host = count_with(series, "cpu_pct");
    if (!(host >= 3 && gpu >= 3 * host && gpu <= 8 * host))
        fail_msg("%zu GPU points and %zu host points in 600 ms (periods 10 and 60 ms)", gpu, host);
    assert_int_equal(count_with(series, "rss_bytes"), host);
    assert_int_equal(count_with(series, "load1"), host);
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args)); /* the schema, and the trace's counters per point */
    tt_end(&s);
}

/* TALLY_SAMPLE=cpu,disk and TALLY_GPUS=1: only those readings, only GPU 1. */
static void test_readings_and_devices(void **state)
{
    (void)state;
    tt_scenario s;
    long ms = 200;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "TALLY_SAMPLE=cpu,disk", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sp = json_object_get(r, "sampler");
    assert_string_equal(tt_str(sp, "readings"), "cpu,disk");
    assert_int_equal(tt_int(sp, "gpu_interval_ms"), 0); /* the GPU part is off */
    json_t *series = json_object_get(sp, "series");
    size_t n = json_array_size(series);
    assert_true(n >= 3);
    assert_int_equal(count_with(series, "cpu_pct"), n);
    assert_int_equal(count_with(series, "rss_bytes"), 0);
    assert_int_equal(count_with(series, "load1"), 0);
    assert_int_equal(count_with(series, "gpus"), 0);
    json_decref(r);
    tt_end(&s);

    const char *one[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "TALLY_GPUS=1", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, one, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    r = tt_load_json(tt_report(&s, "t-rank0"));
    sp = json_object_get(r, "sampler");
    assert_string_equal(tt_str(sp, "gpus"), "1");
    series = json_object_get(sp, "series");
    size_t i;
    json_t *pt;
    json_array_foreach(series, i, pt)
    {
        json_t *gpus = json_object_get(pt, "gpus");
        assert_int_equal(json_array_size(gpus), 1);
        json_t *g = json_array_get(gpus, 0);
        assert_int_equal(tt_int(g, "index"), 1);
        assert_true(tt_num(g, "used_bytes") == 20 * GIB);
        assert_true(tt_num(g, "sm_clock_mhz") == 1410);
        assert_true(tt_num(g, "memory_clock_mhz") == 1593);
        assert_true(tt_num(g, "base_sm_clock_mhz") == 1095);
    }
    /* system.gpus lists every device still */
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "system"), "gpus")), 2);
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* ---- disk rates from a fake /proc ----------------------------------------- */

typedef struct disk_arg {
    char io[700]; /* the fake self/io */
} disk_arg;

static int write_io(const char *path, unsigned long long rd, unsigned long long wr)
{
    char tmp[800];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: %llu\nwrite_bytes: %llu\n"
            "cancelled_write_bytes: 0\n",
            rd, wr);
    fclose(f);
    return rename(tmp, path); /* the sampler never reads half a file */
}

/* 1 GiB read in one go after 100 ms, then 256 MiB written: the rates over
 * the points add up to exactly those bytes. */
static int body_disk(void *arg)
{
    const disk_arg *d = arg;
    tally_begin("load_weights");
    sleep_ms(100);
    TT_REQUIRE(write_io(d->io, 1ull << 30, 0) == 0);
    sleep_ms(100);
    TT_REQUIRE(write_io(d->io, 1ull << 30, 256ull << 20) == 0);
    sleep_ms(100);
    tally_reading r;
    TT_REQUIRE(tally_current(&r) == 0);
    TT_REQUIRE(r.valid & TALLY_READING_DISK);
    TT_REQUIRE(r.disk_read_bytes_per_s == 0 && r.disk_write_bytes_per_s == 0); /* nothing since */
    tally_end();
    return 0;
}

static void test_disk_rates(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    disk_arg d;
    char root[600], self[620], envroot[700];
    snprintf(root, sizeof root, "%s/proc", s.base);
    snprintf(self, sizeof self, "%s/self", root);
    assert_int_equal(mkdir(root, 0755), 0);
    assert_int_equal(mkdir(self, 0755), 0);
    snprintf(d.io, sizeof d.io, "%s/io", self);
    assert_int_equal(write_io(d.io, 0, 0), 0);
    snprintf(envroot, sizeof envroot, "TALLY_PROC_ROOT=%s", root);
    const char *env[] = { envroot, "TALLY_SAMPLE_CPU_MS=10", "TALLY_SAMPLE=disk", NULL };
    assert_int_equal(tt_run(&s, env, body_disk, &d), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sp = json_object_get(r, "sampler");
    assert_null(json_object_get(sp, "disk_status"));
    json_t *series = json_object_get(sp, "series");
    size_t n = json_array_size(series);
    assert_true(n >= 10);
    assert_int_equal(count_with(series, "disk_read_bytes_per_s"), n);
    /* rate x the time since the previous point, summed: the bytes. The
     * first point's interval begins at the sampler's start (not in the
     * report), but nothing was read then. */
    double rd = 0, wr = 0, peak = 0;
    for (size_t i = 1; i < n; i++) {
        json_t *a = json_array_get(series, i - 1), *b = json_array_get(series, i);
        double dt = (double)(tt_int(b, "time_ns") - tt_int(a, "time_ns")) / 1e9;
        rd += tt_num(b, "disk_read_bytes_per_s") * dt;
        wr += tt_num(b, "disk_write_bytes_per_s") * dt;
        peak = fmax(peak, tt_num(b, "disk_read_bytes_per_s"));
    }
    assert_true(tt_num(json_array_get(series, 0), "disk_read_bytes_per_s") == 0);
    tt_assert_close(rd, 1024 * MIB, 0.05);
    tt_assert_close(wr, 256 * MIB, 0.05);
    assert_true(peak > 1024 * MIB / 0.1); /* in one point of about 10 ms: above 10 GiB/s */
    json_decref(r);
    tt_end(&s);

    /* no such file: no rates, and the report says why */
    tt_begin(&s);
    const char *none[] = { "TALLY_PROC_ROOT=/nonexistent-proc", "TALLY_SAMPLE_MS=10", NULL };
    long ms = 100;
    assert_int_equal(tt_run(&s, none, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    r = tt_load_json(tt_report(&s, "t-rank0"));
    sp = json_object_get(r, "sampler");
    assert_string_equal(tt_str(sp, "disk_status"), "not sampled: /nonexistent-proc/self/io: No such file or directory");
    assert_int_equal(count_with(json_object_get(sp, "series"), "disk_read_bytes_per_s"), 0);
    assert_true(count_with(json_object_get(sp, "series"), "cpu_pct") >= 3);
    json_decref(r);
    tt_end(&s);
}

/* ---- device rates from a fake /proc/diskstats and /sys ---------------------- */

typedef struct dev_arg {
    char stats[700]; /* the fake diskstats */
} dev_arg;

/* diskstats with the disk's sectors read and written; its partition and
 * another disk have numbers of their own that must not be counted. */
static int write_diskstats(const char *path, unsigned long long rd, unsigned long long wr)
{
    char tmp[800];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
            " 254       0 fakedisk 10 0 %llu 5 20 0 %llu 7 0 12 12 0 0 0 0 0 0\n"
            " 254       1 fakedisk1 10 0 999999 5 20 0 999999 7 0 12 12 0 0 0 0 0 0\n"
            "   8       0 otherdisk 10 0 777777 5 20 0 777777 7 0 12 12\n",
            rd / 512, wr / 512);
    fclose(f);
    return rename(tmp, path);
}

/* sysfs under base/sys: dev/block/MAJ:MIN of base's device -> a partition
 * (fakedisk1) of the disk fakedisk. */
static void make_fake_sys(const char *base, char *sys, size_t len)
{
    char part[700], link[700], dir[700], partfile[720];
    struct stat st;
    snprintf(sys, len, "%s/sys", base);
    const char *dirs[] = { "",
                           "/dev",
                           "/dev/block",
                           "/devices",
                           "/devices/virtual",
                           "/devices/virtual/block",
                           "/devices/virtual/block/fakedisk",
                           "/devices/virtual/block/fakedisk/fakedisk1" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(dir, sizeof dir, "%s%s", sys, dirs[i]);
        assert_int_equal(mkdir(dir, 0755), 0);
    }
    snprintf(part, sizeof part, "%s/devices/virtual/block/fakedisk/fakedisk1", sys);
    snprintf(partfile, sizeof partfile, "%s/partition", part);
    FILE *f = fopen(partfile, "w");
    assert_non_null(f);
    fputs("1\n", f);
    fclose(f);
    assert_int_equal(stat(base, &st), 0);
    snprintf(link, sizeof link, "%s/dev/block/%u:%u", sys, major(st.st_dev), minor(st.st_dev));
    assert_int_equal(symlink(part, link), 0);
}

/* 2 GiB read after 100 ms, then 512 MiB written (as sectors). */
static int body_device(void *arg)
{
    const dev_arg *d = arg;
    tally_begin("load_weights");
    sleep_ms(100);
    TT_REQUIRE(write_diskstats(d->stats, 2ull << 30, 0) == 0);
    sleep_ms(100);
    TT_REQUIRE(write_diskstats(d->stats, 2ull << 30, 512ull << 20) == 0);
    sleep_ms(100);
    tally_reading r;
    TT_REQUIRE(tally_current(&r) == 0);
    TT_REQUIRE(r.valid & TALLY_READING_DEVICE);
    TT_REQUIRE(r.device_read_bytes_per_s == 0 && r.device_write_bytes_per_s == 0); /* nothing since */
    tally_end();
    return 0;
}

static void test_device_rates(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    dev_arg d;
    char proc[600], self[620], io[640], sys[600];
    char envproc[700], envsys[700], envpaths[2000];
    snprintf(proc, sizeof proc, "%s/proc", s.base);
    snprintf(self, sizeof self, "%s/self", proc);
    snprintf(io, sizeof io, "%s/io", self);
    assert_int_equal(mkdir(proc, 0755), 0);
    assert_int_equal(mkdir(self, 0755), 0);
    assert_int_equal(write_io(io, 0, 0), 0);
    snprintf(d.stats, sizeof d.stats, "%s/diskstats", proc);
    assert_int_equal(write_diskstats(d.stats, 0, 0), 0);
    make_fake_sys(s.base, sys, sizeof sys);
    snprintf(envproc, sizeof envproc, "TALLY_PROC_ROOT=%s", proc);
    snprintf(envsys, sizeof envsys, "TALLY_SYS_ROOT=%s", sys);
    /* two paths on the one disk (counted once) and one that does not exist */
    snprintf(envpaths, sizeof envpaths, "TALLY_DISK_PATHS=%s:%s:%s/missing", s.base, proc, s.base);
    const char *env[] = { envproc, envsys, envpaths, "TALLY_SAMPLE_CPU_MS=10", "TALLY_SAMPLE=disk", NULL };
    assert_int_equal(tt_run(&s, env, body_device, &d), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sp = json_object_get(r, "sampler");
    json_t *devs = json_object_get(sp, "disk_devices");
    assert_int_equal(json_array_size(devs), 1);
    assert_string_equal(json_string_value(json_array_get(devs, 0)), "fakedisk");
    char want[800];
    snprintf(want, sizeof want, "%s/missing: No such file or directory", s.base);
    assert_string_equal(tt_str(sp, "device_status"), want);
    json_t *series = json_object_get(sp, "series");
    size_t n = json_array_size(series);
    assert_true(n >= 10);
    assert_int_equal(count_with(series, "device_read_bytes_per_s"), n);
    double rd = 0, wr = 0;
    for (size_t i = 1; i < n; i++) {
        json_t *a = json_array_get(series, i - 1), *b = json_array_get(series, i);
        double dt = (double)(tt_int(b, "time_ns") - tt_int(a, "time_ns")) / 1e9;
        rd += tt_num(b, "device_read_bytes_per_s") * dt;
        wr += tt_num(b, "device_write_bytes_per_s") * dt;
        /* the process's own rates beside: its fake self/io never moved */
        assert_true(tt_num(b, "disk_read_bytes_per_s") == 0);
    }
    tt_assert_close(rd, 2048 * MIB, 0.05);
    tt_assert_close(wr, 512 * MIB, 0.05);
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args)); /* the schema, and a trace counter per point */
    tt_end(&s);

    /* the same disk missing from diskstats: no device rates, and why */
    tt_begin(&s);
    snprintf(proc, sizeof proc, "%s/proc", s.base);
    snprintf(self, sizeof self, "%s/self", proc);
    snprintf(io, sizeof io, "%s/io", self);
    assert_int_equal(mkdir(proc, 0755), 0);
    assert_int_equal(mkdir(self, 0755), 0);
    assert_int_equal(write_io(io, 0, 0), 0);
    snprintf(d.stats, sizeof d.stats, "%s/diskstats", proc);
    make_fake_sys(s.base, sys, sizeof sys);
    snprintf(envsys, sizeof envsys, "TALLY_SYS_ROOT=%s", sys);
    FILE *f = fopen(d.stats, "w");
    assert_non_null(f);
    fputs(" 8 0 otherdisk 10 0 777777 5 20 0 777777 7 0 12 12\n", f);
    fclose(f);
    snprintf(envproc, sizeof envproc, "TALLY_PROC_ROOT=%s", proc);
    snprintf(envpaths, sizeof envpaths, "TALLY_DISK_PATHS=%s", s.base);
    const char *env2[] = { envproc, envsys, envpaths, "TALLY_SAMPLE_CPU_MS=10", "TALLY_SAMPLE=disk", NULL };
    long ms = 100;
    assert_int_equal(tt_run(&s, env2, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    r = tt_load_json(tt_report(&s, "t-rank0"));
    sp = json_object_get(r, "sampler");
    snprintf(want, sizeof want, "not sampled: %s/diskstats lists none of fakedisk", proc);
    assert_string_equal(tt_str(sp, "device_status"), want);
    assert_int_equal(count_with(json_object_get(sp, "series"), "device_read_bytes_per_s"), 0);
    assert_true(count_with(json_object_get(sp, "series"), "disk_read_bytes_per_s") >= 3);
    json_decref(r);
    tt_end(&s);
}

/* The real /proc/self/io: a program that writes 8 MiB with fsync shows it. */
static int body_real_write(void *arg)
{
    const char *path = arg;
    static char buf[1 << 20];
    tally_begin("write");
    tally_end();
    sleep_ms(50); /* the sampler's first reading of the counters comes before the write */
    memset(buf, 'x', sizeof buf);
    FILE *f = fopen(path, "w");
    TT_REQUIRE(f != NULL);
    for (int i = 0; i < 8; i++)
        TT_REQUIRE(fwrite(buf, 1, sizeof buf, f) == sizeof buf);
    fflush(f);
    fsync(fileno(f));
    fclose(f);
    sleep_ms(100);
    return 0;
}

static void test_disk_real_proc(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    struct statfs fs;
    /* no task I/O accounting, or a tmpfs (whose writes reach no storage): nothing to see */
    if (access("/proc/self/io", R_OK) != 0 || statfs(s.base, &fs) != 0 || fs.f_type == 0x01021994 /* TMPFS_MAGIC */) {
        tt_end(&s);
        skip();
    }
    char path[700];
    snprintf(path, sizeof path, "%s/big.bin", s.base);
    const char *env[] = { "TALLY_SAMPLE_MS=10", "TALLY_SAMPLE=disk", NULL };
    assert_int_equal(tt_run(&s, env, body_real_write, path), 0);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    /* rate x the time since the previous point; the first point's interval
     * starts at the sampler's start, about the start of recording (the write
     * comes right after it, so it falls in the first points) */
    double wr = 0;
    long long prev = 0;
    for (size_t i = 0; i < json_array_size(series); i++) {
        json_t *b = json_array_get(series, i);
        wr += tt_num(b, "disk_write_bytes_per_s") * (double)(tt_int(b, "time_ns") - prev) / 1e9;
        prev = tt_int(b, "time_ns");
    }
    if (!(wr >= 6 * MIB && wr <= 16 * MIB))
        fail_msg("8 MiB written with fsync, the disk write rates add up to %.1f MiB", wr / MIB);
    json_decref(r);
    tt_end(&s);
}

/* ---- the budget, NVML absent, presets, flushes ---------------------------- */

/* A budget of 16 points at 2 ms for 400 ms (~200 points): decimated, the
 * series still covers the run. */
static void test_point_budget(void **state)
{
    (void)state;
    tt_scenario s;
    long ms = 400;
    const char *env[] = { "TALLY_SAMPLE_MS=2", "TALLY_SAMPLE_POINTS=16", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sp = json_object_get(r, "sampler");
    json_t *series = json_object_get(sp, "series");
    size_t n = json_array_size(series);
    long long stride = tt_int(sp, "stride"), dec = tt_int(sp, "points_decimated");
    assert_int_equal(tt_int(sp, "points_budget"), 16);
    assert_int_equal(tt_int(json_object_get(r, "config"), "sample_points"), 16);
    assert_int_equal(tt_int(sp, "points_dropped"), 0);
    if (!(n >= 8 && n <= 16 && stride >= 4 && (stride & (stride - 1)) == 0 && dec > 50))
        fail_msg("%zu points, stride %lld, %lld decimated", n, stride, dec);
    /* every kept point is a stride apart in the order taken: the times are
     * about stride x 2 ms apart, and the last is near the end */
    long long last = tt_int(json_array_get(series, n - 1), "time_ns");
    assert_true(last > 250 * 1000000LL);
    /* points taken = kept x stride, give or take the ones since the last kept */
    long long taken = (long long)n + dec;
    assert_true(taken >= (long long)(n - 1) * stride && taken < (long long)(n + 1) * stride);
    json_decref(r);
    tt_end(&s);
}

/* Asked for GPUs by name without NVML: one line at start and the report
 * says it; asked for with TALLY_SAMPLE_MS alone: only the report. */
static void test_nvml_absent_message(void **state)
{
    (void)state;
    tt_scenario s;
    long ms = 100;
    const char *env[] = { "TALLY_SAMPLE_GPU_MS=10", "TALLY_SAMPLE_CPU_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_wait, &ms), 0);
    assert_string_equal(s.err, "tally: GPU sampling was asked for, but NVML is not available (absent); "
                               "sampling goes on without GPU readings\n");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sp = json_object_get(r, "sampler");
    assert_string_equal(tt_str(sp, "gpu_status"), "not sampled: NVML absent");
    assert_true(count_with(json_object_get(sp, "series"), "cpu_pct") >= 3);
    json_decref(r);
    tt_end(&s);

    const char *plain[] = { "TALLY_SAMPLE_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, plain, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_string_equal(tt_str(json_object_get(r, "sampler"), "gpu_status"), "not sampled: NVML absent");
    json_decref(r);
    tt_end(&s);

    /* with NVML: no status */
    const char *with[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_GPU_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, with, body_wait, &ms), 0);
    assert_string_equal(s.err, "");
    r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_null(json_object_get(json_object_get(r, "sampler"), "gpu_status"));
    json_decref(r);
    tt_end(&s);
}

/* TALLY_PRESET=prod in a real run, with the host period overridden. A
 * preset's GPU period asks for GPUs: without NVML, the line says so. */
static void test_preset_run(void **state)
{
    (void)state;
    tt_scenario s;
    long ms = 150;
    const char *env[] = { "TALLY_PRESET=prod", "TALLY_SAMPLE_CPU_MS=20", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_wait, &ms), 0);
    assert_int_equal(tt_count_lines(s.err, "tally: GPU sampling was asked for, but NVML is not available"), 1);
    assert_int_equal(tt_count_lines(s.err, ""), 1);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *cfg = json_object_get(r, "config");
    assert_string_equal(tt_str(cfg, "preset"), "prod");
    assert_int_equal(tt_int(cfg, "sample_gpu_ms"), 1000);
    assert_int_equal(tt_int(cfg, "sample_cpu_ms"), 20);
    assert_string_equal(tt_str(cfg, "sample"), "gpu,cpu,memory");
    assert_true(json_is_false(json_object_get(cfg, "trace")));
    assert_int_equal(tt_int(cfg, "max_samples"), 1000);
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    assert_true(count_with(series, "rss_bytes") >= 3);
    assert_int_equal(count_with(series, "load1"), 0);
    assert_int_equal(count_with(series, "disk_read_bytes_per_s"), 0);
    json_decref(r);
    tt_end(&s);
}

/* The newest report file of dir, or "" (inside the child: no cmocka). */
static int has_report(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".report.json") != NULL && strstr(e->d_name, ".tmp") == NULL)
            found = 1;
    closedir(d);
    return found;
}

/* TALLY_FLUSH_S=1: the report exists while the program still runs, with
 * what was recorded before the flush; the program's thread never writes. */
static int body_flush(void *arg)
{
    const char *dir = arg;
    tally_begin("before_flush");
    tally_end();
    TT_REQUIRE(!has_report(dir));
    for (int i = 0; i < 60 && !has_report(dir); i++)
        sleep_ms(50);
    TT_REQUIRE(has_report(dir));
    tally_begin("after_flush");
    tally_end();
    return 0;
}

static void test_flush_every(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_FLUSH_S=1", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_flush, s.dir), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(json_object_get(r, "config"), "flush_s"), 1);
    assert_true(json_is_null(json_object_get(r, "sampler")));                        /* flushes alone sample nothing */
    assert_non_null(tt_find(json_object_get(r, "sections"), "name", "after_flush")); /* the final write */
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_current, tt_teardown),
        cmocka_unit_test_teardown(test_current_without_sampler, tt_teardown),
        cmocka_unit_test_teardown(test_two_periods, tt_teardown),
        cmocka_unit_test_teardown(test_readings_and_devices, tt_teardown),
        cmocka_unit_test_teardown(test_disk_rates, tt_teardown),
        cmocka_unit_test_teardown(test_disk_real_proc, tt_teardown),
        cmocka_unit_test_teardown(test_device_rates, tt_teardown),
        cmocka_unit_test_teardown(test_point_budget, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_absent_message, tt_teardown),
        cmocka_unit_test_teardown(test_preset_run, tt_teardown),
        cmocka_unit_test_teardown(test_flush_every, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
