/*
 * trace_decode: values into the trace reader's records (see trace_decode.h). An event object is
 * walked by tl_scan_members() and each member decoded by its key; "args" is walked one level for
 * the four Kineto args the analysis always needs (stream, device, correlation, External id) and
 * kept whole as text for read_trace.c. The object form's top-level values (distributedInfo,
 * deviceProperties, baseTimeNanoseconds, ...) are decoded into tl_trace_meta the same way.
 */
#include "ingest/trace_decode.h"

#include <stdlib.h>
#include <string.h>

int tl_trace_event_key(tl_view k)
{
    const char *s = k.ptr;

    switch (k.len) {
    case 1:
        return s[0] == 's' ? K_S : 0;
    case 2:
        if (s[0] == 'p' && s[1] == 'h')
            return K_PH;
        if (s[0] == 't' && s[1] == 's')
            return K_TS;
        if (s[0] == 'i' && s[1] == 'd')
            return K_ID;
        if (s[0] == 'b' && s[1] == 'p')
            return K_BP;
        return 0;
    case 3:
        if (!memcmp(s, "pid", 3))
            return K_PID;
        if (!memcmp(s, "tid", 3))
            return K_TID;
        if (!memcmp(s, "dur", 3))
            return K_DUR;
        if (!memcmp(s, "cat", 3))
            return K_CAT;
        if (!memcmp(s, "id2", 3))
            return K_ID2;
        return 0;
    case 4:
        if (!memcmp(s, "name", 4))
            return K_NAME;
        if (!memcmp(s, "args", 4))
            return K_ARGS;
        return 0;
    case 5:
        return memcmp(s, "scope", 5) ? 0 : K_SCOPE;
    }
    return 0;
}

static void set_time(struct pctx *c, const struct jval *v, int64_t *ns, unsigned char *has)
{
    *has = 0;
    if (v->kind == TL_JSON_NUMBER || v->kind == TL_JSON_STRING) {
        if (tl_trace_us_to_ns(v->text, ns) == 0)
            *has = 1;
        else
            warn(c, W_BAD_NUMBER, v->text.ptr);
    } else if (v->kind != TL_JSON_NULL && v->kind != TL_JSON_NONFINITE) {
        warn(c, W_BAD_NUMBER, v->text.ptr); /* nonfinite was counted as such already */
    }
}

static void set_pid(const struct jval *v, int64_t *val, tl_view *str, unsigned char *is_int, unsigned char *quoted)
{
    *str = text_field(v);
    *quoted = v->kind == TL_JSON_STRING;
    *is_int = str->ptr && tl_view_to_int64(*str, val) == 0;
    if (!*is_int)
        *val = 0;
}

/* A Kineto arg the analysis always needs, from one member of "args". */
static void arg_field(tl_trace_event *ev, tl_view key, const struct jval *v)
{
    int64_t *dst = NULL;
    unsigned char *has = NULL;

    if (key.len == 6 && !memcmp(key.ptr, "stream", 6)) {
        dst = &ev->stream;
        has = &ev->has_stream;
    } else if (key.len == 6 && !memcmp(key.ptr, "device", 6)) {
        dst = &ev->device;
        has = &ev->has_device;
    } else if (key.len == 11 && !memcmp(key.ptr, "correlation", 11)) {
        dst = &ev->correlation;
        has = &ev->has_correlation;
    } else if (key.len == 11 && !memcmp(key.ptr, "External id", 11)) {
        dst = &ev->external_id;
        has = &ev->has_external_id;
    }
    if (dst)
        *has = tl_view_to_int64(text_field(v), dst) == 0;
}

static int on_arg_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct jval v;
    int rc;

    if ((rc = tl_scan_value(c, pp, depth, &v)) != P_OK)
        return rc;
    arg_field(obj, key, &v);
    return P_OK;
}

/* Store the value of the event key `k` (a K_* bit, 0 for keys not decoded) in `ev`. */
void tl_trace_event_field(struct pctx *c, tl_trace_event *ev, int k, const struct jval *vp)
{
    const struct jval v = *vp;

    switch (k) {
    case K_NAME:
        ev->name = text_field(&v);
        break;
    case K_CAT:
        ev->cat = text_field(&v);
        break;
    case K_PH:
        ev->ph = text_field(&v);
        break;
    case K_BP:
        ev->bp = text_field(&v);
        break;
    case K_S:
        ev->s = text_field(&v);
        break;
    case K_SCOPE:
        ev->scope = text_field(&v);
        break;
    case K_TS:
        set_time(c, &v, &ev->ts_ns, &ev->has_ts);
        break;
    case K_DUR:
        set_time(c, &v, &ev->dur_ns, &ev->has_dur);
        break;
    case K_PID:
        set_pid(&v, &ev->pid, &ev->pid_str, &ev->pid_int, &ev->pid_quoted);
        break;
    case K_TID:
        set_pid(&v, &ev->tid, &ev->tid_str, &ev->tid_int, &ev->tid_quoted);
        break;
    case K_ID:
        ev->id = text_field(&v);
        ev->id_quoted = v.kind == TL_JSON_STRING;
        break;
    case K_ID2:
        if (v.kind == TL_JSON_OBJECT) {
            tl_args_iter it;
            tl_view k2;
            tl_json_value v2;
            tl_args_iter_init(&it, v.text);
            while (tl_args_next(&it, &k2, &v2)) {
                tl_view t = v2.kind == TL_JSON_STRING || v2.kind == TL_JSON_NUMBER ? v2.text : (tl_view){ NULL, 0 };
                if (tl_view_eq(k2, "local"))
                    ev->id2_local = t;
                else if (tl_view_eq(k2, "global"))
                    ev->id2_global = t;
            }
        }
        break;
    case K_ARGS: /* not an object: keep no args */
        ev->args = (tl_view){ NULL, 0 };
        break;
    }
}

struct event_parse {
    tl_trace_event *ev;
    unsigned seen;
};

static int on_event_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct event_parse *ep = obj;
    tl_trace_event *ev = ep->ev;
    int k = tl_trace_event_key(key), rc;
    struct jval v;

    if (k & ep->seen)
        warn(c, W_DUP_KEY, key.ptr);
    ep->seen |= (unsigned)k;
    if (k == K_ARGS && **pp == '{') {
        const char *start = *pp;
        ev->has_stream = ev->has_device = ev->has_correlation = ev->has_external_id = 0;
        if ((rc = tl_scan_members(c, pp, depth, on_arg_member, ev)) != P_OK)
            return rc;
        ev->args.ptr = start;
        ev->args.len = (size_t)(*pp - start);
        return P_OK;
    }
    if ((rc = tl_scan_value(c, pp, depth, &v)) != P_OK)
        return rc;
    tl_trace_event_field(c, ev, k, &v);
    return P_OK;
}

/* Parse the event object at *pp into `ev`. */
int tl_trace_event_parse(struct pctx *c, const char **pp, tl_trace_event *ev)
{
    struct event_parse ep = { ev, 0 };
    const char *start = *pp;
    int rc;

    memset(ev, 0, sizeof *ev);
    rc = tl_scan_members(c, pp, 1, on_event_member, &ep);
    if (rc != P_OK)
        return rc;
    ev->offset = c->base + (uint64_t)(start - c->buf);
    ev->size = (size_t)(*pp - start);
    ev->phase = ev->ph.len == 1 ? ev->ph.ptr[0] : 0;
    return P_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Top-level metadata (object form)                                                           */

struct meta_parse {
    tl_trace_meta *m;
    int ndev; /* devices seen so far in this attempt; committed to m->device_count on success */
    tl_trace_device *dev;
};

static void copy_text(char *dst, size_t cap, tl_view t)
{
    size_t n = t.ptr ? t.len : 0;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, t.ptr, n);
    dst[n] = '\0';
}

static int on_dist_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct meta_parse *mp = obj;
    struct jval v;
    int rc;

    if ((rc = tl_scan_value(c, pp, depth, &v)) != P_OK)
        return rc;
    if (tl_view_eq(key, "rank"))
        mp->m->has_rank = tl_view_to_int64(text_field(&v), &mp->m->rank) == 0;
    else if (tl_view_eq(key, "world_size"))
        mp->m->has_world_size = tl_view_to_int64(text_field(&v), &mp->m->world_size) == 0;
    else if (tl_view_eq(key, "backend"))
        copy_text(mp->m->backend, sizeof mp->m->backend, text_field(&v));
    return P_OK;
}

static int on_device_member(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    tl_trace_device *d = obj;
    struct jval v;
    int rc;

    if ((rc = tl_scan_value(c, pp, depth, &v)) != P_OK)
        return rc;
    if (tl_view_eq(key, "id"))
        tl_view_to_int64(text_field(&v), &d->id);
    else if (tl_view_eq(key, "name"))
        copy_text(d->name, sizeof d->name, text_field(&v));
    else if (tl_view_eq(key, "totalGlobalMem"))
        tl_view_to_int64(text_field(&v), &d->total_global_mem);
    else if (tl_view_eq(key, "computeMajor"))
        tl_view_to_int64(text_field(&v), &d->compute_major);
    else if (tl_view_eq(key, "computeMinor"))
        tl_view_to_int64(text_field(&v), &d->compute_minor);
    else if (tl_view_eq(key, "numSms"))
        tl_view_to_int64(text_field(&v), &d->num_sms);
    return P_OK;
}

static int on_device(struct pctx *c, void *obj, tl_view key, const char **pp, int depth)
{
    struct meta_parse *mp = obj;
    struct jval v;

    (void)key; /* an element of the array */
    if (**pp == '{' && mp->ndev < TL_TRACE_MAX_DEVICES) {
        tl_trace_device *d = &mp->m->devices[mp->ndev++];
        memset(d, 0, sizeof *d);
        return tl_scan_members(c, pp, depth, on_device_member, d);
    }
    if (**pp == '{')
        mp->ndev++;
    return tl_scan_value(c, pp, depth, &v);
}

static char *dup_text(tl_view t)
{
    char *p = malloc(t.len + 1);
    if (p) {
        memcpy(p, t.ptr, t.len);
        p[t.len] = '\0';
    }
    return p;
}

/* Parse the value at *pp of the top-level key `key` into `m`. */
int tl_trace_meta_parse(struct pctx *c, const char **pp, int key, tl_trace_meta *m)
{
    struct meta_parse mp = { m, 0, NULL };
    struct jval v;
    int rc;

    if (key == TOP_DISTRIBUTED_INFO && **pp == '{')
        return tl_scan_members(c, pp, 1, on_dist_member, &mp);
    if (key == TOP_DEVICE_PROPERTIES && **pp == '[') {
        if ((rc = tl_scan_members(c, pp, 1, on_device, &mp)) == P_OK)
            m->device_count = mp.ndev;
        return rc;
    }
    if ((rc = tl_scan_value(c, pp, 1, &v)) != P_OK)
        return rc;
    switch (key) {
    case TOP_BASE_TIME:
        m->has_base_time = tl_view_to_int64(text_field(&v), &m->base_time_ns) == 0;
        break;
    case TOP_SCHEMA_VERSION:
        m->has_schema_version = tl_view_to_int64(text_field(&v), &m->schema_version) == 0;
        break;
    case TOP_DISPLAY_TIME_UNIT:
        copy_text(m->display_time_unit, sizeof m->display_time_unit, text_field(&v));
        break;
    case TOP_TRACE_NAME:
        copy_text(m->trace_name, sizeof m->trace_name, text_field(&v));
        break;
    case TOP_OTHER_DATA:
    case TOP_METADATA: {
        char **dst = key == TOP_OTHER_DATA ? &m->other_data : &m->metadata;
        size_t *len = key == TOP_OTHER_DATA ? &m->other_data_len : &m->metadata_len;
        free(*dst);
        *dst = NULL;
        *len = 0;
        if (v.text.len <= META_COPY_MAX && (*dst = dup_text(v.text)) != NULL)
            *len = v.text.len;
        break;
    }
    }
    return P_OK;
}

int tl_trace_top_key(tl_view k)
{
    static const struct {
        const char *name;
        int key;
    } keys[] = {
        { "traceEvents", TOP_TRACE_EVENTS },
        { "distributedInfo", TOP_DISTRIBUTED_INFO },
        { "deviceProperties", TOP_DEVICE_PROPERTIES },
        { "baseTimeNanoseconds", TOP_BASE_TIME },
        { "schemaVersion", TOP_SCHEMA_VERSION },
        { "displayTimeUnit", TOP_DISPLAY_TIME_UNIT },
        { "traceName", TOP_TRACE_NAME },
        { "otherData", TOP_OTHER_DATA },
        { "metadata", TOP_METADATA },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tl_view_eq(k, keys[i].name))
            return keys[i].key;
    return TOP_OTHER;
}
