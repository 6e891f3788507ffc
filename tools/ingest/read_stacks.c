/*
 * read_stacks.c - torch.profiler's export_stacks text (read_stacks.h), read
 * line by line, never whole.
 */
#include "read_stacks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"

/* "frames value": the length of the frames part and the value (µs), or -1
 * when the line is not a stack line. */
static int64_t parse_line(const char *s, size_t n, size_t *frames)
{
    while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    if (i == n || i < 2 || s[i - 1] != ' ' || n - i > 15)
        return -1;
    int64_t v = 0;
    for (size_t k = i; k < n; k++)
        v = v * 10 + (s[k] - '0');
    *frames = i - 1;
    for (size_t k = 0; k < *frames; k++)
        if (s[k] == ' ' || s[k] == '\t' || (unsigned char)s[k] < 0x20)
            return -1; /* export_stacks writes a frame's spaces as '_' */
    return *frames > 0 ? v : -1;
}

int tl_bytes_look_like_stacks(const unsigned char *b, size_t n)
{
    size_t at = 0, lines = 0, good = 0;
    int semi = 0;
    while (at < n && lines < TL_STACKS_SNIFF_LINES) {
        const unsigned char *nl = memchr(b + at, '\n', n - at);
        if (nl == NULL && n - at >= 4096)
            return 0;
        size_t len = nl != NULL ? (size_t)(nl - (b + at)) : n - at, frames;
        if (nl == NULL && lines > 0)
            break; /* the buffer cut the last line */
        if (len > 0) {
            if (parse_line((const char *)b + at, len, &frames) >= 0) {
                semi |= memchr(b + at, ';', frames) != NULL;
                good++;
            } else if (lines == 0) {
                return 0; /* the first line decides */
            }
            lines++;
        }
        at += len + 1;
    }
    /* the first line and most of the others are stack lines, one with a ';' */
    return good > 0 && good * 2 >= lines && semi;
}

typedef struct stacks {
    tl_profile *p;
    tl_calltree *t;
    uint32_t root;
    uint64_t lines, malformed, too_long;
    int64_t total;
} stacks;

static void one_line(stacks *st, const char *s, size_t n)
{
    size_t frames;
    int64_t v = parse_line(s, n, &frames);
    if (v < 0) {
        st->malformed++;
        return;
    }
    int64_t ns = v > INT64_MAX / 1000 ? INT64_MAX : v * 1000;
    tl_calltree *t = st->t;
    uint32_t node = st->root;
    t->nodes[node].incl_ns = tl_ns_add(t->nodes[node].incl_ns, ns);
    t->nodes[node].count++;
    size_t a = 0;
    while (a <= frames) {
        const char *semi = memchr(s + a, ';', frames - a);
        size_t b = semi != NULL ? (size_t)(semi - s) : frames;
        if (b > a) {
            uint32_t name = tl_strtab_intern(&st->p->strs, s + a, b - a);
            uint32_t child = name != UINT32_MAX ? tl_calltree_child(t, node, name) : TL_CALLTREE_NONE;
            if (child == TL_CALLTREE_NONE) {
                /* beyond the tree's cap: the time stays in the frames above, as nesting.c does */
                t->dropped++;
                t->nodes[node].self_ns = tl_ns_add(t->nodes[node].self_ns, ns);
                return;
            }
            node = child;
            t->nodes[node].incl_ns = tl_ns_add(t->nodes[node].incl_ns, ns);
        }
        a = b + 1;
    }
    t->nodes[node].self_ns = tl_ns_add(t->nodes[node].self_ns, ns);
    t->nodes[node].count++;
    st->lines++;
    st->total = tl_ns_add(st->total, ns);
}

int tl_read_stacks(tl_profile *p, tl_read_fn read, void *ctx)
{
    stacks st = { .p = p };
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int ret = -1;
    if (buf == NULL || (st.t = malloc(sizeof *st.t)) == NULL)
        goto out;
    tl_calltree_init(st.t);
    const char *label = tl_calltree_kind_label(TL_CTK_PYTHON);
    uint32_t name = tl_strtab_intern(&p->strs, label, strlen(label));
    st.root = name != UINT32_MAX ? tl_calltree_child(st.t, TL_CALLTREE_NONE, name) : TL_CALLTREE_NONE;
    if (st.root == TL_CALLTREE_NONE)
        goto out;
    st.t->nodes[st.root].kind = TL_CTK_PYTHON; /* every frame below takes it */
    int eof = 0, skipping = 0;
    uint64_t bytes = 0;
    while (!eof || len > 0) {
        if (!eof && len < cap) {
            ssize_t got = read(ctx, buf + len, cap - len);
            if (got < 0) {
                tl_profile_warn(p, "a read error after %" PRIu64 " bytes: read up to there", bytes + len);
                p->truncated = 1;
                eof = 1;
            } else if (got == 0) {
                eof = 1;
            } else {
                len += (size_t)got;
            }
        }
        char *nl = memchr(buf, '\n', len);
        if (nl == NULL && !eof && len < cap)
            continue;
        if (nl == NULL && !eof) { /* a line longer than the buffer */
            if (cap < TL_STACKS_MAX_LINE) {
                char *x = realloc(buf, cap * 2);
                if (x == NULL)
                    goto out;
                buf = x;
                cap *= 2;
            } else {
                st.too_long += !skipping;
                skipping = 1;
                bytes += len;
                len = 0;
            }
            continue;
        }
        size_t n = nl != NULL ? (size_t)(nl - buf) : len;
        if (skipping)
            skipping = 0;
        else if (n > 0)
            one_line(&st, buf, n);
        size_t used = nl != NULL ? n + 1 : len;
        memmove(buf, buf + used, len - used);
        len -= used;
        bytes += used;
    }
    p->bytes = bytes;
    p->events = st.lines;
    p->malformed = st.malformed + st.too_long;
    if (st.malformed)
        tl_profile_warn(p, "%" PRIu64 " lines that are not \"frame;frame;frame value\" skipped", st.malformed);
    if (st.too_long)
        tl_profile_warn(p, "%" PRIu64 " lines longer than %u bytes skipped", st.too_long, TL_STACKS_MAX_LINE);
    if (st.t->dropped)
        tl_profile_warn(p,
                        "%" PRIu64 " stacks went past the call tree's %u nodes: their time stays in the frames "
                        "above",
                        st.t->dropped, TL_CALLTREE_MAX_NODES);
    p->id.format = TL_FMT_STACKS;
    snprintf(p->format_detail, sizeof p->format_detail, "%" PRIu64 " stacks", st.lines);
    if (st.lines == 0) {
        tl_profile_skip(p, "no stack lines: a stacks file with nothing to measure is not a usable rank");
    } else {
        p->calltree = st.t;
        st.t = NULL;
        p->nesting = TL_NEST_DONE;
    }
    ret = 0;
out:
    if (st.t != NULL) {
        tl_calltree_release(st.t);
        free(st.t);
    }
    free(buf);
    if (ret != 0) {
        tl_profile_skip(p, "out of memory");
        p->error = 1;
    }
    return ret;
}
