/*
 * fuzz_trace_stream: libFuzzer target for the ingest readers (gzip_source + trace_stream).
 *
 * Each input is read four ways, through the sniffing gzip source: all bytes at once with the
 * default 1 MiB buffer, all at once with a 16-byte buffer that must grow (and gzip inflated by
 * the source's helper thread), a few bytes per read
 * call (1..7, from the input's size), and with the byte parser alone (no structural index,
 * json_scan.h). Besides "no crash, no sanitizer report", the four
 * must return the same events, counters and problems (offsets and texts): how bytes arrive may
 * never change a result. Every
 * event's name is unescaped and its args walked, so those helpers are fuzzed too.
 *
 * Built with TALLY_FUZZ_DRIVER, the file also has a main() that runs LLVMFuzzerTestOneInput
 * over files and directories named on the command line: the ctest regression over the corpus.
 */
#define _GNU_SOURCE /* nftw */
#include "ingest/gzip_source.h"
#include "ingest/trace_stream.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *g_input = "the input"; /* named in the failure message */

struct mem_src {
    const uint8_t *d;
    size_t n, pos, chunk;
};

static ssize_t mem_read(void *ctx, void *buf, size_t cap)
{
    struct mem_src *m = ctx;
    size_t k = m->n - m->pos;

    if (k > cap)
        k = cap;
    if (m->chunk && k > m->chunk)
        k = m->chunk;
    memcpy(buf, m->d + m->pos, k);
    m->pos += k;
    return (ssize_t)k;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix_view(uint64_t h, tl_view v)
{
    h = mix(h, &v.len, sizeof v.len);
    return v.ptr ? mix(h, v.ptr, v.len) : mix(h, "-", 1);
}

struct outcome {
    int rc;
    uint64_t hash;
    tl_trace_stats stats;
    unsigned problems;
};

static void read_all(const uint8_t *data, size_t size, size_t chunk, size_t buffer, int no_index, int background,
                     struct outcome *out)
{
    struct mem_src m = { data, size, 0, chunk };
    tl_gzip_source g;
    tl_trace_stream s;
    tl_trace_event ev;
    tl_trace_options o;
    uint64_t h = 0xcbf29ce484222325ull;
    char name[64];

    tl_trace_options_init(&o);
    o.buffer_size = buffer;
    o.max_event_size = 1u << 20;
    o.no_index = no_index;
    if (tl_gzip_source_init(&g, mem_read, &m) < 0)
        abort();
    g.max_output = 256u << 20; /* a gzip bomb ends as a read error, not an OOM */
    g.background = background;
    if (tl_trace_stream_open(&s, tl_gzip_source_read, &g, "fuzz", &o) < 0)
        abort();
    while ((out->rc = tl_trace_stream_next(&s, &ev)) == 1) {
        tl_args_iter it;
        tl_view key;
        tl_json_value val;
        size_t n = tl_view_unescape(ev.name, name, sizeof name);
        h = mix(h, &n, sizeof n);
        h = mix_view(h, ev.ph);
        h = mix_view(h, ev.id);
        h = mix(h, &ev.id_quoted, sizeof ev.id_quoted);
        h = mix_view(h, ev.bp);
        h = mix_view(h, ev.cat);
        h = mix_view(h, ev.pid_str);
        h = mix_view(h, ev.args);
        h = mix(h, &ev.ts_ns, sizeof ev.ts_ns);
        h = mix(h, &ev.dur_ns, sizeof ev.dur_ns);
        h = mix(h, &ev.offset, sizeof ev.offset);
        tl_args_iter_init(&it, ev.args);
        while (tl_args_next(&it, &key, &val)) {
            h = mix_view(h, key);
            h = mix(h, &val.kind, sizeof val.kind);
        }
        /* the members the index walker kept are the members the parser finds */
        if (ev.args_index) {
            tl_args_iter ia, ip;
            tl_view ka, kp;
            tl_json_value va, vp;
            int more;
            tl_args_iter_init_event(&ia, &ev);
            tl_args_iter_init(&ip, ev.args);
            do {
                more = tl_args_next(&ia, &ka, &va);
                if (more != tl_args_next(&ip, &kp, &vp) ||
                    (more && (ka.ptr != kp.ptr || ka.len != kp.len || va.kind != vp.kind ||
                              va.text.ptr != vp.text.ptr || va.text.len != vp.text.len ||
                              va.is_number != vp.is_number || (va.is_number && va.number != vp.number)))) {
                    fprintf(stderr,
                            "fuzz_trace_stream: %s: the indexed args of the event at "
                            "offset %llu differ from the parsed ones\n",
                            g_input, (unsigned long long)ev.offset);
                    abort();
                }
            } while (more);
        }
    }
    /* The problems themselves, not only their number: the same offsets and texts. */
    for (unsigned i = 0; i < s.problem_count; i++) {
        h = mix(h, &s.problems[i].offset, sizeof s.problems[i].offset);
        h = mix(h, s.problems[i].text, strlen(s.problems[i].text));
    }
    h = mix(h, &s.has_error, sizeof s.has_error);
    if (s.has_error) {
        h = mix(h, &s.error.offset, sizeof s.error.offset);
        h = mix(h, s.error.text, strlen(s.error.text));
    }
    out->hash = h;
    out->stats = s.stats;
    out->stats.bytes_read = 0; /* how far ahead was read when reading stopped early: buffer-bound */
    out->problems = s.problem_count;
    tl_trace_stream_release(&s);
    tl_gzip_source_release(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct outcome a, b, c, d;

    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    memset(&d, 0, sizeof d);
    read_all(data, size, 0, 1u << 20, 0, 0, &a);
    read_all(data, size, 0, 16, 0, 1, &b); /* gzip inflated by a helper thread */
    read_all(data, size, 1 + size % 7, 16, 0, 0, &c);
    read_all(data, size, 0, 1u << 20, 1, 0, &d); /* the byte parser alone, no structural index */
    if (a.rc != b.rc || a.rc != c.rc || a.rc != d.rc || a.hash != b.hash || a.hash != c.hash || a.hash != d.hash ||
        memcmp(&a.stats, &b.stats, sizeof a.stats) || memcmp(&a.stats, &c.stats, sizeof a.stats) ||
        memcmp(&a.stats, &d.stats, sizeof a.stats) || a.problems != b.problems || a.problems != c.problems ||
        a.problems != d.problems) {
        fprintf(stderr,
                "fuzz_trace_stream: %s: results depend on how the bytes arrive or on the "
                "structural index: rc %d/%d/%d/%d, events %llu/%llu/%llu/%llu, warnings "
                "%llu/%llu/%llu/%llu, problems %u/%u/%u/%u\n",
                g_input, a.rc, b.rc, c.rc, d.rc, (unsigned long long)a.stats.events, (unsigned long long)b.stats.events,
                (unsigned long long)c.stats.events, (unsigned long long)d.stats.events,
                (unsigned long long)a.stats.warnings, (unsigned long long)b.stats.warnings,
                (unsigned long long)c.stats.warnings, (unsigned long long)d.stats.warnings, a.problems, b.problems,
                c.problems, d.problems);
        abort();
    }
    return 0;
}

#ifdef TALLY_FUZZ_DRIVER
#include <ftw.h>

static unsigned long g_files;

static int run_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    FILE *f;
    uint8_t *d;
    size_t n;

    (void)ftw;
    if (type != FTW_F)
        return 0;
    if (!(f = fopen(path, "rb"))) {
        fprintf(stderr, "fuzz_trace_stream: cannot open %s\n", path);
        return -1;
    }
    n = (size_t)st->st_size;
    d = malloc(n ? n : 1);
    if (!d || fread(d, 1, n, f) != n) {
        fprintf(stderr, "fuzz_trace_stream: cannot read %s\n", path);
        fclose(f);
        free(d);
        return -1;
    }
    fclose(f);
    g_input = path;
    LLVMFuzzerTestOneInput(d, n);
    free(d);
    g_files++;
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (nftw(argv[i], run_file, 16, FTW_PHYS) != 0)
            return 1;
    printf("%lu inputs read the same four ways\n", g_files);
    return g_files ? 0 : 1;
}
#endif
