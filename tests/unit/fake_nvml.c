/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1 with fixed readings.
 *
 * test_nvml points TALLY_NVML_LIBRARY at this library and expects exactly
 * these numbers in the report: 2 devices named "Fake GPU 0" and "Fake GPU 1",
 * 80 GiB of memory each with 10 GiB (device 0) and 20 GiB (device 1) used,
 * 75 % GPU and 40 % memory utilization, 60 C, 300000 mW (300 W), an enforced
 * power limit of 400000 mW (400 W) and no clocks event (throttle) reasons. Like
 * the real library it answers NVML_ERROR_UNINITIALIZED before nvmlInit_v2 and
 * after the matching nvmlShutdown, so a caller that skips nvmlInit gets no
 * numbers. Signatures follow NVML's stable ABI (nvml.h).
 *
 * The environment changes the readings, so the rules can be tested on a real
 * collector run: FAKE_NVML_DEVICES (1 or 2), FAKE_NVML_TEMP (C),
 * FAKE_NVML_POWER_MW, FAKE_NVML_LIMIT_MW (0: the limit is not supported) and
 * FAKE_NVML_THROTTLE (the reasons' bit mask), FAKE_NVML_SM_MHZ and
 * FAKE_NVML_MEM_MHZ (the clocks now: 1410 and 1593 MHz by default) and
 * FAKE_NVML_BASE_MHZ (the SM's default applications clock, 1095 MHz; 0: not
 * supported), each for every device.
 *
 * Processes (NVML's per-process accounting, nvmlDeviceGetComputeRunningProcesses
 * _v3 and the first layout; built with FAKE_NVML_NO_V3, the library has only
 * the first, as drivers before CUDA 11 do), on every device:
 *   FAKE_NVML_OWN_MIB=N          the calling process (getpid()) uses N MiB
 *                                (unset: it is not listed)
 *   FAKE_NVML_OWN_STEP_MIB=N     ... and N MiB more at every reading of the device
 *   FAKE_NVML_OTHER_MIB=N        another process (pid getpid() + 1) uses N MiB
 *                                (unset: not listed)
 *   FAKE_NVML_OTHER_JUMP_MIB=N   ... and N MiB more from the device's reading
 *   FAKE_NVML_OTHER_JUMP_AT=K    number K on (default 4; readings count from 1)
 * The device-wide used memory grows with them: 10 or 20 GiB plus the own
 * process's growth plus the other process's jump. A reading is a call of
 * nvmlDeviceGetMemoryInfo; the process list answers for the last one.
 *
 * And it misbehaves as a wedged or sick driver does (issue 26), so that the
 * collector's defences can be tested:
 *   FAKE_NVML_HANG=fn      the NVML function fn (e.g. nvmlInit_v2,
 *                          nvmlDeviceGetMemoryInfo, nvmlShutdown) never returns
 *   FAKE_NVML_DELAY_MS=N   every NVML call takes N ms
 *   FAKE_NVML_GARBAGE=1    impossible values: 4294967295 % utilization, more
 *                          memory used than the device has (total + 1 GiB),
 *                          a temperature of 4294967295 C and power (and power
 *                          limit) of 4294967295 mW
 * The file FAKE_NVML_CALLS, when set, gets one line per call, "fn tid" (the
 * function and the calling thread's id), so a test can see that NVML is
 * never called on the program's main thread (whose tid is the pid).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAKE_API __attribute__((visibility("default")))

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7
};

typedef struct fake_device {
    unsigned int index;
} * nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

#define FAKE_COUNT 2u
#define GIB (1024ull * 1024 * 1024)

static struct fake_device devices[FAKE_COUNT] = { { 0 }, { 1 } };
static unsigned long long readings[FAKE_COUNT]; /* nvmlDeviceGetMemoryInfo calls per device */
#define MIB (1024ull * 1024)

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
static int initialized; /* nvmlInit_v2 calls not yet shut down */

/* A reading from the environment, else its default. */
static unsigned long long env(const char *name, unsigned long long def)
{
    const char *v = getenv(name);
    char *end;
    if (v == NULL || *v == '\0')
        return def;
    unsigned long long x = strtoull(v, &end, 10);
    return *end == '\0' ? x : def;
}

static unsigned int count(void)
{
    unsigned long long n = env("FAKE_NVML_DEVICES", FAKE_COUNT);
    return n >= 1 && n <= FAKE_COUNT ? (unsigned int)n : FAKE_COUNT;
}

FAKE_API int nvmlInit_v2(void);
FAKE_API int nvmlShutdown(void);
FAKE_API int nvmlDeviceGetCount_v2(unsigned int *n);
FAKE_API int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
FAKE_API int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
FAKE_API int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
FAKE_API int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
FAKE_API int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp);
FAKE_API int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
FAKE_API int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
FAKE_API int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons);
FAKE_API int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
FAKE_API int nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, int type, unsigned int *clock);
#ifndef FAKE_NVML_NO_V3
FAKE_API int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos);
#endif
FAKE_API int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos);

/* The misbehaviour of FAKE_NVML_HANG and FAKE_NVML_DELAY_MS, at the start of
 * every call. */
static void misbehave(const char *fn)
{
    const char *hang = getenv("FAKE_NVML_HANG");
    const char *log = getenv("FAKE_NVML_CALLS");
    if (log != NULL && *log != '\0') {
        FILE *f = fopen(log, "a");
        if (f != NULL) {
            fprintf(f, "%s %ld\n", fn, (long)syscall(SYS_gettid));
            fclose(f);
        }
    }
    if (hang != NULL && strcmp(hang, fn) == 0)
        for (;;)
            pause(); /* a wedged driver: never returns */
    unsigned long long ms = env("FAKE_NVML_DELAY_MS", 0);
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
}

static int garbage(void)
{
    return env("FAKE_NVML_GARBAGE", 0) != 0;
}

static int check(nvmlDevice_t device, const void *out)
{
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (device == NULL || device->index >= count() || device != &devices[device->index] || !out)
        return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

int nvmlInit_v2(void)
{
    misbehave("nvmlInit_v2");
    initialized++;
    return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    misbehave("nvmlShutdown");
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    initialized--;
    return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    misbehave("nvmlDeviceGetCount_v2");
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (n == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *n = count();
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    misbehave("nvmlDeviceGetHandleByIndex_v2");
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= count() || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    misbehave("nvmlDeviceGetName");
    int rc = check(device, name);
    if (rc != NVML_SUCCESS)
        return rc;
    int n = snprintf(name, length, "Fake GPU %u", device->index);
    return n < 0 || (unsigned int)n >= length ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    misbehave("nvmlDeviceGetMemoryInfo");
    int rc = check(device, memory);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned long long k = ++readings[device->index];
    unsigned long long own = getenv("FAKE_NVML_OWN_MIB") ? env("FAKE_NVML_OWN_STEP_MIB", 0) * MIB * (k - 1) : 0;
    unsigned long long other = getenv("FAKE_NVML_OTHER_MIB") && k >= env("FAKE_NVML_OTHER_JUMP_AT", 4)
                                   ? env("FAKE_NVML_OTHER_JUMP_MIB", 0) * MIB
                                   : 0;
    memory->total = 80 * GIB;
    memory->used = garbage() ? memory->total + GIB : (device->index + 1) * 10 * GIB + own + other;
    memory->free = garbage() ? 0 : memory->total - memory->used;
    return NVML_SUCCESS;
}

/* NVML_CLOCK_SM (1) and NVML_CLOCK_MEM (2): FAKE_NVML_SM_MHZ (default 1410),
 * FAKE_NVML_MEM_MHZ (default 1593). */
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    misbehave("nvmlDeviceGetClockInfo");
    int rc = check(device, clock);
    if (rc != NVML_SUCCESS)
        return rc;
    if (type != 1 && type != 2)
        return NVML_ERROR_INVALID_ARGUMENT;
    *clock = (unsigned int)(type == 1 ? env("FAKE_NVML_SM_MHZ", 1410) : env("FAKE_NVML_MEM_MHZ", 1593));
    return NVML_SUCCESS;
}

/* The SM's default applications clock (the base clock): FAKE_NVML_BASE_MHZ
 * (default 1095; 0: not supported). */
int nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, int type, unsigned int *clock)
{
    misbehave("nvmlDeviceGetDefaultApplicationsClock");
    int rc = check(device, clock);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned long long base = env("FAKE_NVML_BASE_MHZ", 1095);
    if (type != 1 || base == 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *clock = (unsigned int)base;
    return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    misbehave("nvmlDeviceGetUtilizationRates");
    int rc = check(device, utilization);
    if (rc != NVML_SUCCESS)
        return rc;
    utilization->gpu = garbage() ? 4294967295u : 75;
    utilization->memory = 40;
    return NVML_SUCCESS;
}

int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp)
{
    misbehave("nvmlDeviceGetTemperature");
    int rc = check(device, temp);
    if (rc != NVML_SUCCESS)
        return rc;
    if (sensor != 0) /* NVML_TEMPERATURE_GPU */
        return NVML_ERROR_INVALID_ARGUMENT;
    *temp = garbage() ? 4294967295u : (unsigned int)env("FAKE_NVML_TEMP", 60);
    return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    misbehave("nvmlDeviceGetPowerUsage");
    int rc = check(device, power);
    if (rc != NVML_SUCCESS)
        return rc;
    *power = garbage() ? 4294967295u : (unsigned int)env("FAKE_NVML_POWER_MW", 300000); /* milliwatts */
    return NVML_SUCCESS;
}

int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    misbehave("nvmlDeviceGetEnforcedPowerLimit");
    int rc = check(device, limit);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned long long mw = env("FAKE_NVML_LIMIT_MW", 400000);
    if (mw == 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *limit = garbage() ? 4294967295u : (unsigned int)mw;
    return NVML_SUCCESS;
}

int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    misbehave("nvmlDeviceGetCurrentClocksEventReasons");
    int rc = check(device, reasons);
    if (rc != NVML_SUCCESS)
        return rc;
    *reasons = env("FAKE_NVML_THROTTLE", 0);
    return NVML_SUCCESS;
}

/* The processes of FAKE_NVML_OWN_* and FAKE_NVML_OTHER_* at the device's last
 * reading: pid and bytes, *n of them (at most 2). */
static void processes(const struct fake_device *d, unsigned int pid[2], unsigned long long used[2], unsigned int *n)
{
    unsigned long long k = readings[d->index] ? readings[d->index] : 1;
    *n = 0;
    /* the other process first: a reader with the wrong layout misses this one */
    if (getenv("FAKE_NVML_OTHER_MIB") != NULL) {
        pid[*n] = (unsigned int)getpid() + 1;
        used[(*n)++] = (env("FAKE_NVML_OTHER_MIB", 0) +
                        (k >= env("FAKE_NVML_OTHER_JUMP_AT", 4) ? env("FAKE_NVML_OTHER_JUMP_MIB", 0) : 0)) *
                       MIB;
    }
    if (getenv("FAKE_NVML_OWN_MIB") != NULL) {
        pid[*n] = (unsigned int)getpid();
        used[(*n)++] = garbage() ? ~0ull /* NVML_VALUE_NOT_AVAILABLE */
                                 : (env("FAKE_NVML_OWN_MIB", 0) + env("FAKE_NVML_OWN_STEP_MIB", 0) * (k - 1)) * MIB;
    }
}

/* NVML's contract: *count is the room in infos; too little room answers
 * NVML_ERROR_INSUFFICIENT_SIZE with the count needed. */
#ifndef FAKE_NVML_NO_V3
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_t *infos)
{
    misbehave("nvmlDeviceGetComputeRunningProcesses_v3");
    int rc = check(device, count);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned int pid[2], n;
    unsigned long long used[2];
    processes(device, pid, used, &n);
    if (*count < n || (n > 0 && infos == NULL)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; i++)
        infos[i] = (nvmlProcessInfo_t){ pid[i], used[i], 0xFFFFFFFFu, 0xFFFFFFFFu };
    *count = n;
    return NVML_SUCCESS;
}
#endif

int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v1_t *infos)
{
    misbehave("nvmlDeviceGetComputeRunningProcesses");
    int rc = check(device, count);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned int pid[2], n;
    unsigned long long used[2];
    processes(device, pid, used, &n);
    if (*count < n || (n > 0 && infos == NULL)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; i++)
        infos[i] = (nvmlProcessInfo_v1_t){ pid[i], used[i] };
    *count = n;
    return NVML_SUCCESS;
}
