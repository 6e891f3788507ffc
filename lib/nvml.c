/*
 * nvml.c - GPU readings through NVML, loaded with dlopen when present.
 *
 * No CUDA header or library is needed to build: the few NVML entry points
 * used are declared here with the types of NVML's stable ABI (the _v2 names
 * exist since CUDA 7). TALLY_NVML_LIBRARY names another library to load, which
 * is how the tests exercise this path with a fake libnvidia-ml.
 *
 * The one idea: NVML is never called on a thread of the host program. A
 * wedged driver makes NVML calls hang for good, and a slow one takes hundreds
 * of ms a call, so every call (dlopen, nvmlInit, the readings, nvmlShutdown)
 * runs on one helper thread of libtally, the worker. A reader (a memory
 * snapshot, the sampler, the report's system block) asks the worker for a
 * fresh reading and waits at most TL_NVML_WAIT_MS; when none came in time it
 * takes the last complete reading (or none). A call that has not returned
 * after TL_NVML_DEADLINE_MS is hung: NVML is abandoned (no reader waits for it
 * again, and no stale reading is handed out), the report's system.nvml says
 * "abandoned: ..." and stderr says it once. At shutdown the worker is asked
 * to call nvmlShutdown and stop, and is waited for at most TL_NVML_WAIT_MS;
 * a worker stuck in a call is left behind. So that a dlclose() cannot unmap
 * the code such a worker returns to, libtally is kept loaded (RTLD_NODELETE)
 * as soon as a memory snapshot or a flush finds a call overdue. Not the
 * sampler, nor a shutdown: dlopen takes the loader's lock, which a dlclose()
 * of libtally holds while its shutdown joins the sampler. (A call that starts
 * to hang after the last snapshot, or in nvmlShutdown during dlclose itself,
 * is not covered: the loader decides to unmap before libtally's shutdown
 * runs.)
 *
 * Device-wide used memory is every process's, so each device's reading also
 * has this process's own memory there, from NVML's per-process accounting
 * (nvmlDeviceGetComputeRunningProcesses, _v3 then _v2 then the first layout;
 * the entry for getpid()): the report's process_used_bytes beside used_bytes.
 * It is absent where NVML does not list this pid (no context on the device;
 * a container's pid namespace, where NVML lists the host's pids) or does not
 * know the figure; a program's registered provider (torch.cuda's allocated
 * and reserved, in memory snapshots) is then its own memory.
 *
 * Values NVML cannot mean are not readings (a driver in trouble answers
 * 4294967295 %, or more memory used than the device has): memory used above
 * the total (or a total of 0), utilization above 100 %, a temperature above
 * TL_NVML_MAX_TEMP_C, a power or power limit above TL_NVML_MAX_POWER_W, a
 * clock above TL_NVML_MAX_CLOCK_MHZ. Each
 * such value (and a process using more than the device has) is left out of
 * the reading (memory as null in the report) and
 * counted in the report's problems.nvml_values_rejected.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

typedef void *nvml_device;
typedef struct {
    unsigned long long total, free, used;
} nvml_memory;
typedef struct {
    unsigned int gpu, memory;
} nvml_utilization;
/* nvmlProcessInfo_t of the _v2 and _v3 entry points, and the older one's */
typedef struct {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
} nvml_process;
typedef struct {
    unsigned int pid;
    unsigned long long used;
} nvml_process_v1;
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1 /* nvmlClockType_t */
#define NVML_CLOCK_MEM 2
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull /* usedGpuMemory unknown (WDDM, no permission) */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work; /* the worker waits for a request or stop */
    pthread_cond_t done; /* readers wait for a reading */
    pthread_t thread;
    int started, exited, joined, stop, abandoned, fork_child;
    unsigned long requested, completed; /* readings asked for / delivered */
    const char *call;                   /* the NVML function running, or NULL */
    uint64_t call_since_ns;
    tl_gpu_reading last[TL_MAX_GPUS];
    int nlast, have_last;
    uint64_t rejected;
    char status[192];

    /* the worker's own: written before the first reading, used only by it */
    void *handle;
    int ok;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned int *);
    int (*handle_by_index)(unsigned int, nvml_device *);
    int (*name)(nvml_device, char *, unsigned int);
    int (*memory)(nvml_device, nvml_memory *);
    int (*utilization)(nvml_device, nvml_utilization *);
    int (*temperature)(nvml_device, int, unsigned int *);
    int (*power)(nvml_device, unsigned int *);
    int (*power_limit)(nvml_device, unsigned int *);
    int (*throttle)(nvml_device, unsigned long long *);
    int (*clock)(nvml_device, int, unsigned int *);      /* nvmlDeviceGetClockInfo */
    int (*base_clock)(nvml_device, int, unsigned int *); /* nvmlDeviceGetDefaultApplicationsClock */
    int base_known[TL_MAX_GPUS]; /* by device index: 1 read, -1 not supported, 0 not asked yet */
    unsigned int base_mhz[TL_MAX_GPUS];
    int (*processes)(nvml_device, unsigned int *, void *);
    const char *processes_name; /* the entry point found (v1 layout without _v2/_v3) */
    size_t process_size;        /* sizeof its nvmlProcessInfo_t */
} nv = { .lock = PTHREAD_MUTEX_INITIALIZER,
         .work = PTHREAD_COND_INITIALIZER,
         .done = PTHREAD_COND_INITIALIZER,
         .status = "not loaded" };

static void set_status(const char *what, const char *path)
{
    pthread_mutex_lock(&nv.lock);
    snprintf(nv.status, sizeof nv.status, "%s%s%s", path ? path : "", path && *what ? " " : "", what);
    pthread_mutex_unlock(&nv.lock);
}

/* The worker brackets every NVML call with these: a reader that gives up
 * waiting sees which call is running and since when. */
static void enter(const char *call)
{
    pthread_mutex_lock(&nv.lock);
    nv.call = call;
    nv.call_since_ns = tl_clock_ns_monotonic();
    pthread_mutex_unlock(&nv.lock);
}

static void leave(void)
{
    pthread_mutex_lock(&nv.lock);
    nv.call = NULL;
    pthread_mutex_unlock(&nv.lock);
}

#define CALL(fn_name, expr) (enter(fn_name), _rc = (expr), leave(), _rc)

static void *sym(const char *a, const char *b)
{
    void *p = dlsym(nv.handle, a);
    if (p == NULL && b != NULL)
        p = dlsym(nv.handle, b);
    return p;
}

/* Load the library and nvmlInit (on the worker). 0 when NVML answered. */
static int open_library(void)
{
    int _rc;
    const char *path = getenv("TALLY_NVML_LIBRARY");
    if (path == NULL || *path == '\0')
        path = "libnvidia-ml.so.1";
    enter("dlopen");
    nv.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    leave();
    if (nv.handle == NULL) {
        set_status("absent", NULL);
        return -1;
    }
    *(void **)&nv.init = sym("nvmlInit_v2", "nvmlInit");
    *(void **)&nv.shutdown = sym("nvmlShutdown", NULL);
    *(void **)&nv.count = sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&nv.handle_by_index = sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&nv.name = sym("nvmlDeviceGetName", NULL);
    *(void **)&nv.memory = sym("nvmlDeviceGetMemoryInfo", NULL);
    *(void **)&nv.utilization = sym("nvmlDeviceGetUtilizationRates", NULL);
    *(void **)&nv.temperature = sym("nvmlDeviceGetTemperature", NULL);
    *(void **)&nv.power = sym("nvmlDeviceGetPowerUsage", NULL);
    /* the limit the driver enforces (the management limit on older drivers) */
    *(void **)&nv.power_limit = sym("nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit");
    /* renamed in CUDA 12.2; the old name stays as an alias */
    *(void **)&nv.throttle = sym("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&nv.clock = sym("nvmlDeviceGetClockInfo", NULL);
    *(void **)&nv.base_clock = sym("nvmlDeviceGetDefaultApplicationsClock", NULL);
    /* The program's own memory on each device: NVML's per-process accounting,
     * the newest layout first (_v3 and _v2 share one, the first has no
     * instance ids). */
    static const char *const proc_names[] = { "nvmlDeviceGetComputeRunningProcesses_v3",
                                              "nvmlDeviceGetComputeRunningProcesses_v2",
                                              "nvmlDeviceGetComputeRunningProcesses" };
    for (size_t i = 0; i < sizeof proc_names / sizeof proc_names[0] && nv.processes == NULL; i++) {
        *(void **)&nv.processes = dlsym(nv.handle, proc_names[i]);
        nv.processes_name = proc_names[i];
        nv.process_size = i < 2 ? sizeof(nvml_process) : sizeof(nvml_process_v1);
    }
    if (!nv.init || !nv.count || !nv.handle_by_index || !nv.memory) {
        set_status("lacks the NVML entry points", path);
        dlclose(nv.handle);
        nv.handle = NULL;
        return -1;
    }
    int rc = CALL("nvmlInit_v2", nv.init());
    if (rc != 0) {
        char what[64];
        snprintf(what, sizeof what, "nvmlInit failed (%d)", rc);
        set_status(what, NULL);
        dlclose(nv.handle);
        nv.handle = NULL;
        return -1;
    }
    nv.ok = 1;
    pthread_mutex_lock(&nv.lock);
    snprintf(nv.status, sizeof nv.status, "loaded %s", path);
    pthread_mutex_unlock(&nv.lock);
    return 0;
}

/* The memory this process uses on dev by NVML's per-process accounting, into
 * g->proc_used (on the worker). Not a reading when the call fails, when this
 * pid is not in the list (no context on the device, or a container whose pid
 * namespace hides the host's pids), or when NVML does not know the figure. */
static void read_own_memory(nvml_device dev, tl_gpu_reading *g, uint64_t *rejected)
{
    enum { ON_STACK = 64 };
    unsigned char stack[ON_STACK * sizeof(nvml_process)];
    unsigned char *buf = stack;
    unsigned int n = ON_STACK;
    int _rc;
    if (nv.processes == NULL)
        return;
    int rc = CALL(nv.processes_name, nv.processes(dev, &n, buf));
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && n > ON_STACK && n <= TL_NVML_MAX_PROCESSES) {
        unsigned int want = n + 8; /* room for processes started since */
        buf = malloc((size_t)want * nv.process_size);
        n = want;
        rc = buf != NULL ? CALL(nv.processes_name, nv.processes(dev, &n, buf)) : -1;
    }
    if (rc != 0)
        goto out;
    unsigned int self = (unsigned int)getpid();
    for (unsigned int i = 0; i < n; i++) {
        const unsigned char *e = buf + (size_t)i * nv.process_size;
        unsigned int pid;
        unsigned long long used;
        /* both layouts begin with pid and usedGpuMemory */
        memcpy(&pid, e + offsetof(nvml_process, pid), sizeof pid);
        memcpy(&used, e + offsetof(nvml_process, used), sizeof used);
        if (pid != self)
            continue;
        if (used == NVML_VALUE_NOT_AVAILABLE)
            break;
        if (g->has_mem && (double)used > g->mem_total) {
            ++*rejected;
            break;
        }
        g->proc_used = (double)used;
        g->has_proc = 1;
        break;
    }
out:
    if (buf != stack)
        free(buf);
}

/* One reading of every device (on the worker); *rejected counts the values
 * left out (see the file comment). */
static int read_devices(tl_gpu_reading *out, int max, uint64_t *rejected)
{
    int n = 0, _rc;
    unsigned int count = 0;
    if (CALL("nvmlDeviceGetCount_v2", nv.count(&count)) != 0)
        return 0;
    for (unsigned int i = 0; i < count && n < max; i++) {
        nvml_device dev;
        if (CALL("nvmlDeviceGetHandleByIndex_v2", nv.handle_by_index(i, &dev)) != 0)
            continue;
        tl_gpu_reading *g = &out[n];
        memset(g, 0, sizeof *g);
        g->index = (int)i;
        if (nv.name == NULL || CALL("nvmlDeviceGetName", nv.name(dev, g->name, sizeof g->name)) != 0)
            snprintf(g->name, sizeof g->name, "GPU %u", i);
        g->name[sizeof g->name - 1] = '\0';
        nvml_memory mem;
        if (CALL("nvmlDeviceGetMemoryInfo", nv.memory(dev, &mem)) == 0) {
            if (mem.total > 0 && mem.used <= mem.total) {
                g->mem_used = (double)mem.used;
                g->mem_total = (double)mem.total;
                g->has_mem = 1;
            } else {
                ++*rejected;
            }
        }
        read_own_memory(dev, g, rejected);
        nvml_utilization u;
        if (nv.utilization && CALL("nvmlDeviceGetUtilizationRates", nv.utilization(dev, &u)) == 0) {
            if (u.gpu <= 100 && u.memory <= 100) {
                g->util_gpu = u.gpu;
                g->util_mem = u.memory;
                g->has_util = 1;
            } else {
                ++*rejected;
            }
        }
        unsigned int v;
        if (nv.temperature &&
            CALL("nvmlDeviceGetTemperature", nv.temperature(dev, 0 /* NVML_TEMPERATURE_GPU */, &v)) == 0) {
            if (v <= TL_NVML_MAX_TEMP_C) {
                g->temperature_c = v;
                g->has_temp = 1;
            } else {
                ++*rejected;
            }
        }
        if (nv.power && CALL("nvmlDeviceGetPowerUsage", nv.power(dev, &v)) == 0) {
            if (v / 1000.0 <= TL_NVML_MAX_POWER_W) {
                g->power_w = v / 1000.0; /* NVML reports milliwatts */
                g->has_power = 1;
            } else {
                ++*rejected;
            }
        }
        if (nv.power_limit && CALL("nvmlDeviceGetEnforcedPowerLimit", nv.power_limit(dev, &v)) == 0 && v > 0) {
            if (v / 1000.0 <= TL_NVML_MAX_POWER_W) {
                g->power_limit_w = v / 1000.0; /* milliwatts */
                g->has_limit = 1;
            } else {
                ++*rejected;
            }
        }
        /* the clocks now, and the base clock (NVML's default applications
         * clock of the SM: fixed, so asked once per device) */
        unsigned int sm, memclk;
        if (nv.clock && CALL("nvmlDeviceGetClockInfo", nv.clock(dev, NVML_CLOCK_SM, &sm)) == 0 &&
            CALL("nvmlDeviceGetClockInfo", nv.clock(dev, NVML_CLOCK_MEM, &memclk)) == 0) {
            if (sm <= TL_NVML_MAX_CLOCK_MHZ && memclk <= TL_NVML_MAX_CLOCK_MHZ) {
                g->sm_clock = sm;
                g->mem_clock = memclk;
                g->has_clocks = 1;
            } else {
                ++*rejected;
            }
        }
        if (nv.base_clock && i < TL_MAX_GPUS && nv.base_known[i] == 0)
            nv.base_known[i] = CALL("nvmlDeviceGetDefaultApplicationsClock",
                                    nv.base_clock(dev, NVML_CLOCK_SM, &nv.base_mhz[i])) == 0 &&
                                       nv.base_mhz[i] > 0 && nv.base_mhz[i] <= TL_NVML_MAX_CLOCK_MHZ
                                   ? 1
                                   : -1;
        if (i < TL_MAX_GPUS && nv.base_known[i] == 1) {
            g->base_sm_clock = nv.base_mhz[i];
            g->has_base = 1;
        }
        unsigned long long reasons;
        if (nv.throttle && CALL("nvmlDeviceGetCurrentClocksEventReasons", nv.throttle(dev, &reasons)) == 0) {
            g->throttle = reasons;
            g->has_throttle = 1;
        }
        n++;
    }
    return n;
}

static void *worker_main(void *arg)
{
    (void)arg;
    int opened = open_library() == 0;
    pthread_mutex_lock(&nv.lock);
    while (opened && !nv.stop) {
        if (nv.requested > nv.completed) {
            unsigned long want = nv.requested;
            tl_gpu_reading r[TL_MAX_GPUS];
            uint64_t rejected = 0;
            pthread_mutex_unlock(&nv.lock);
            int n = read_devices(r, TL_MAX_GPUS, &rejected);
            pthread_mutex_lock(&nv.lock);
            memcpy(nv.last, r, (size_t)n * sizeof r[0]);
            nv.nlast = n;
            nv.have_last = 1;
            nv.rejected += rejected;
            nv.completed = want;
            pthread_cond_broadcast(&nv.done);
            continue;
        }
        pthread_cond_wait(&nv.work, &nv.lock);
    }
    pthread_mutex_unlock(&nv.lock);
    if (opened && nv.shutdown != NULL) {
        int _rc;
        (void)CALL("nvmlShutdown", nv.shutdown());
    }
    /* The library stays loaded: a reading may still point into it (names). */
    pthread_mutex_lock(&nv.lock);
    nv.exited = 1;
    pthread_cond_broadcast(&nv.done);
    pthread_mutex_unlock(&nv.lock);
    return NULL;
}

/* Start the worker (under nv.lock) with every signal blocked, so a signal
 * handler never runs on it. 0 when it runs or ran. */
static int start_locked(void)
{
    if (nv.started)
        return 0;
    if (nv.fork_child)
        return -1;
    sigset_t all, prev;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int rc = pthread_create(&nv.thread, NULL, worker_main, NULL);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (rc != 0) {
        snprintf(nv.status, sizeof nv.status, "not read: no thread for NVML");
        return -1;
    }
    nv.started = 1;
    snprintf(nv.status, sizeof nv.status, "loading");
    return 0;
}

void tl_nvml_start(void)
{
    pthread_mutex_lock(&nv.lock);
    start_locked();
    pthread_mutex_unlock(&nv.lock);
}

/* Is the worker stuck in one call beyond TL_NVML_DEADLINE_MS? Then NVML is
 * abandoned, once and for good. Under nv.lock. */
static void check_hung_locked(void)
{
    if (nv.abandoned || nv.exited || nv.call == NULL)
        return;
    uint64_t age_ms = (tl_clock_ns_monotonic() - nv.call_since_ns) / 1000000u;
    if (age_ms < TL_NVML_DEADLINE_MS)
        return;
    nv.abandoned = 1;
    snprintf(nv.status, sizeof nv.status, "abandoned: %s did not return within %d ms", nv.call, TL_NVML_DEADLINE_MS);
    fprintf(stderr,
            "tally: NVML is not answering (%s did not return within %d ms); going on "
            "without GPU readings\n",
            nv.call, TL_NVML_DEADLINE_MS);
    pthread_cond_broadcast(&nv.done);
}

/* A worker left in a call returns into libtally some day: libtally must stay
 * mapped, whatever dlclose() the program calls. */
static atomic_int pinned;

static void keep_loaded(void)
{
    Dl_info info;
    if (dladdr((void *)keep_loaded, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

int tl_nvml_read(tl_gpu_reading *out, int max, int may_pin)
{
    int n = 0, overdue = 0;
    pthread_mutex_lock(&nv.lock);
    if (start_locked() != 0)
        goto out;
    check_hung_locked();
    if (nv.abandoned || nv.exited)
        goto out;
    unsigned long want = ++nv.requested;
    pthread_cond_signal(&nv.work);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (TL_NVML_WAIT_MS % 1000) * 1000000L;
    until.tv_sec += TL_NVML_WAIT_MS / 1000 + ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    while (nv.completed < want && !nv.exited && !nv.abandoned)
        if (pthread_cond_timedwait(&nv.done, &nv.lock, &until) == ETIMEDOUT)
            break;
    overdue = nv.completed < want && nv.call != NULL;
    if (overdue)
        check_hung_locked();
    /* the fresh reading, or else the last complete one */
    if (!nv.abandoned && nv.have_last) {
        n = nv.nlast < max ? nv.nlast : max;
        memcpy(out, nv.last, (size_t)n * sizeof *out);
    }
out:
    pthread_mutex_unlock(&nv.lock);
    /* A call overdue now may never return: pin libtally while that can still
     * be done (not during a dlclose, whose unmapping is decided before its
     * tally_shutdown runs). Outside nv.lock: dlopen takes the loader's lock. */
    if (overdue && may_pin && !atomic_exchange(&pinned, 1))
        keep_loaded();
    return n;
}

void tl_nvml_status(char *buf, size_t len)
{
    pthread_mutex_lock(&nv.lock);
    check_hung_locked();
    if (!nv.abandoned && nv.call != NULL && strcmp(nv.status, "loading") == 0) {
        uint64_t age_ms = (tl_clock_ns_monotonic() - nv.call_since_ns) / 1000000u;
        snprintf(buf, len, "loading: %s has not returned after %llu ms", nv.call, (unsigned long long)age_ms);
    } else {
        snprintf(buf, len, "%s", nv.status);
    }
    pthread_mutex_unlock(&nv.lock);
}

uint64_t tl_nvml_rejected(void)
{
    pthread_mutex_lock(&nv.lock);
    uint64_t r = nv.rejected;
    pthread_mutex_unlock(&nv.lock);
    return r;
}

void tl_nvml_close(void)
{
    pthread_mutex_lock(&nv.lock);
    if (!nv.started || nv.joined) {
        pthread_mutex_unlock(&nv.lock);
        return;
    }
    nv.stop = 1;
    pthread_cond_signal(&nv.work);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (TL_NVML_WAIT_MS % 1000) * 1000000L;
    until.tv_sec += TL_NVML_WAIT_MS / 1000 + ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    while (!nv.exited)
        if (pthread_cond_timedwait(&nv.done, &nv.lock, &until) == ETIMEDOUT)
            break;
    int exited = nv.exited;
    nv.joined = 1;
    if (!exited)
        nv.abandoned = 1;
    pthread_mutex_unlock(&nv.lock);
    if (exited) {
        pthread_join(nv.thread, NULL);
    } else {
        pthread_detach(nv.thread); /* not pinned here: this may be dlclose's shutdown */
    }
}

/* The worker does not exist in a fork child, and no thread may be started
 * there before exec (see signals.c): a fork child has no GPU readings. */
void tl_nvml_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    nv.lock = fresh;
    nv.work = fresh_cond;
    nv.done = fresh_cond;
    nv.started = nv.joined = 1;
    nv.exited = 1;
    nv.fork_child = 1;
    nv.have_last = 0;
    nv.nlast = 0;
    nv.call = NULL;
    snprintf(nv.status, sizeof nv.status, "not read in a fork child");
}
