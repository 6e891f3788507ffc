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
 * FAKE_NVML_THROTTLE (the reasons' bit mask), each for every device.
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

enum { NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
       NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_INSUFFICIENT_SIZE = 7 };

typedef struct fake_device { unsigned int index; } *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

#define FAKE_COUNT 2u
#define GIB (1024ull * 1024 * 1024)

static struct fake_device devices[FAKE_COUNT] = { { 0 }, { 1 } };
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

static int garbage(void) { return env("FAKE_NVML_GARBAGE", 0) != 0; }

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
    memory->total = 80 * GIB;
    memory->used = garbage() ? memory->total + GIB : (device->index + 1) * 10 * GIB;
    memory->free = garbage() ? 0 : memory->total - memory->used;
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
