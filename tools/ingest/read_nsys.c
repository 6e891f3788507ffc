/*
 * read_nsys.c - an Nsight Systems SQLite export into a per-rank profile
 * (read_nsys.h): each row of the CUDA and NVTX tables becomes the Chrome
 * trace event a PyTorch profiler (Kineto) trace holds for it, streamed in
 * start order into tl_read_trace.
 *
 * What each table becomes (docs/inputs.md, "Nsight Systems"):
 *   CUPTI_ACTIVITY_KIND_KERNEL   "kernel" on (deviceId, streamId), named by
 *                                StringIds[demangledName], with its
 *                                correlation id, grid and block
 *   CUPTI_ACTIVITY_KIND_MEMCPY   "gpu_memcpy" named as Kineto names copies
 *                                ("Memcpy HtoD (Pinned -> Device)"), bytes
 *   CUPTI_ACTIVITY_KIND_MEMSET   "gpu_memset" ("Memset (Device)"), bytes
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  "cuda_sync" ("Stream Sync", ...)
 *   CUPTI_ACTIVITY_KIND_RUNTIME  "cuda_runtime" (cuda*) or "cuda_driver"
 *                                (cu*) on the calling thread, the name's
 *                                "_v7000" suffix dropped; its correlation id
 *                                is what links a kernel to its launch
 *   NVTX_EVENTS                  push/pop and start/end ranges (eventType
 *                                59, 60) as "user_annotation" on their thread
 *   ThreadNames, PROCESSES       thread and process names
 *   TARGET_INFO_GPU (+ TARGET_INFO_CUDA_DEVICE)  device names and memory
 *   TARGET_INFO_SESSION_START_TIME  the wall clock of time 0
 * A thread or process is nsys' serialized globalTid / globalPid: the pid is
 * globalTid / 0x1000000 % 0x1000000, the tid globalTid % 0x1000000.
 */
#define _GNU_SOURCE
#include "read_nsys.h"
#include "read_trace.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef TALLY_HAVE_SQLITE
#include <sqlite3.h>
#endif

int tl_bytes_are_sqlite(const unsigned char *b, size_t n)
{
    return n >= 16 && memcmp(b, "SQLite format 3", 16) == 0; /* the 16 bytes include the NUL */
}

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

int tl_nsys_report_name(const char *name)
{
    return ends_with_ci(name, ".nsys-rep") || ends_with_ci(name, ".qdrep");
}

const char tl_nsys_report_advice[] =
    "an Nsight Systems report (.nsys-rep): tally reads its SQLite export; run `nsys export --type sqlite FILE` "
    "and give tally the .sqlite file it writes";

#ifndef TALLY_HAVE_SQLITE

int tl_read_nsys(tl_profile *p, const char *path, tl_read_fn read, void *ctx)
{
    (void)path, (void)read, (void)ctx;
    tl_profile_skip(p, "an SQLite database (an Nsight Systems export?): this tally was built without SQLite "
                       "(libsqlite3-dev), so it cannot read one; rebuild with it");
    return 0;
}

#else

/* Names longer than this are cut (a kernel's demangled template name can be
 * long, but not this long). */
#define NSYS_MAX_NAME 8192
/* Processes told apart for the "one export, several processes" warning. */
#define NSYS_MAX_PIDS 16

enum { K_KERNEL = 0, K_MEMCPY, K_MEMSET, K_RUNTIME, K_NVTX, K_SYNC };
enum { ST_HEADER = 0, ST_ROWS, ST_FOOTER, ST_DONE };

typedef struct gen {
    sqlite3 *db;
    sqlite3_stmt *rows;
    int stage;
    char *buf;
    size_t len, pos, cap;
    int oom;
    uint64_t events;   /* events written */
    uint64_t bad_rows; /* rows with a negative start or an end before the start */
    char err[256];     /* the database error that ended the rows; "" none */
    int64_t pids[NSYS_MAX_PIDS];
    int npids, more_pids;
    int64_t base_ns; /* TARGET_INFO_SESSION_START_TIME.utcEpochNs; INT64_MIN unknown */
} gen;

/* ---- the output buffer -------------------------------------------------- */

static void put(gen *g, const char *s, size_t n)
{
    if (g->oom)
        return;
    if (g->len + n + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 4096;
        while (cap < g->len + n + 1)
            cap *= 2;
        char *b = realloc(g->buf, cap);
        if (b == NULL) {
            g->oom = 1;
            return;
        }
        g->buf = b;
        g->cap = cap;
    }
    memcpy(g->buf + g->len, s, n);
    g->len += n;
}

static void puts_(gen *g, const char *s)
{
    put(g, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void putf(gen *g, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(g, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A JSON string: quotes, backslashes and control bytes escaped; other bytes
 * (UTF-8 or not) as they are -- the trace reader copes with either. */
static void put_str(gen *g, const char *s, size_t n)
{
    if (n > NSYS_MAX_NAME)
        n = NSYS_MAX_NAME;
    put(g, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(g, s + run, i - run);
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            put(g, e, 2);
        } else {
            putf(g, "\\u%04x", c);
        }
        run = i + 1;
    }
    put(g, s + run, n - run);
    put(g, "\"", 1);
}

/* ns -> Chrome's µs with the ns kept: 1234567 -> 1234.567 (t >= 0). */
static void put_us(gen *g, int64_t t)
{
    putf(g, "%" PRId64 ".%03d", t / 1000, (int)(t % 1000));
}

/* ---- the database -------------------------------------------------------- */

/* A table (never a view: a view could run anything) of that name. */
static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static int has_column(sqlite3 *db, const char *table, const char *col)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* SQL text, bounded: the query is built from the columns the export has. */
typedef struct sql {
    char s[8192];
    size_t n;
    int full;
} sql;

__attribute__((format(printf, 2, 3))) static void sqlf(sql *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q->s + q->n, sizeof q->s - q->n, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof q->s - q->n)
        q->full = 1;
    else
        q->n += (size_t)n;
}

/* "t.col" when the table has the column, else the fallback expression. */
static const char *col(sqlite3 *db, const char *table, const char *name, const char *fallback, char *out, size_t len)
{
    if (!has_column(db, table, name))
        return fallback;
    snprintf(out, len, "t.\"%s\"", name);
    return out;
}

/* One SELECT of the union: kind, start, end, device, stream, correlation,
 * global id, name, n1..n6 (per kind: grid and block; bytes and kinds; ...). */
static int add_select(sqlite3 *db, sql *q, int kind, const char *table, const char *name_id, const char *name_text,
                      const char *gid, const char *const n[6], const char *where)
{
    if (!has_table(db, table) || !has_column(db, table, "start") || !has_column(db, table, "end"))
        return 0;
    char b[10][64];
    const char *dev = col(db, table, "deviceId", "-1", b[0], sizeof b[0]);
    const char *stream = col(db, table, "streamId", "-1", b[1], sizeof b[1]);
    const char *corr = col(db, table, "correlationId", "0", b[2], sizeof b[2]);
    const char *g = col(db, table, gid, "0", b[3], sizeof b[3]);
    const char *nx[6];
    for (int i = 0; i < 6; i++)
        nx[i] = n[i] != NULL ? col(db, table, n[i], "NULL", b[4 + i], sizeof b[4 + i]) : "NULL";
    /* the name: a StringIds id (kernels, runtime calls), or text with an id
     * as the fallback (NVTX: text when the range's string was not registered) */
    const char *id_col = NULL;
    char idb[64];
    if (name_id != NULL && has_table(db, "StringIds"))
        id_col = col(db, table, name_id, NULL, idb, sizeof idb);
    char nameb[64], namex[192];
    const char *text = name_text != NULL ? col(db, table, name_text, NULL, nameb, sizeof nameb) : NULL;
    if (id_col != NULL && text != NULL)
        snprintf(namex, sizeof namex, "COALESCE(%s, s.value)", text);
    else if (id_col != NULL)
        snprintf(namex, sizeof namex, "s.value");
    else
        snprintf(namex, sizeof namex, "%s", text != NULL ? text : "NULL");
    sqlf(q, "%sSELECT %d, t.start, t.\"end\", %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM \"%s\" AS t",
         q->n ? " UNION ALL " : "", kind, dev, stream, corr, g, namex, nx[0], nx[1], nx[2], nx[3], nx[4], nx[5], table);
    if (id_col != NULL)
        sqlf(q, " LEFT JOIN StringIds AS s ON s.id = %s", id_col);
    sqlf(q, " WHERE t.start IS NOT NULL AND t.\"end\" IS NOT NULL%s%s", where ? " AND " : "", where ? where : "");
    return 1;
}

static int build_query(sqlite3 *db, sql *q)
{
    int tables = 0;
    /* demangledName is the full name Kineto shows; older exports have shortName only */
    const char *kname = has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "demangledName") ? "demangledName"
                        : has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName")   ? "shortName"
                                                                                      : "name";
    static const char *const kn[6] = { "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ" };
    tables += add_select(db, q, K_KERNEL, "CUPTI_ACTIVITY_KIND_KERNEL", kname, NULL, "globalPid", kn, NULL);
    static const char *const cn[6] = { "bytes", "copyKind", "srcKind", "dstKind", NULL, NULL };
    tables += add_select(db, q, K_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY", NULL, NULL, "globalPid", cn, NULL);
    static const char *const sn[6] = { "bytes", "memKind", NULL, NULL, NULL, NULL };
    tables += add_select(db, q, K_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET", NULL, NULL, "globalPid", sn, NULL);
    static const char *const yn[6] = { "syncType", NULL, NULL, NULL, NULL, NULL };
    tables += add_select(db, q, K_SYNC, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", NULL, NULL, "globalPid", yn, NULL);
    static const char *const none[6] = { NULL, NULL, NULL, NULL, NULL, NULL };
    tables += add_select(db, q, K_RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME", "nameId", NULL, "globalTid", none, NULL);
    /* 59 NvtxPushPopRange, 60 NvtxStartEndRange (ENUM_NSYS_EVENT_TYPE); marks,
     * domains and categories are not ranges */
    static const char *const vn[6] = { "eventType", NULL, NULL, NULL, NULL, NULL };
    if (has_column(db, "NVTX_EVENTS", "eventType"))
        tables +=
            add_select(db, q, K_NVTX, "NVTX_EVENTS", "textId", "text", "globalTid", vn, "t.eventType IN (59, 60)");
    /* start order, the longer of two ranges that start together first (the outer one) */
    sqlf(q, " ORDER BY 2, 3 DESC");
    return tables;
}

static int64_t int_or(sqlite3_stmt *st, int i, int64_t dflt)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? dflt : (int64_t)sqlite3_column_int64(st, i);
}

/* One value of a query, or dflt. */
static int64_t query_int(sqlite3 *db, const char *q, int64_t dflt)
{
    sqlite3_stmt *st;
    int64_t v = dflt;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        return dflt;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = int_or(st, 0, dflt);
    sqlite3_finalize(st);
    return v;
}

static void query_text(sqlite3 *db, const char *q, char *out, size_t len)
{
    sqlite3_stmt *st;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
        snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* ---- the events ---------------------------------------------------------- */

/* CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind as Kineto names them. */
static const char *copy_kind(int64_t k)
{
    static const char *const names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };
    return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

static const char *memory_kind(int64_t k)
{
    static const char *const names[] = { "Unknown", "Pageable", "Pinned",        "Device",
                                         "Array",   "Managed",  "Device Static", "Managed Static" };
    return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

/* CUpti_ActivitySynchronizationType, as Kineto names it. */
static const char *sync_kind(int64_t k)
{
    static const char *const names[] = { "Unknown", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync" };
    return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

static void note_pid(gen *g, int64_t pid)
{
    for (int i = 0; i < g->npids; i++)
        if (g->pids[i] == pid)
            return;
    if (g->npids < NSYS_MAX_PIDS)
        g->pids[g->npids++] = pid;
    else
        g->more_pids = 1;
}

/* "cudaLaunchKernel_v7000" -> length of "cudaLaunchKernel" (nsys' API names
 * carry the version of the call; Kineto's and the blocking-call table's do not). */
static size_t api_name_len(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && isdigit((unsigned char)s[i - 1]))
        i--;
    if (i < n && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_')
        return i - 2;
    return n;
}

static void row_event(gen *g, sqlite3_stmt *st)
{
    int kind = (int)sqlite3_column_int(st, 0);
    int64_t start = sqlite3_column_int64(st, 1), end = sqlite3_column_int64(st, 2);
    if (start < 0 || end < start) {
        g->bad_rows++;
        return;
    }
    int64_t dev = int_or(st, 3, -1), stream = int_or(st, 4, -1), corr = int_or(st, 5, 0), gid = int_or(st, 6, 0);
    const char *name = (const char *)sqlite3_column_text(st, 7);
    size_t name_len = name != NULL ? (size_t)sqlite3_column_bytes(st, 7) : 0;
    int64_t pid = gid / 0x1000000 % 0x1000000, tid = gid % 0x1000000;
    char made[96];
    const char *cat = NULL;
    if (g->events++ > 0)
        put(g, ",\n", 2);
    else
        put(g, "\n", 1);
    switch (kind) {
    case K_KERNEL:
        cat = "kernel";
        if (name == NULL)
            name = "(kernel name not exported)", name_len = strlen(name);
        note_pid(g, pid);
        break;
    case K_MEMCPY:
        cat = "gpu_memcpy";
        snprintf(made, sizeof made, "Memcpy %s (%s -> %s)", copy_kind(int_or(st, 9, 0)), memory_kind(int_or(st, 10, 0)),
                 memory_kind(int_or(st, 11, 0)));
        name = made, name_len = strlen(made);
        break;
    case K_MEMSET:
        cat = "gpu_memset";
        snprintf(made, sizeof made, "Memset (%s)", memory_kind(int_or(st, 9, 0)));
        name = made, name_len = strlen(made);
        break;
    case K_SYNC: {
        int64_t type = int_or(st, 8, 0);
        cat = "cuda_sync";
        snprintf(made, sizeof made, "%s", sync_kind(type));
        name = made, name_len = strlen(made);
        /* an event or context synchronization is the host waiting: no stream (HTA, Kineto) */
        if (type == 1 || type == 4)
            stream = -1;
        break;
    }
    case K_RUNTIME:
        if (name == NULL)
            name = "(CUDA API call)", name_len = strlen(name);
        name_len = api_name_len(name, name_len);
        cat = name_len >= 2 && name[0] == 'c' && name[1] == 'u' && !(name_len >= 4 && !memcmp(name, "cuda", 4))
                  ? "cuda_driver"
                  : "cuda_runtime";
        note_pid(g, pid);
        break;
    default: /* K_NVTX */
        cat = "user_annotation";
        if (name == NULL)
            name = "(NVTX range)", name_len = strlen(name);
        break;
    }
    puts_(g, "{\"ph\":\"X\",\"cat\":\"");
    puts_(g, cat);
    puts_(g, "\",\"name\":");
    put_str(g, name, name_len);
    if (kind == K_RUNTIME || kind == K_NVTX)
        putf(g, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, pid, tid);
    else
        putf(g, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, dev, stream);
    puts_(g, ",\"ts\":");
    put_us(g, start);
    puts_(g, ",\"dur\":");
    put_us(g, end - start);
    puts_(g, ",\"args\":{");
    int args = 0;
    if (kind != K_RUNTIME && kind != K_NVTX) {
        putf(g, "\"device\":%" PRId64 ",\"stream\":%" PRId64, dev, stream);
        args = 1;
    }
    /* CUPTI's correlation ids start at 1: 0 is "none" */
    if (corr > 0 && kind != K_NVTX) {
        putf(g, "%s\"correlation\":%" PRId64, args ? "," : "", corr);
        args = 1;
    }
    if (kind == K_KERNEL && sqlite3_column_type(st, 8) != SQLITE_NULL)
        putf(g, ",\"grid\":[%" PRId64 ",%" PRId64 ",%" PRId64 "],\"block\":[%" PRId64 ",%" PRId64 ",%" PRId64 "]",
             int_or(st, 8, 0), int_or(st, 9, 0), int_or(st, 10, 0), int_or(st, 11, 0), int_or(st, 12, 0),
             int_or(st, 13, 0));
    if ((kind == K_MEMCPY || kind == K_MEMSET) && sqlite3_column_type(st, 8) != SQLITE_NULL)
        putf(g, ",\"bytes\":%" PRId64, int_or(st, 8, 0));
    puts_(g, "}}");
}

/* Thread and process names, as the "M" events a Chrome trace carries. */
static void name_events(gen *g)
{
    static const struct {
        const char *table, *need, *sql, *what;
    } q[] = {
        { "PROCESSES", "globalPid", "SELECT globalPid, name FROM PROCESSES WHERE name IS NOT NULL", "process_name" },
        { "ThreadNames", "globalTid",
          "SELECT t.globalTid, s.value FROM ThreadNames AS t JOIN StringIds AS s ON s.id = t.nameId", "thread_name" },
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt *st;
        if (!has_table(g->db, q[i].table) || !has_column(g->db, q[i].table, q[i].need) ||
            (i == 1 && !has_table(g->db, "StringIds")))
            continue;
        if (sqlite3_prepare_v2(g->db, q[i].sql, -1, &st, NULL) != SQLITE_OK)
            continue;
        while (sqlite3_step(st) == SQLITE_ROW && !g->oom) {
            int64_t id = sqlite3_column_int64(st, 0);
            const char *name = (const char *)sqlite3_column_text(st, 1);
            if (name == NULL)
                continue;
            if (g->events++ > 0)
                put(g, ",", 1);
            putf(g, "\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
                 q[i].what, id / 0x1000000 % 0x1000000, i == 0 ? 0 : id % 0x1000000);
            put_str(g, name, (size_t)sqlite3_column_bytes(st, 1));
            puts_(g, "}}");
        }
        sqlite3_finalize(st);
    }
}

/* The devices, as Kineto's "deviceProperties": the CUDA device ids the
 * activity tables use (TARGET_INFO_CUDA_DEVICE.cudaId) when the export maps
 * them, else TARGET_INFO_GPU's own ids. */
static void device_props(gen *g)
{
    sqlite3 *db = g->db;
    if (!has_table(db, "TARGET_INFO_GPU") || !has_column(db, "TARGET_INFO_GPU", "name"))
        return;
    char b[4][64];
    const char *mem = col(db, "TARGET_INFO_GPU", "totalMemory", "NULL", b[0], sizeof b[0]);
    const char *sms = col(db, "TARGET_INFO_GPU", "smCount", "NULL", b[1], sizeof b[1]);
    const char *major = col(db, "TARGET_INFO_GPU", "computeMajor", "NULL", b[2], sizeof b[2]);
    const char *minor = col(db, "TARGET_INFO_GPU", "computeMinor", "NULL", b[3], sizeof b[3]);
    sql q = { .n = 0 };
    if (has_table(db, "TARGET_INFO_CUDA_DEVICE") && has_column(db, "TARGET_INFO_CUDA_DEVICE", "cudaId") &&
        has_column(db, "TARGET_INFO_CUDA_DEVICE", "gpuId"))
        sqlf(&q,
             "SELECT DISTINCT c.cudaId, t.name, %s, %s, %s, %s FROM TARGET_INFO_GPU AS t JOIN "
             "TARGET_INFO_CUDA_DEVICE AS c ON c.gpuId = t.id ORDER BY 1",
             mem, sms, major, minor);
    else if (has_column(db, "TARGET_INFO_GPU", "id"))
        sqlf(&q, "SELECT t.id, t.name, %s, %s, %s, %s FROM TARGET_INFO_GPU AS t ORDER BY 1", mem, sms, major, minor);
    else
        return;
    sqlite3_stmt *st;
    if (q.full || sqlite3_prepare_v2(db, q.s, -1, &st, NULL) != SQLITE_OK)
        return;
    int n = 0;
    puts_(g, "\"deviceProperties\":[");
    while (sqlite3_step(st) == SQLITE_ROW && n < TL_TRACE_MAX_DEVICES) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        putf(g, "%s{\"id\":%" PRId64 ",\"name\":", n++ ? "," : "", int_or(st, 0, 0));
        put_str(g, name != NULL ? name : "", name != NULL ? (size_t)sqlite3_column_bytes(st, 1) : 0);
        static const char *const keys[] = { "totalGlobalMem", "numSms", "computeMajor", "computeMinor" };
        for (int k = 0; k < 4; k++)
            if (sqlite3_column_type(st, 2 + k) != SQLITE_NULL)
                putf(g, ",\"%s\":%" PRId64, keys[k], int_or(st, 2 + k, 0));
        puts_(g, "}");
    }
    puts_(g, "],");
    sqlite3_finalize(st);
}

static void header(gen *g)
{
    puts_(g, "{\"traceName\":\"nsys export\",");
    if (g->base_ns != INT64_MIN)
        putf(g, "\"baseTimeNanoseconds\":%" PRId64 ",", g->base_ns);
    device_props(g);
    puts_(g, "\"traceEvents\":[");
    name_events(g);
}

/* tl_read_fn over the generated trace. Never fails: a database error ends
 * the events (the trace closes cleanly) and is said afterwards. */
static ssize_t gen_read(void *ctx, void *out, size_t cap)
{
    gen *g = ctx;
    size_t done = 0;
    while (done < cap) {
        if (g->pos < g->len) {
            size_t n = g->len - g->pos < cap - done ? g->len - g->pos : cap - done;
            memcpy((char *)out + done, g->buf + g->pos, n);
            g->pos += n;
            done += n;
            continue;
        }
        g->len = g->pos = 0;
        if (g->oom)
            return -1;
        if (g->stage == ST_DONE)
            break;
        if (g->stage == ST_HEADER) {
            header(g);
            g->stage = ST_ROWS;
        } else if (g->stage == ST_ROWS) {
            /* a batch of rows per refill keeps the buffer warm */
            for (int k = 0; k < 256 && g->stage == ST_ROWS; k++) {
                int rc = sqlite3_step(g->rows);
                if (rc == SQLITE_ROW) {
                    row_event(g, g->rows);
                } else {
                    if (rc != SQLITE_DONE)
                        snprintf(g->err, sizeof g->err, "%s", sqlite3_errmsg(g->db));
                    g->stage = ST_FOOTER;
                }
            }
        } else {
            puts_(g, "\n]}\n");
            g->stage = ST_DONE;
        }
    }
    return (ssize_t)done;
}

/* "file:" URI of a path, opened immutable: SQLite then never looks for a
 * journal or WAL beside it, nor writes one (an input's folder stays as it was). */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(n * 3 + 32);
    if (u == NULL)
        return NULL;
    size_t k = (size_t)snprintf(u, 32, "file:");
    /* "//x" would read as an authority: one slash names the same file */
    while (path[0] == '/' && path[1] == '/')
        path++;
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if (*s == '%' || *s == '?' || *s == '#' || *s < 0x20 || *s >= 0x7f)
            k += (size_t)snprintf(u + k, 4, "%%%02X", *s);
        else
            u[k++] = (char)*s;
    }
    snprintf(u + k, 16, "?immutable=1");
    return u;
}

/* The whole database in memory (an archive member, gzip, stdin). */
static int open_memory(tl_profile *p, sqlite3 **db, tl_read_fn read, void *ctx, uint64_t *size)
{
    size_t cap = 1 << 20, len = 0;
    unsigned char *b = sqlite3_malloc64(cap);
    if (b == NULL)
        return -1;
    for (;;) {
        if (len == cap) {
            if (cap >= TL_NSYS_MAX_MEMORY_BYTES) {
                sqlite3_free(b);
                tl_profile_skip(p,
                                "an SQLite database larger than %zu MiB that is not a plain file (in an archive, "
                                "compressed or piped): not read; extract it and name the file",
                                TL_NSYS_MAX_MEMORY_BYTES >> 20);
                return 1;
            }
            size_t c2 = cap * 2 > TL_NSYS_MAX_MEMORY_BYTES ? TL_NSYS_MAX_MEMORY_BYTES : cap * 2;
            unsigned char *x = sqlite3_realloc64(b, c2);
            if (x == NULL) {
                sqlite3_free(b);
                return -1;
            }
            b = x;
            cap = c2;
        }
        ssize_t got = read(ctx, b + len, cap - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    *size = len;
    if (sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_free(b);
        return -1;
    }
    if (sqlite3_deserialize(*db, "main", b, (sqlite3_int64)len, (sqlite3_int64)cap,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
        tl_profile_skip(p, "an SQLite database that does not open: %s", sqlite3_errmsg(*db));
        return 1;
    }
    return 0;
}

int tl_read_nsys(tl_profile *p, const char *path, tl_read_fn read, void *ctx)
{
    sqlite3 *db = NULL;
    gen g;
    int ret = 0;
    uint64_t size = 0;
    memset(&g, 0, sizeof g);
    if (path != NULL) {
        char *uri = immutable_uri(path);
        struct stat st;
        if (uri == NULL)
            goto oom;
        int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        free(uri);
        if (rc != SQLITE_OK) {
            tl_profile_skip(p, "an SQLite database that does not open: %s", db ? sqlite3_errmsg(db) : "out of memory");
            goto out;
        }
        if (stat(path, &st) == 0)
            size = (uint64_t)st.st_size;
    } else {
        int rc = open_memory(p, &db, read, ctx, &size);
        if (rc < 0)
            goto oom;
        if (rc > 0)
            goto out;
    }
    /* a hostile file: no writes through the schema, no functions from it */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA /* 3.31 */
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
#endif
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW /* 3.35 */
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
#endif
    /* the schema is read at the first statement: a damaged file says so here */
    {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(db);
        if (rc != SQLITE_OK)
            tl_profile_skip(p, "an SQLite database that cannot be read: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        if (rc != SQLITE_OK)
            goto out;
    }
    sql q = { .n = 0 };
    if (build_query(db, &q) == 0) {
        tl_profile_skip(p, "an SQLite database without Nsight Systems' CUDA or NVTX tables "
                           "(CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME, NVTX_EVENTS, ...): not an "
                           "nsys export with anything to measure");
        goto out;
    }
    if (q.full || sqlite3_prepare_v2(db, q.s, -1, &g.rows, NULL) != SQLITE_OK) {
        tl_profile_skip(p, "an nsys export whose tables cannot be queried: %s",
                        q.full ? "too many columns" : sqlite3_errmsg(db));
        goto out;
    }
    g.db = db;
    g.base_ns = INT64_MIN;
    if (has_table(db, "TARGET_INFO_SESSION_START_TIME") &&
        has_column(db, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs"))
        g.base_ns = query_int(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", INT64_MIN);

    tl_trace_options topt;
    tl_trace_options_init(&topt);
    ret = tl_read_trace(p, gen_read, &g, &topt);
    if (g.oom)
        goto oom;
    p->id.format = TL_FMT_NSYS;
    p->bytes = size;
    char version[32] = "";
    if (has_table(db, "META_DATA_EXPORT"))
        query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'", version,
                   sizeof version);
    snprintf(p->format_detail, sizeof p->format_detail, "SQLite export%s%s", version[0] ? ", schema " : "", version);
    if (has_table(db, "TARGET_INFO_SYSTEM_ENV") && has_column(db, "TARGET_INFO_SYSTEM_ENV", "value"))
        query_text(db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'", p->host.hostname,
                   sizeof p->host.hostname);
    if (g.err[0]) {
        tl_profile_warn(p, "the database broke off after %" PRIu64 " events: %s; read up to there", g.events, g.err);
        p->truncated = 1;
    }
    if (g.bad_rows)
        tl_profile_warn(p, "%" PRIu64 " rows with a negative start or an end before their start skipped", g.bad_rows);
    if (g.npids > 1) {
        char list[128] = "";
        size_t k = 0;
        for (int i = 0; i < g.npids && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%" PRId64, i ? ", " : "", g.pids[i]);
        tl_profile_warn(p,
                        "%d%s processes with CUDA work in one export (pids %s%s): read as one rank; profile "
                        "each rank into a report of its own (nsys profile -o report_%%q{RANK})",
                        g.npids, g.more_pids ? "+" : "", list, g.more_pids ? ", ..." : "");
    }
    goto out;
oom:
    tl_profile_skip(p, "out of memory");
    p->error = 1;
    ret = -1;
out:
    if (g.rows != NULL)
        sqlite3_finalize(g.rows);
    free(g.buf);
    if (db != NULL)
        sqlite3_close(db);
    return ret;
}

#endif
