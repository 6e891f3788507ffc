/*
 * sampler.c - the background sampler thread (TALLY_SAMPLE_MS and friends).
 *
 * Two parts, each with its own period (TALLY_SAMPLE_GPU_MS, TALLY_SAMPLE_CPU_MS;
 * both TALLY_SAMPLE_MS unless set): the GPU part reads NVML (through the NVML
 * worker, nvml.c), the host part the process CPU use since its last point
 * (user + system time over wall time, in % of one core, so 4 busy threads
 * read 400), RSS, available system memory, the 1-minute load average and the
 * process's disk I/O rate (read_bytes and write_bytes of /proc/self/io over
 * the time since the last point: bytes that reached the storage layer, page
 * cache hits not counted). TALLY_SAMPLE turns readings off; TALLY_GPUS keeps
 * some devices. Parts due at the same moment make one point.
 *
 * The series is bounded by a point budget (TALLY_SAMPLE_POINTS): when it is
 * full, every other point is dropped and from then on only every 2nd point
 * is kept (then every 4th, ...), so the series still covers the whole run at
 * a coarser step; the report states the budget, the points decimated and the
 * stride. The thread sleeps on a condition variable so shutdown does not wait
 * out a long period. With TALLY_FLUSH_S it also writes the outputs every N
 * seconds (never on a host thread).
 *
 * The one idea of tally_current(): every reading is published into one
 * tally_reading through a sequence lock (the sampler is its only writer); a
 * reader copies it word by word with atomic loads and retries while the
 * sequence moved, so it never waits for this thread or any lock.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

__thread int tl_on_sampler_thread;

static struct {
    pthread_mutex_t lock;
    pthread_mutex_t busy; /* held while a point is taken; fork() waits for it */
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;
    tl_sampler_config cfg;
    tl_sample_point *points;
    size_t n, cap;
    uint64_t dropped, decimated, seen;
    long stride;
    char gpu_status[256], disk_status[512];
    /* the whole disks under cfg.disk_paths (found once, on the sampler thread) */
    char devices[TL_MAX_DISK_DEVICES][64];
    int ndevices;
    char device_status[600];
} sp = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .stride = 1
};

/* ---- the published reading (tally_current) -------------------------------- */

#define PUB_WORDS ((sizeof(tally_reading) + 7) / 8)
static union {
    tally_reading r;
    uint64_t w[PUB_WORDS];
} pub_buf;
static uint64_t pub_seq; /* odd while being written */

static void publish(const tally_reading *r)
{
    union {
        tally_reading r;
        uint64_t w[PUB_WORDS];
    } src;
    memset(&src, 0, sizeof src);
    src.r = *r;
    uint64_t s = __atomic_load_n(&pub_seq, __ATOMIC_RELAXED);
    __atomic_store_n(&pub_seq, s + 1, __ATOMIC_RELAXED);
    /* release stores (plain moves on x86): the odd sequence above is
     * visible to any reader that sees one of these words (no standalone
     * fence: ThreadSanitizer does not model them) */
    for (size_t i = 0; i < PUB_WORDS; i++)
        __atomic_store_n(&pub_buf.w[i], src.w[i], __ATOMIC_RELEASE);
    __atomic_store_n(&pub_seq, s + 2, __ATOMIC_RELEASE);
}

#define TL_CURRENT_TRIES 10000

int tl_sampler_current(tally_reading *out)
{
    union {
        tally_reading r;
        uint64_t w[PUB_WORDS];
    } dst;
    for (int t = 0; t < TL_CURRENT_TRIES; t++) {
        uint64_t s1 = __atomic_load_n(&pub_seq, __ATOMIC_ACQUIRE);
        if (s1 == 0) {
            memset(out, 0, sizeof *out);
            return TALLY_ENOENT;
        }
        if (s1 & 1)
            continue;
        /* acquire loads: the sequence read after them is not read before
         * them, and a word of a newer write brings that write's odd sequence */
        for (size_t i = 0; i < PUB_WORDS; i++)
            dst.w[i] = __atomic_load_n(&pub_buf.w[i], __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&pub_seq, __ATOMIC_RELAXED) == s1) {
            *out = dst.r;
            return 0;
        }
    }
    return TALLY_EAGAIN;
}

int tally_current(tally_reading *out)
{
    if (out == NULL)
        return TALLY_EINVAL;
    int state = atomic_load(&tl_g.state);
    int rc = state == TL_UNINIT ? TALLY_ESTATE : tl_sampler_current(out);
    if (rc == TALLY_ENOENT && state == TL_OFF && tl_g.start_ticks == 0)
        rc = TALLY_ESTATE; /* disabled: never started */
    if (rc == TALLY_ESTATE)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- the readings ------------------------------------------------------------ */

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double load1(void)
{
    double l = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lf", &l) != 1)
        l = 0;
    fclose(f);
    return l;
}

/* read_bytes and write_bytes of {proc_root}/self/io. 0, or -1 with the
 * reason in sp.disk_status (said once in the report). */
static void disk_unread(const char *path, const char *why)
{
    pthread_mutex_lock(&sp.lock);
    snprintf(sp.disk_status, sizeof sp.disk_status, "not sampled: %s: %s", path, why);
    pthread_mutex_unlock(&sp.lock);
}

static int disk_bytes(uint64_t *rd, uint64_t *wr)
{
    char path[300], line[128];
    int got = 0;
    snprintf(path, sizeof path, "%s/self/io", sp.cfg.proc_root);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        char why[96];
        disk_unread(path, strerror_r(errno, why, sizeof why));
        return -1;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long v;
        if (sscanf(line, "read_bytes: %llu", &v) == 1) {
            *rd = v;
            got |= 1;
        } else if (sscanf(line, "write_bytes: %llu", &v) == 1) {
            *wr = v;
            got |= 2;
        }
    }
    fclose(f);
    if (got != 3) {
        disk_unread(path, "no read_bytes and write_bytes in it");
        return -1;
    }
    return 0;
}

/* ---- the block devices (/proc/diskstats) ------------------------------------
 *
 * A path's device is its st_dev; {sys_root}/dev/block/MAJ:MIN links to the
 * device's directory in sysfs, and a partition (a directory with a
 * "partition" file) is counted as its whole disk, the unit diskstats and the
 * hardware read at. A path on no block device (major 0: tmpfs, overlay, a
 * network file system; sysfs has no link for it) is said in device_status
 * and left out. */

/* Add a path's problem to device_status (under sp.lock). */
static void device_note(const char *msg)
{
    size_t used = strlen(sp.device_status);
    /* what does not fit is cut (the first paths' problems are said) */
    if (used + 4 < sizeof sp.device_status &&
        snprintf(sp.device_status + used, sizeof sp.device_status - used, "%s%s", used ? "; " : "", msg) < 0)
        sp.device_status[used] = '\0';
}

/* The whole disk under path into name; 0, or -1 with the reason noted. */
static int whole_disk_of(const char *path, char *name, size_t len)
{
    struct stat st;
    char why[96], link[400], real[PATH_MAX], msg[600];
    if (stat(path, &st) != 0) {
        snprintf(msg, sizeof msg, "%.300s: %s", path, strerror_r(errno, why, sizeof why));
        device_note(msg);
        return -1;
    }
    snprintf(link, sizeof link, "%.300s/dev/block/%u:%u", sp.cfg.sys_root, major(st.st_dev), minor(st.st_dev));
    if (realpath(link, real) == NULL) {
        /* major 0 is the kernel's anonymous devices: sysfs never lists them */
        if (major(st.st_dev) == 0)
            snprintf(msg, sizeof msg,
                     "%.300s is on no block device (device 0:%u: tmpfs, overlay or a network "
                     "file system)",
                     path, minor(st.st_dev));
        else
            snprintf(msg, sizeof msg, "%s: %s", link, strerror_r(errno, why, sizeof why));
        device_note(msg);
        return -1;
    }
    size_t n = strlen(real);
    if (n + sizeof "/partition" <= sizeof real) {
        memcpy(real + n, "/partition", sizeof "/partition");
        int part = access(real, F_OK) == 0;
        real[n] = '\0';
        char *slash = strrchr(real, '/');
        if (part && slash != NULL && slash != real)
            *slash = '\0'; /* a partition: its disk is the directory above */
    }
    const char *base = strrchr(real, '/');
    snprintf(name, len, "%s", base ? base + 1 : real);
    return name[0] ? 0 : -1;
}

/* The disks of cfg.disk_paths, each once (sampler thread, at its start). */
static void find_devices(void)
{
    char paths[sizeof sp.cfg.disk_paths], *save = NULL;
    snprintf(paths, sizeof paths, "%s", sp.cfg.disk_paths);
    pthread_mutex_lock(&sp.lock);
    sp.ndevices = 0;
    sp.device_status[0] = '\0';
    for (char *p = strtok_r(paths, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save)) {
        char name[64];
        if (whole_disk_of(p, name, sizeof name) != 0)
            continue;
        int seen = 0;
        for (int i = 0; i < sp.ndevices; i++)
            seen |= strcmp(sp.devices[i], name) == 0;
        if (!seen && sp.ndevices < TL_MAX_DISK_DEVICES)
            snprintf(sp.devices[sp.ndevices++], sizeof sp.devices[0], "%s", name);
    }
    if (sp.ndevices == 0 && sp.device_status[0] == '\0')
        device_note("no paths to find devices of (TALLY_DISK_PATHS)");
    pthread_mutex_unlock(&sp.lock);
}

/* Sectors read and written by the devices (diskstats' 6th and 10th fields,
 * 512-byte sectors whatever the device's own block size), in bytes. 0, or -1
 * (the reason in device_status) when none of them is listed. */
static int device_bytes(uint64_t *rd, uint64_t *wr)
{
    char path[300], line[512];
    snprintf(path, sizeof path, "%s/diskstats", sp.cfg.proc_root);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        char why[96];
        pthread_mutex_lock(&sp.lock);
        snprintf(sp.device_status, sizeof sp.device_status, "not sampled: %s: %s", path,
                 strerror_r(errno, why, sizeof why));
        pthread_mutex_unlock(&sp.lock);
        return -1;
    }
    int found = 0;
    *rd = *wr = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned ma, mi;
        char name[64];
        unsigned long long r_ios, r_merged, r_sect, r_ms, w_ios, w_merged, w_sect;
        if (sscanf(line, " %u %u %63s %llu %llu %llu %llu %llu %llu %llu", &ma, &mi, name, &r_ios, &r_merged, &r_sect,
                   &r_ms, &w_ios, &w_merged, &w_sect) != 10)
            continue;
        for (int i = 0; i < sp.ndevices; i++)
            if (strcmp(sp.devices[i], name) == 0) {
                /* saturating: a hostile file cannot wrap the sum */
                *rd = r_sect > (UINT64_MAX - *rd) / 512 ? UINT64_MAX : *rd + r_sect * 512;
                *wr = w_sect > (UINT64_MAX - *wr) / 512 ? UINT64_MAX : *wr + w_sect * 512;
                found++;
            }
    }
    fclose(f);
    if (found == 0) {
        pthread_mutex_lock(&sp.lock);
        snprintf(sp.device_status, sizeof sp.device_status, "not sampled: %s lists none of %s%s%s", path, sp.devices[0],
                 sp.ndevices > 1 ? " and " : "", sp.ndevices > 1 ? "the others" : "");
        pthread_mutex_unlock(&sp.lock);
        return -1;
    }
    return 0;
}

/* What the sampler thread carries from one host point to the next. */
typedef struct host_state {
    double cpu;
    uint64_t wall_ns;
    uint64_t rd, wr, disk_ns;
    int have_disk;
    uint64_t dev_rd, dev_wr, dev_ns; /* the devices' bytes at the previous host point */
    int have_dev;
} host_state;

static void host_start(host_state *h)
{
    h->cpu = cpu_seconds();
    h->wall_ns = tl_clock_ns_monotonic();
    h->have_disk = (sp.cfg.what & TL_SAMPLE_DISK) && disk_bytes(&h->rd, &h->wr) == 0;
    h->disk_ns = h->wall_ns;
    h->have_dev = 0;
    if ((sp.cfg.what & TL_SAMPLE_DISK) && sp.cfg.host_ms > 0) {
        find_devices();
        h->have_dev = sp.ndevices > 0 && device_bytes(&h->dev_rd, &h->dev_wr) == 0;
    }
    h->dev_ns = h->wall_ns;
}

static void read_host(tl_sample_point *p, host_state *h)
{
    unsigned what = sp.cfg.what;
    if (what & TL_SAMPLE_CPU) {
        double cpu = cpu_seconds();
        uint64_t wall = tl_clock_ns_monotonic();
        p->cpu_pct = wall > h->wall_ns ? (cpu - h->cpu) / ((double)(wall - h->wall_ns) / 1e9) * 100.0 : 0;
        h->cpu = cpu;
        h->wall_ns = wall;
        p->has |= TL_SAMPLE_CPU;
    }
    if (what & TL_SAMPLE_MEMORY) {
        double total;
        p->rss = tl_memory_rss();
        tl_memory_system(&total, &p->sys_available);
        p->has |= TL_SAMPLE_MEMORY;
    }
    if (what & TL_SAMPLE_LOAD) {
        p->load1 = load1();
        p->has |= TL_SAMPLE_LOAD;
    }
    uint64_t rd, wr;
    if ((what & TL_SAMPLE_DISK) && disk_bytes(&rd, &wr) == 0) {
        uint64_t now = tl_clock_ns_monotonic();
        /* a counter that went back (another process's file fed in a test,
         * a namespace change) starts over rather than reading negative */
        if (h->have_disk && now > h->disk_ns && rd >= h->rd && wr >= h->wr) {
            double dt = (double)(now - h->disk_ns) / 1e9;
            p->disk_read_bps = (double)(rd - h->rd) / dt;
            p->disk_write_bps = (double)(wr - h->wr) / dt;
            p->has |= TL_SAMPLE_DISK;
        }
        h->rd = rd;
        h->wr = wr;
        h->disk_ns = now;
        h->have_disk = 1;
    }
    /* the devices: every process's I/O to them, the page cache's writeback included */
    if ((what & TL_SAMPLE_DISK) && sp.ndevices > 0 && device_bytes(&rd, &wr) == 0) {
        uint64_t now = tl_clock_ns_monotonic();
        if (h->have_dev && now > h->dev_ns && rd >= h->dev_rd && wr >= h->dev_wr) {
            double dt = (double)(now - h->dev_ns) / 1e9;
            p->dev_read_bps = (double)(rd - h->dev_rd) / dt;
            p->dev_write_bps = (double)(wr - h->dev_wr) / dt;
            p->has_device = 1;
        }
        h->dev_rd = rd;
        h->dev_wr = wr;
        h->dev_ns = now;
        h->have_dev = 1;
    }
}

/* The GPU part: NVML's devices, those of TALLY_GPUS. When there are none
 * because NVML is not there, the reason goes into the report, and once on
 * stderr when GPU sampling was asked for by name. */
static void read_gpus(tl_sample_point *p)
{
    static int said;
    tl_gpu_reading all[TL_MAX_GPUS];
    /* never pins: a dlclose holding the loader's lock may be joining this thread */
    int n = tl_nvml_read(all, TL_MAX_GPUS, 0); /* waits TL_NVML_WAIT_MS at most */
    for (int i = 0; i < n; i++)
        if (all[i].index < 64 && (sp.cfg.gpus >> all[i].index & 1))
            p->gpus[p->ngpus++] = all[i];
    p->has |= TL_SAMPLE_GPU;
    if (n > 0)
        return;
    char status[192];
    tl_nvml_status(status, sizeof status);
    if (strncmp(status, "loaded", 6) == 0 || strncmp(status, "loading", 7) == 0)
        return;
    pthread_mutex_lock(&sp.lock);
    snprintf(sp.gpu_status, sizeof sp.gpu_status, "not sampled: NVML %s", status);
    pthread_mutex_unlock(&sp.lock);
    if (sp.cfg.gpu_asked && !said) {
        said = 1;
        fprintf(stderr,
                "tally: GPU sampling was asked for, but NVML is not available (%s); "
                "sampling goes on without GPU readings\n",
                status);
    }
}

/* The published reading takes the parts of p that were read. */
static void update_current(tally_reading *cur, const tl_sample_point *p)
{
    int64_t now = tl_clock_ns_realtime();
    cur->sequence++;
    cur->time_unix_ns = now;
    if (p->has & TL_SAMPLE_HOST) {
        cur->host_time_unix_ns = now;
        cur->valid &= ~(TALLY_READING_CPU | TALLY_READING_MEMORY | TALLY_READING_DISK | TALLY_READING_LOAD |
                        TALLY_READING_DEVICE);
    }
    if (p->has_device) {
        cur->device_read_bytes_per_s = p->dev_read_bps;
        cur->device_write_bytes_per_s = p->dev_write_bps;
        cur->valid |= TALLY_READING_DEVICE;
    }
    if (p->has & TL_SAMPLE_CPU) {
        cur->cpu_pct = p->cpu_pct;
        cur->valid |= TALLY_READING_CPU;
    }
    if (p->has & TL_SAMPLE_MEMORY) {
        cur->rss_bytes = p->rss;
        cur->system_available_bytes = p->sys_available;
        cur->valid |= TALLY_READING_MEMORY;
    }
    if (p->has & TL_SAMPLE_DISK) {
        cur->disk_read_bytes_per_s = p->disk_read_bps;
        cur->disk_write_bytes_per_s = p->disk_write_bps;
        cur->valid |= TALLY_READING_DISK;
    }
    if (p->has & TL_SAMPLE_LOAD) {
        cur->load1 = p->load1;
        cur->valid |= TALLY_READING_LOAD;
    }
    if (!(p->has & TL_SAMPLE_GPU))
        return;
    cur->gpu_time_unix_ns = now;
    cur->ngpus = p->ngpus < TALLY_READING_MAX_GPUS ? p->ngpus : TALLY_READING_MAX_GPUS;
    cur->valid = cur->ngpus > 0 ? cur->valid | TALLY_READING_GPU : cur->valid & ~TALLY_READING_GPU;
    for (int i = 0; i < cur->ngpus; i++) {
        const tl_gpu_reading *g = &p->gpus[i];
        tally_gpu_reading *o = &cur->gpus[i];
        memset(o, 0, sizeof *o);
        o->index = g->index;
        o->valid = (g->has_util ? TALLY_GPU_UTIL : 0) | (g->has_mem ? TALLY_GPU_MEMORY : 0) |
                   (g->has_proc ? TALLY_GPU_PROCESS : 0) | (g->has_temp ? TALLY_GPU_TEMP : 0) |
                   (g->has_power ? TALLY_GPU_POWER : 0) | (g->has_limit ? TALLY_GPU_LIMIT : 0) |
                   (g->has_clocks ? TALLY_GPU_CLOCKS : 0) | (g->has_base ? TALLY_GPU_BASE_CLOCK : 0) |
                   (g->has_throttle ? TALLY_GPU_THROTTLE : 0);
        o->utilization_pct = g->util_gpu;
        o->memory_utilization_pct = g->util_mem;
        o->used_bytes = g->mem_used;
        o->total_bytes = g->mem_total;
        o->process_used_bytes = g->proc_used;
        o->temperature_c = g->temperature_c;
        o->power_w = g->power_w;
        o->power_limit_w = g->power_limit_w;
        o->sm_clock_mhz = g->sm_clock;
        o->memory_clock_mhz = g->mem_clock;
        o->base_sm_clock_mhz = g->base_sm_clock;
        o->throttle_reasons = g->throttle;
    }
}

/* Keep p in the series, within the budget (see the file comment). */
static void keep(const tl_sample_point *p)
{
    pthread_mutex_lock(&sp.lock);
    uint64_t k = sp.seen++;
    if (k % (uint64_t)sp.stride != 0) {
        sp.decimated++;
        goto out;
    }
    if (sp.n >= (size_t)sp.cfg.budget) {
        /* every other point goes; n is even (the budget is), so p's index
         * n * stride is a multiple of the new stride and is kept */
        size_t half = sp.n / 2;
        for (size_t i = 0; i < half; i++)
            sp.points[i] = sp.points[2 * i];
        sp.decimated += sp.n - half;
        sp.n = half;
        sp.stride *= 2;
    }
    if (tl_array_grow(&sp.points, sp.n, &sp.cap, sizeof *sp.points, 64) == 0)
        sp.points[sp.n++] = *p;
    else
        sp.dropped++;
out:
    pthread_mutex_unlock(&sp.lock);
}

/* ---- the thread ---------------------------------------------------------------- */

static uint64_t ms_ns(long ms)
{
    return (uint64_t)ms * 1000000u;
}

static void *sampler_main(void *arg)
{
    (void)arg;
    tl_on_sampler_thread = 1;
    static tally_reading cur; /* this thread's: what it publishes */
    static tl_sample_point p; /* large with 8 GPUs */
    host_state host;
    memset(&cur, 0, sizeof cur);
    host_start(&host);
    const tl_sampler_config *c = &sp.cfg;
    uint64_t now = tl_clock_ns_monotonic();
    uint64_t next_gpu = c->gpu_ms > 0 ? now + ms_ns(c->gpu_ms) : UINT64_MAX;
    uint64_t next_host = c->host_ms > 0 ? now + ms_ns(c->host_ms) : UINT64_MAX;
    uint64_t next_flush = c->flush_s > 0 ? now + (uint64_t)c->flush_s * 1000000000u : UINT64_MAX;
    if (c->gpu_ms > 0) {
        /* at start: says at once when NVML is not there (the reading is not kept) */
        memset(&p, 0, sizeof p);
        read_gpus(&p);
    }
    pthread_mutex_lock(&sp.lock);
    while (!sp.stop) {
        uint64_t due = next_gpu < next_host ? next_gpu : next_host;
        if (next_flush < due)
            due = next_flush;
        now = tl_clock_ns_monotonic();
        if (due > now) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            uint64_t wait = due - now;
            if (wait > 3600ull * 1000000000u)
                wait = 3600ull * 1000000000u;
            long ns = until.tv_nsec + (long)(wait % 1000000000u);
            until.tv_sec += (time_t)(wait / 1000000000u) + ns / 1000000000L;
            until.tv_nsec = ns % 1000000000L;
            (void)pthread_cond_timedwait(&sp.wake, &sp.lock, &until); /* due, stopped or spurious */
            continue;
        }
        pthread_mutex_unlock(&sp.lock);
        if (now >= next_gpu || now >= next_host) {
            pthread_mutex_lock(&sp.busy);
            memset(&p, 0, sizeof p);
            p.ticks = tl_now();
            if (now >= next_host) {
                read_host(&p, &host);
                next_host += ms_ns(c->host_ms);
                if (next_host <= now)
                    next_host = now + ms_ns(c->host_ms); /* late (a stopped process): no burst */
            }
            if (now >= next_gpu) {
                read_gpus(&p);
                next_gpu += ms_ns(c->gpu_ms);
                if (next_gpu <= now)
                    next_gpu = now + ms_ns(c->gpu_ms);
            }
            update_current(&cur, &p);
            publish(&cur);
            keep(&p);
            pthread_mutex_unlock(&sp.busy);
        }
        if (now >= next_flush) {
            /* outside busy: a fork waits for write_lock before busy */
            tl_flush_from_sampler();
            next_flush = tl_clock_ns_monotonic() + (uint64_t)c->flush_s * 1000000000u;
        }
        pthread_mutex_lock(&sp.lock);
    }
    pthread_mutex_unlock(&sp.lock);
    return NULL;
}

int tl_sampler_start(const tl_sampler_config *cfg)
{
    int rc = 0;
    pthread_mutex_lock(&sp.lock);
    if (sp.running)
        goto out;
    sp.cfg = *cfg;
    if (sp.cfg.budget < TL_MIN_SAMPLER_POINTS)
        sp.cfg.budget = TL_MAX_SAMPLER_POINTS;
    sp.cfg.budget &= ~1L; /* even: see keep() */
    if (!(sp.cfg.what & TL_SAMPLE_GPU))
        sp.cfg.gpu_ms = 0;
    if (!(sp.cfg.what & TL_SAMPLE_HOST))
        sp.cfg.host_ms = 0;
    if (sp.cfg.proc_root[0] == '\0')
        snprintf(sp.cfg.proc_root, sizeof sp.cfg.proc_root, "/proc");
    if (sp.cfg.sys_root[0] == '\0')
        snprintf(sp.cfg.sys_root, sizeof sp.cfg.sys_root, "/sys");
    sp.stop = 0;
    /* Every signal blocked in the sampler (it inherits the mask): a SIGTERM
     * handler running on it would wait for a writer that joins it. */
    sigset_t all, prev;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int created = pthread_create(&sp.thread, NULL, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (created != 0) {
        rc = -1;
        goto out;
    }
    sp.running = 1;
out:
    pthread_mutex_unlock(&sp.lock);
    return rc;
}

void tl_sampler_stop(void)
{
    pthread_mutex_lock(&sp.lock);
    if (!sp.running) {
        pthread_mutex_unlock(&sp.lock);
        return;
    }
    sp.stop = 1;
    pthread_cond_signal(&sp.wake);
    pthread_mutex_unlock(&sp.lock);
    pthread_join(sp.thread, NULL);
    pthread_mutex_lock(&sp.lock);
    sp.running = 0;
    pthread_mutex_unlock(&sp.lock);
}

size_t tl_sampler_points(tl_sample_point **out, uint64_t *dropped)
{
    pthread_mutex_lock(&sp.lock);
    size_t n = sp.n;
    *out = NULL;
    if (n > 0) {
        *out = malloc(n * sizeof **out);
        if (*out != NULL)
            memcpy(*out, sp.points, n * sizeof **out);
        else
            n = 0;
    }
    *dropped = sp.dropped;
    pthread_mutex_unlock(&sp.lock);
    return n;
}

void tl_sampler_info_get(tl_sampler_info *out)
{
    pthread_mutex_lock(&sp.lock);
    out->budget = sp.cfg.budget;
    out->stride = sp.stride;
    out->decimated = sp.decimated;
    out->dropped = sp.dropped;
    snprintf(out->gpu_status, sizeof out->gpu_status, "%s", sp.gpu_status);
    snprintf(out->disk_status, sizeof out->disk_status, "%s", sp.disk_status);
    snprintf(out->device_status, sizeof out->device_status, "%s", sp.device_status);
    out->ndevices = sp.ndevices;
    memcpy(out->devices, sp.devices, sizeof out->devices);
    pthread_mutex_unlock(&sp.lock);
}

/* fork() waits until the sampler thread is between two points: a point
 * being taken holds open files and allocations (and may be growing the
 * series) that only that thread, absent in the child, refers to. Taking a
 * point never waits for a lock the forking thread holds. */
void tl_sampler_atfork_prepare(void)
{
    pthread_mutex_lock(&sp.busy);
}
void tl_sampler_atfork_parent(void)
{
    pthread_mutex_unlock(&sp.busy);
}

/* In a fork child the sampler thread does not exist and its lock may have
 * been held at the fork: start over, unlocked, with an empty series and no
 * reading. */
void tl_sampler_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    sp.lock = fresh;
    sp.wake = fresh_cond;
    sp.running = 0;
    sp.stop = 0;
    sp.busy = fresh;
    free(sp.points); /* consistent: no point was being taken (see above) */
    sp.points = NULL;
    sp.n = sp.cap = 0;
    sp.dropped = sp.decimated = sp.seen = 0;
    sp.stride = 1;
    __atomic_store_n(&pub_seq, 0, __ATOMIC_RELAXED);
}
