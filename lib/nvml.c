/*
 * nvml.c - GPU readings through NVML, loaded with dlopen when present.
 *
 * No CUDA header or library is needed to build: the few NVML entry points
 * used are declared here with the types of NVML's stable ABI (the _v2 names
 * exist since CUDA 7). TALLY_NVML_LIBRARY names another library to load, which
 * is how the tests exercise this path with a fake libnvidia-ml.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *nvml_device;
typedef struct { unsigned long long total, free, used; } nvml_memory;
typedef struct { unsigned int gpu, memory; } nvml_utilization;

static struct {
    pthread_mutex_t lock;
    int tried, ok;
    void *handle;
    char status[128];
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
} nv = { .lock = PTHREAD_MUTEX_INITIALIZER, .status = "not loaded" };

static void *sym(const char *a, const char *b)
{
    void *p = dlsym(nv.handle, a);
    if (p == NULL && b != NULL)
        p = dlsym(nv.handle, b);
    return p;
}

int tl_nvml_open(const char *path)
{
    pthread_mutex_lock(&nv.lock);
    if (nv.tried)
        goto out;
    nv.tried = 1;
    if (path == NULL)
        path = getenv("TALLY_NVML_LIBRARY");
    if (path == NULL || *path == '\0')
        path = "libnvidia-ml.so.1";
    nv.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (nv.handle == NULL) {
        snprintf(nv.status, sizeof nv.status, "absent");
        goto out;
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
    if (!nv.init || !nv.count || !nv.handle_by_index || !nv.memory) {
        snprintf(nv.status, sizeof nv.status, "%s lacks the NVML entry points", path);
        dlclose(nv.handle);
        nv.handle = NULL;
        goto out;
    }
    int rc = nv.init();
    if (rc != 0) {
        snprintf(nv.status, sizeof nv.status, "nvmlInit failed (%d)", rc);
        dlclose(nv.handle);
        nv.handle = NULL;
        goto out;
    }
    nv.ok = 1;
    snprintf(nv.status, sizeof nv.status, "loaded %s", path);
out:
    pthread_mutex_unlock(&nv.lock);
    return nv.ok ? 0 : -1;
}

const char *tl_nvml_status(void) { return nv.status; }

int tl_nvml_read(tl_gpu_reading *out, int max)
{
    int n = 0;
    unsigned int count = 0;
    pthread_mutex_lock(&nv.lock);
    if (!nv.ok || nv.count(&count) != 0)
        goto out;
    for (unsigned int i = 0; i < count && n < max; i++) {
        nvml_device dev;
        if (nv.handle_by_index(i, &dev) != 0)
            continue;
        tl_gpu_reading *g = &out[n];
        memset(g, 0, sizeof *g);
        g->index = (int)i;
        if (nv.name == NULL || nv.name(dev, g->name, sizeof g->name) != 0)
            snprintf(g->name, sizeof g->name, "GPU %u", i);
        g->name[sizeof g->name - 1] = '\0';
        nvml_memory mem;
        if (nv.memory(dev, &mem) == 0) {
            g->mem_used = (double)mem.used;
            g->mem_total = (double)mem.total;
        }
        nvml_utilization u;
        if (nv.utilization && nv.utilization(dev, &u) == 0) {
            g->util_gpu = u.gpu;
            g->util_mem = u.memory;
            g->has_util = 1;
        }
        unsigned int v;
        if (nv.temperature && nv.temperature(dev, 0 /* NVML_TEMPERATURE_GPU */, &v) == 0) {
            g->temperature_c = v;
            g->has_temp = 1;
        }
        if (nv.power && nv.power(dev, &v) == 0) {
            g->power_w = v / 1000.0; /* NVML reports milliwatts */
            g->has_power = 1;
        }
        if (nv.power_limit && nv.power_limit(dev, &v) == 0 && v > 0) {
            g->power_limit_w = v / 1000.0; /* milliwatts */
            g->has_limit = 1;
        }
        unsigned long long reasons;
        if (nv.throttle && nv.throttle(dev, &reasons) == 0) {
            g->throttle = reasons;
            g->has_throttle = 1;
        }
        n++;
    }
out:
    pthread_mutex_unlock(&nv.lock);
    return n;
}

void tl_nvml_close(void)
{
    pthread_mutex_lock(&nv.lock);
    if (nv.ok && nv.shutdown)
        nv.shutdown();
    nv.ok = 0;
    /* The library stays loaded: a late reader may still hold a function pointer. */
    pthread_mutex_unlock(&nv.lock);
}

/* NVML's lock may have been held by another thread at fork. */
void tl_nvml_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    nv.lock = fresh;
}
