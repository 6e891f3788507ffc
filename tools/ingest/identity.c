/*
 * identity.c - an input's identity and its problems (see identity.h).
 */
#include "identity.h"
#include "array.h"
#include "profile.h" /* TL_FMT_UNKNOWN */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tl_rank_source_name(int s)
{
    return s == TL_RANK_CONTENT ? "content" : s == TL_RANK_NAME ? "name" : s == TL_RANK_ORDER ? "order" : "unknown";
}

/* ---- problems ------------------------------------------------------------------------ */

/* Take ownership of text (NULL: out of memory). */
static tl_problem *push(tl_problems *l, int kind, int64_t offset, char *text)
{
    if (text == NULL)
        return NULL;
    if (TL_ARRAY_GROW(l->v, l->n, l->cap) != 0) {
        free(text);
        return NULL;
    }
    l->v[l->n] = (tl_problem){ kind, offset, text };
    return &l->v[l->n++];
}

tl_problem *tl_problems_add(tl_problems *l, int kind, int64_t offset, const char *fmt, ...)
{
    if (l->n >= TL_IDENTITY_MAX_PROBLEMS) {
        l->dropped++;
        return NULL;
    }
    char buf[TL_PROBLEM_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return push(l, kind, offset, strdup(buf));
}

int tl_problems_add_text(tl_problems *l, int kind, int64_t offset, const char *text)
{
    return push(l, kind, offset, strdup(text ? text : "")) != NULL ? 0 : -1;
}

size_t tl_identity_input_problems(const tl_identity *id)
{
    size_t n = 0;
    for (size_t i = 0; i < id->problems.n; i++)
        n += tl_problem_of_input(&id->problems.v[i]);
    return n;
}

void tl_problems_release(tl_problems *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].text);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- the identity ---------------------------------------------------------------------- */

int tl_identity_init(tl_identity *id, const char *path)
{
    memset(id, 0, sizeof *id);
    id->rank = -1;
    id->path = strdup(path ? path : "");
    id->rank_detail = strdup("");
    if (id->path == NULL || id->rank_detail == NULL) {
        tl_identity_release(id);
        return -1;
    }
    return 0;
}

void tl_identity_release(tl_identity *id)
{
    free(id->path);
    free(id->rank_detail);
    free(id->companion_of);
    tl_problems_release(&id->problems);
    memset(id, 0, sizeof *id);
}

static int copy_str(char **dst, const char *src)
{
    char *c = src ? strdup(src) : NULL;
    if (src && c == NULL)
        return -1;
    free(*dst);
    *dst = c;
    return 0;
}

int tl_identity_copy(tl_identity *dst, const tl_identity *src)
{
    tl_identity_release(dst);
    *dst = *src;
    dst->path = dst->rank_detail = dst->companion_of = NULL;
    memset(&dst->problems, 0, sizeof dst->problems);
    dst->problems.dropped = src->problems.dropped;
    int rc = copy_str(&dst->path, src->path) | copy_str(&dst->rank_detail, src->rank_detail) |
             copy_str(&dst->companion_of, src->companion_of);
    for (size_t i = 0; rc == 0 && i < src->problems.n; i++)
        rc = tl_problems_add_text(&dst->problems, src->problems.v[i].kind, src->problems.v[i].offset,
                                  src->problems.v[i].text);
    if (rc != 0)
        tl_identity_release(dst);
    return rc;
}

static void rank_order_text(char *buf, size_t len, int rank)
{
    snprintf(buf, len, "no rank in the content or the name; rank %d assigned by input order", rank);
}

void tl_identity_kinds_from_words(tl_identity *id)
{
    char order[128];
    rank_order_text(order, sizeof order, id->rank);
    for (size_t i = 0; i < id->problems.n; i++) {
        tl_problem *p = &id->problems.v[i];
        p->kind = id->rank_source == TL_RANK_ORDER && strcmp(p->text, order) == 0 ? TL_PROBLEM_RANK_ORDER
                  : i == 0 && id->format == TL_FMT_UNKNOWN                        ? TL_PROBLEM_SKIPPED
                                                                                  : TL_PROBLEM_WARNING;
    }
}

int tl_identity_set_rank(tl_identity *id, int rank, int source, const char *detail)
{
    char cut[TL_RANK_DETAIL_MAX + 1];
    snprintf(cut, sizeof cut, "%s", detail ? detail : "");
    if (copy_str(&id->rank_detail, cut) != 0)
        return -1;
    id->rank = rank;
    id->rank_source = source;
    if (source != TL_RANK_ORDER)
        return 0;
    char text[128];
    rank_order_text(text, sizeof text, rank);
    return tl_problems_add_text(&id->problems, TL_PROBLEM_RANK_ORDER, -1, text);
}

int tl_identity_take_settled(tl_identity *dst, const tl_identity *src)
{
    if (copy_str(&dst->rank_detail, src->rank_detail) != 0 || copy_str(&dst->companion_of, src->companion_of) != 0)
        return -1;
    dst->rank = src->rank;
    dst->world_size = src->world_size;
    dst->rank_source = src->rank_source;
    dst->session = src->session;
    int had = 0;
    for (size_t i = 0; i < dst->problems.n; i++)
        had |= dst->problems.v[i].kind == TL_PROBLEM_RANK_ORDER;
    for (size_t i = 0; i < src->problems.n && !had; i++)
        if (src->problems.v[i].kind == TL_PROBLEM_RANK_ORDER &&
            tl_problems_add_text(&dst->problems, TL_PROBLEM_RANK_ORDER, -1, src->problems.v[i].text) != 0)
            return -1;
    return 0;
}

const char *tl_path_file_name(const char *path)
{
    const char *colon = strrchr(path, ':');
    const char *s = colon && colon[1] ? colon + 1 : path;
    const char *base = strrchr(s, '/');
    return base ? base + 1 : s;
}

/* The length of path without suffix, or 0 when it does not end so. */
static size_t stem_len(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n > k && strcmp(path + n - k, suffix) == 0 ? n - k : 0;
}

int tl_identity_same_stem(const char *report, const char *trace)
{
    size_t r = stem_len(report, ".report.json");
    size_t t = stem_len(trace, ".trace.json.gz");
    if (t == 0)
        t = stem_len(trace, ".trace.json");
    return r > 0 && r == t && memcmp(report, trace, r) == 0;
}

/* The directory part of a path (an archive member's folders count: the
 * member path follows "archive:"), as [*start, end); 0 when it has none. */
static size_t folder_of(const char *path, const char **start)
{
    const char *slash = strrchr(path, '/');
    *start = path;
    return slash != NULL ? (size_t)(slash - path) : 0;
}

int tl_identity_same_folder(const char *a, const char *b, int exact)
{
    const char *sa, *sb;
    size_t na = folder_of(a, &sa), nb = folder_of(b, &sb);
    if (!exact) {
        /* the last folder name only */
        const char *la = sa, *lb = sb;
        for (size_t i = 0; i < na; i++)
            if (sa[i] == '/' || sa[i] == ':')
                la = sa + i + 1;
        for (size_t i = 0; i < nb; i++)
            if (sb[i] == '/' || sb[i] == ':')
                lb = sb + i + 1;
        na -= (size_t)(la - sa);
        nb -= (size_t)(lb - sb);
        sa = la;
        sb = lb;
    }
    return na == nb && memcmp(sa, sb, na) == 0;
}
