/*
 * memory.c - memory readings for snapshots and the sampler: the process RSS
 * (/proc/self/statm), its peak (getrusage), system total and available memory
 * (/proc/meminfo), NVML devices, and the programs' registered providers.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

double tl_memory_rss(void)
{
    long pages_total = 0, pages_rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_rss) != 2)
        pages_rss = 0;
    fclose(f);
    return (double)pages_rss * (double)sysconf(_SC_PAGESIZE);
}

double tl_memory_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_maxrss * 1024.0; /* Linux reports KiB */
}

void tl_memory_system(double *total, double *available)
{
    char line[256];
    *total = *available = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long kb;
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            *total = (double)kb * 1024.0;
        else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            *available = (double)kb * 1024.0;
    }
    fclose(f);
}

struct tally_provider_sink {
    tl_mem_reading *out;
    const char *provider;
    int count; /* readings from this provider in this call */
};

void tally_provider_put(tally_provider_sink *sink, const char *key, double bytes)
{
    if (sink == NULL || key == NULL || sink->count >= TL_MAX_READINGS)
        return;
    tl_mem_reading *out = sink->out;
    if (out->nreadings >= (int)(sizeof out->readings / sizeof out->readings[0]))
        return;
    tl_reading *r = &out->readings[out->nreadings++];
    snprintf(r->key, sizeof r->key, "%s.%s", sink->provider, key);
    r->value = bytes;
    sink->count++;
}

void tl_memory_read(tl_mem_reading *out, int with_providers)
{
    memset(out, 0, sizeof *out);
    out->rss = tl_memory_rss();
    out->peak_rss = tl_memory_peak_rss();
    if (out->peak_rss < out->rss)
        out->peak_rss = out->rss;
    tl_memory_system(&out->sys_total, &out->sys_available);
    /* a snapshot, on a host thread: it may pin libtally (nvml.c) */
    out->ngpus = tl_nvml_read(out->gpus, TL_MAX_GPUS, 1); /* waits TL_NVML_WAIT_MS at most */
    if (!with_providers)
        return;
    /* Copy the table so a provider runs without the lock held. */
    tl_provider providers[TL_MAX_PROVIDERS];
    pthread_mutex_lock(&tl_g.lock);
    int n = tl_g.nproviders;
    memcpy(providers, tl_g.providers, sizeof providers);
    pthread_mutex_unlock(&tl_g.lock);
    for (int i = 0; i < n; i++) {
        tally_provider_sink sink = { out, providers[i].name, 0 };
        providers[i].fn(&sink, providers[i].user);
    }
}
