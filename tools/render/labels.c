/*
 * labels.c - names people can tell apart (see labels.h).
 *
 * Compacting reads a demangled C++ name with a small bracket-aware scanner:
 * depth counts (), <>, [] and {} together, so "::", "," and spaces inside
 * template arguments or parameter lists are not mistaken for the top-level
 * ones. Anything the scanner cannot match (an unbalanced bracket, a name
 * that is not C++ at all) is kept as it is: compacting never invents text.
 */
#define _GNU_SOURCE
#include "labels.h"
#include "array.h"

#include <stdlib.h>
#include <string.h>

#ifdef TALLY_HAVE_LIBIBERTY
#include <demangle.h>
#endif

#define ELLIPSIS "\xe2\x80\xa6" /* … */
#define SUFFIX_ROUNDS 4         /* rounds of " #k" suffixes before giving up */

/* ---- a growable string ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (tl_array_grow(&b->p, b->n + len, &b->cap, 1, 64) != 0) { /* room for the NUL after s */
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static char *sb_detach(sbuf *b)
{
    if (b->oom) {
        free(b->p);
        return NULL;
    }
    if (b->p == NULL)
        return strdup("");
    return b->p;
}

/* ---- demangling ---------------------------------------------------------------------------- */

char *tl_labels_demangle(const char *name)
{
    if (name == NULL || strncmp(name, "_Z", 2) != 0 || strlen(name) > TL_LABELS_DEMANGLE_MAX)
        return NULL;
#ifdef TALLY_HAVE_LIBIBERTY
    return cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
#else
    return NULL;
#endif
}

char *tl_labels_full(const char *name)
{
    char *d = tl_labels_demangle(name);
    return d ? d : strdup(name ? name : "");
}

/* ---- compacting ------------------------------------------------------------------------------ */

static int opens(char c)
{
    return c == '(' || c == '<' || c == '[' || c == '{';
}

static int closes(char c)
{
    return c == ')' || c == '>' || c == ']' || c == '}';
}

/* The index of the bracket closing the one at s[i], or -1. */
static long match_forward(const char *s, size_t len, size_t i)
{
    int depth = 0;
    for (size_t k = i; k < len; k++) {
        if (opens(s[k]))
            depth++;
        else if (closes(s[k]) && --depth == 0)
            return (long)k;
    }
    return -1;
}

/* The index of the bracket opening the one that closes at s[i], or -1. */
static long match_backward(const char *s, size_t i)
{
    int depth = 0;
    for (size_t k = i + 1; k-- > 0;) {
        if (closes(s[k]))
            depth++;
        else if (opens(s[k]) && --depth == 0)
            return (long)k;
    }
    return -1;
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && **s == ' ') {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && (*s)[*len - 1] == ' ')
        (*len)--;
}

static int ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '~';
}

/* A component that names something (not a lambda, an operator or an
 * anonymous namespace), so it can stand for the whole qualified name. */
static int real_component(const char *c, size_t len)
{
    return len > 0 && ident_start(c[0]) && !(len >= 8 && memcmp(c, "operator", 8) == 0);
}

static void compact_range(sbuf *out, const char *s, size_t len, int detail, int top);

/* Template arguments s[0..len) (without the brackets), each compacted. */
static void compact_args(sbuf *out, const char *s, size_t len, int detail)
{
    int depth = 0;
    size_t start = 0, nargs = 0;
    for (size_t k = 0; k <= len; k++) {
        if (k < len && opens(s[k]))
            depth++;
        else if (k < len && closes(s[k]))
            depth--;
        if (k == len || (s[k] == ',' && depth == 0)) {
            if (nargs++)
                sb_str(out, ", ");
            compact_range(out, s + start, k - start, detail, 0);
            start = k + 1;
        }
    }
}

/* One component of a qualified name: "Name<args>(params)" -> "Name<args'>". */
static void compact_component(sbuf *out, const char *c, size_t len, int detail)
{
    size_t i = 0;
    while (i < len && c[i] != '<' && c[i] != '(')
        i++;
    sb_add(out, c, i);
    if (i < len && c[i] == '<') {
        long close = match_forward(c, len, i);
        if (close < 0) {
            sb_add(out, c + i, len - i);
            return;
        }
        sb_str(out, "<");
        compact_args(out, c + i + 1, (size_t)close - i - 1, detail);
        sb_str(out, ">");
        i = (size_t)close + 1;
    }
    /* what follows: a parameter list that ends the component (dropped), or
     * more text, kept as it is ("enumerate(DataLoader)#..." is no C++) */
    int keyword = i >= 8 && memcmp(c + i - 8, "decltype", 8) == 0; /* decltype(nullptr) is a type */
    if (i < len && c[i] == '(' && !keyword) {
        long close = match_forward(c, len, i);
        size_t e = close < 0 ? len : (size_t)close + 1;
        while (e < len && c[e] == ' ')
            e++;
        if (e + 5 <= len && memcmp(c + e, "const", 5) == 0)
            e += 5;
        if (close >= 0 && e == len)
            i = len;
    }
    if (i < len)
        sb_add(out, c + i, len - i);
}

/* Just after the last space of c[0..len) outside brackets (not at its end),
 * or 0 when there is none: where a name starts after its return type, and
 * whether a component is a phrase rather than a name. */
static size_t after_last_space(const char *c, size_t len)
{
    int depth = 0;
    size_t cut = 0;
    for (size_t k = 0; k < len; k++) {
        if (opens(c[k]))
            depth++;
        else if (closes(c[k]))
            depth--;
        else if (c[k] == ' ' && depth == 0 && k + 1 < len)
            cut = k + 1;
    }
    return cut;
}

/* A qualified name: from its last real component on, lambdas as {lambda}
 * (with detail: each with its number, "{lambda#2}"). */
static void compact_qualified(sbuf *out, const char *s, size_t len, int detail)
{
    size_t starts[64], ends[64], n = 0, from = 0;
    int depth = 0;
    for (size_t k = 0; k <= len && n < 64; k++) {
        if (k < len && opens(s[k]))
            depth++;
        else if (k < len && closes(s[k]))
            depth--;
        if (k == len || (depth == 0 && k + 1 < len && s[k] == ':' && s[k + 1] == ':')) {
            starts[n] = from;
            ends[n] = k;
            n++;
            from = k + 2;
            if (k < len)
                k++;
        }
    }
    if (n == 0 || n == 64 || depth != 0) {
        sb_add(out, s, len);
        return;
    }
    size_t anchor = n - 1;
    for (size_t i = n; i-- > 0;)
        if (real_component(s + starts[i], ends[i] - starts[i])) {
            anchor = i;
            break;
        }
    /* "evaluate_function: torch::autograd::AccumulateGrad": a phrase before
     * the name stays, or the name would lose what it is about */
    for (size_t i = anchor; i-- > 0;)
        if (after_last_space(s + starts[i], ends[i] - starts[i]) > 0) {
            anchor = i;
            break;
        }
    int last_lambda = 0, emitted = 0;
    for (size_t i = anchor; i < n; i++) {
        const char *c = s + starts[i];
        size_t cl = ends[i] - starts[i];
        trim(&c, &cl);
        if (i > anchor && cl >= 8 && memcmp(c, "operator", 8) == 0)
            continue; /* the call operator between lambdas says nothing */
        int lambda = cl >= 7 && memcmp(c, "{lambda", 7) == 0;
        if (lambda && last_lambda && !detail)
            continue;
        if (emitted++)
            sb_str(out, "::");
        if (lambda && detail) {
            const char *hash = memrchr(c, '#', cl);
            sb_str(out, "{lambda");
            if (hash != NULL)
                sb_add(out, hash, cl - (size_t)(hash - c));
            else
                sb_str(out, "}");
        } else if (lambda) {
            sb_str(out, "{lambda}");
        } else {
            compact_component(out, c, cl, detail);
        }
        last_lambda = lambda;
    }
}

static void compact_range(sbuf *out, const char *s, size_t len, int detail, int top)
{
    trim(&s, &len);
    size_t name_len = len;
    const char *params = NULL;
    size_t params_len = 0;
    if (top) {
        size_t end = len;
        if (end >= 6 && memcmp(s + end - 6, " const", 6) == 0)
            end -= 6;
        if (end > 0 && s[end - 1] == ')') {
            long open = match_backward(s, end - 1);
            if (open > 0) {
                name_len = (size_t)open;
                params = s + open + 1;
                params_len = end - 2 - (size_t)open;
            }
        }
        /* the return type: everything before the last top-level space */
        if (params != NULL) {
            size_t cut = after_last_space(s, name_len);
            s += cut;
            name_len -= cut;
            trim(&s, &name_len);
        }
    }
    compact_qualified(out, s, name_len, detail);
    if (params != NULL && detail) {
        sb_str(out, "(");
        compact_args(out, params, params_len, detail);
        sb_str(out, ")");
    }
}

/* Compacting is for C++ names: with a namespace, template arguments, or a
 * parameter list right after a name ("f(int)", not "Memcpy HtoD (Pageable)"). */
static int looks_cxx(const char *s)
{
    size_t n = strlen(s);
    if (strstr(s, "::") != NULL || strchr(s, '<') != NULL)
        return 1;
    if (n < 3 || s[n - 1] != ')')
        return 0;
    long open = match_backward(s, n - 1);
    return open > 0 && (ident_start(s[open - 1]) || (s[open - 1] >= '0' && s[open - 1] <= '9'));
}

char *tl_labels_compact(const char *name, int detail)
{
    sbuf b = { 0 };
    if (name == NULL || !looks_cxx(name))
        return strdup(name ? name : "");
    compact_range(&b, name ? name : "", name ? strlen(name) : 0, detail, 1);
    return sb_detach(&b);
}

/* ---- fitting --------------------------------------------------------------------------------- */

size_t tl_labels_cols(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The byte offset of code point cp of s (strlen when past the end). */
static size_t at_cp(const char *s, size_t cp)
{
    size_t i = 0;
    for (size_t seen = 0; s[i]; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80 && seen++ == cp)
            return i;
    return i;
}

/* s's code points [a, b) */
static void add_cps(sbuf *out, const char *s, size_t a, size_t b)
{
    size_t x = at_cp(s, a), y = at_cp(s, b);
    sb_add(out, s + x, y > x ? y - x : 0);
}

/* Code points up to and with the first '<' or '(': the name's base. */
static size_t base_cps(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (((unsigned char)*p & 0xc0) == 0x80)
            continue;
        n++;
        if (*p == '<' || *p == '(')
            return n;
    }
    return n;
}

static int word_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* Where to start showing a difference at code point fs: at the start of its
 * word, and of the template it is an argument of ("FillFunctor<float>", not
 * "float>"), going back at most max code points. */
static size_t word_start(const char *s, size_t fs, size_t max)
{
    size_t at = at_cp(s, fs), from = at;
    while (from > 0 && at - from < max && (word_char(s[from - 1]) || s[from - 1] == '#' || s[from - 1] == '{'))
        from--;
    if (from > 1 && s[from - 1] == '<' && word_char(s[from - 2])) {
        size_t t = from - 1;
        while (t > 0 && at - t < max && word_char(s[t - 1]))
            t--;
        from = t;
    }
    size_t cps = 0;
    for (size_t i = 0; i < from; i++)
        cps += ((unsigned char)s[i] & 0xc0) != 0x80;
    return cps;
}

char *tl_labels_fit(const char *s, size_t width, size_t fs, size_t fe)
{
    sbuf b = { 0 };
    size_t n = tl_labels_cols(s);
    if (width < TL_LABELS_MIN_WIDTH)
        width = TL_LABELS_MIN_WIDTH;
    if (n <= width)
        return strdup(s);
    if (fe > n)
        fe = n;
    size_t base = base_cps(s);
    if (fs >= fe) {
        /* no focus: the start and the end, which often tells most apart */
        size_t h = (width - 1) * 3 / 5, t = width - 1 - h;
        add_cps(&b, s, 0, h);
        sb_str(&b, ELLIPSIS);
        add_cps(&b, s, n - t, n);
        return sb_detach(&b);
    }
    if (fe <= width - 1) { /* the difference is in what fits: cut the end */
        add_cps(&b, s, 0, width - 1);
        sb_str(&b, ELLIPSIS);
        return sb_detach(&b);
    }
    /* the name's base, up to half the width */
    size_t h = base < (width - 2) / 2 ? base : (width - 2) / 2;
    size_t w = width - 2 - h, from = word_start(s, fs, w * 2 / 3);
    if (n - from + h + 1 <= width) { /* the difference is in the tail */
        size_t t = width - 1 - h;
        add_cps(&b, s, 0, h);
        sb_str(&b, ELLIPSIS);
        add_cps(&b, s, n - t, n);
        return sb_detach(&b);
    }
    if (from <= h) {
        add_cps(&b, s, 0, width - 1);
        sb_str(&b, ELLIPSIS);
        return sb_detach(&b);
    }
    add_cps(&b, s, 0, h);
    sb_str(&b, ELLIPSIS);
    add_cps(&b, s, from, from + w);
    sb_str(&b, ELLIPSIS);
    return sb_detach(&b);
}

char *tl_labels_box(const char *name, size_t cols)
{
    if (name == NULL || cols < 1)
        return NULL;
    if (tl_labels_cols(name) <= cols)
        return strdup(name);
    if (cols < 4)
        return NULL; /* a cut needs three characters and the ellipsis to say anything */
    /* "## name ##" (torchrec's record_function markers): the marks say nothing in a cut label */
    size_t len = strlen(name);
    if (len > 6 && strncmp(name, "## ", 3) == 0 && strcmp(name + len - 3, " ##") == 0) {
        char *inner = strndup(name + 3, len - 6);
        char *l = inner ? tl_labels_box(inner, cols) : NULL;
        free(inner);
        return l;
    }
    /* compacted only when it is a C++ name: "Awaitable wait()" of an annotation is not a return type */
    char *c = strstr(name, "::") || strchr(name, '<') ? tl_labels_compact(name, 0) : strdup(name);
    if (c == NULL)
        return NULL;
    char *l = NULL;
    if (tl_labels_cols(c) <= cols) {
        l = c;
        c = NULL;
    } else if (cols >= TL_LABELS_MIN_WIDTH) {
        l = tl_labels_fit(c, cols, 0, 0);
    } else {
        /* too narrow for a middle cut: the start and an ellipsis */
        sbuf b = { 0 };
        add_cps(&b, c, 0, cols - 1);
        sb_str(&b, ELLIPSIS);
        l = sb_detach(&b);
    }
    free(c);
    return l;
}

/* ---- a set of labels -------------------------------------------------------------------------- */

void tl_labels_release(tl_labels *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->full)
            free(l->full[i]);
        if (l->text)
            free(l->text[i]);
    }
    free(l->full);
    free(l->text);
    memset(l, 0, sizeof *l);
}

static int by_text(const void *x, const void *y, void *ctx)
{
    const tl_labels *l = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int c = strcmp(l->text[a], l->text[b]);
    return c ? c : (a > b) - (a < b); /* stable: earlier names keep their label */
}

/* Indices sorted by text into idx; returns whether any two texts are equal. */
static int collisions(tl_labels *l, size_t *idx)
{
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    qsort_r(idx, l->n, sizeof *idx, by_text, l);
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->text[idx[i]], l->text[idx[i - 1]]) == 0)
            return 1;
    return 0;
}

/* Code points s and t share at the start, and at the end (not overlapping). */
static void common(const char *s, const char *t, size_t *pre, size_t *suf)
{
    size_t ls = strlen(s), lt = strlen(t), p = 0, q = 0;
    while (p < ls && p < lt && s[p] == t[p])
        p++;
    while (p > 0 && ((unsigned char)s[p] & 0xc0) == 0x80)
        p--;
    while (q < ls - p && q < lt - p && s[ls - 1 - q] == t[lt - 1 - q])
        q++;
    while (q > 0 && ((unsigned char)s[ls - q] & 0xc0) == 0x80)
        q--;
    char *sp = strndup(s, p);
    *pre = sp ? tl_labels_cols(sp) : 0;
    *suf = tl_labels_cols(s + ls - q);
    free(sp);
}

/* The string of name i at level lvl: 0 compact, 1 compact with parameters,
 * 2 full. A name that fits whole is always itself. */
static char *level_text(const tl_labels *l, size_t i, int lvl, size_t width)
{
    if (lvl >= 2 || tl_labels_cols(l->full[i]) <= width)
        return strdup(l->full[i]);
    return tl_labels_compact(l->full[i], lvl == 1);
}

/* Relabel the members g[0..m) of one collision group at level lvl, each cut
 * to keep where it differs from the others. */
static int relabel(tl_labels *l, const size_t *g, size_t m, int lvl, size_t width)
{
    char **s = calloc(m, sizeof *s);
    int rc = -1;
    if (s == NULL)
        return -1;
    for (size_t i = 0; i < m; i++)
        if ((s[i] = level_text(l, g[i], lvl, width)) == NULL)
            goto out;
    for (size_t i = 0; i < m; i++) {
        size_t n = tl_labels_cols(s[i]), fs = n, fe = 0;
        for (size_t j = 0; j < m; j++) {
            size_t pre, suf;
            if (j == i || strcmp(s[i], s[j]) == 0)
                continue;
            common(s[i], s[j], &pre, &suf);
            fs = pre < fs ? pre : fs;
            fe = n - suf > fe ? n - suf : fe;
        }
        if (fe <= fs)
            fs = fe = 0;
        char *t = tl_labels_fit(s[i], width, fs, fe);
        if (t == NULL)
            goto out;
        free(l->text[g[i]]);
        l->text[g[i]] = t;
    }
    rc = 0;
out:
    for (size_t i = 0; i < m; i++)
        free(s[i]);
    free(s);
    return rc;
}

/* The runs of equal texts in idx (sorted by text): each run's first index
 * into starts, its length into lens; returns the number of runs. */
static size_t runs(const tl_labels *l, const size_t *idx, size_t *starts, size_t *lens)
{
    size_t nr = 0;
    for (size_t i = 0; i < l->n;) {
        size_t j = i + 1;
        while (j < l->n && strcmp(l->text[idx[j]], l->text[idx[i]]) == 0)
            j++;
        if (j - i > 1) {
            starts[nr] = i;
            lens[nr++] = j - i;
        }
        i = j;
    }
    return nr;
}

/* One pass over the groups of equal texts at level lvl: 1 when there were
 * none, 0 when they were relabelled, -1 when out of memory. */
static int pass(tl_labels *l, size_t *idx, size_t *starts, size_t *lens, int lvl, size_t width)
{
    if (!collisions(l, idx))
        return 1;
    size_t nr = runs(l, idx, starts, lens);
    for (size_t r = 0; r < nr; r++)
        if (relabel(l, idx + starts[r], lens[r], lvl, width) != 0)
            return -1;
    return 0;
}

/* The last resort: " #2", " #3", ... on the later names of equal texts. */
static int suffixes(tl_labels *l, size_t *idx, size_t *starts, size_t *lens, size_t width)
{
    for (int round = 0; round < SUFFIX_ROUNDS && collisions(l, idx); round++) {
        size_t nr = runs(l, idx, starts, lens);
        for (size_t r = 0; r < nr; r++)
            for (size_t k = 1; k < lens[r]; k++) {
                size_t i = idx[starts[r] + k];
                char suffix[32];
                snprintf(suffix, sizeof suffix, " #%zu", k + 1);
                size_t sl = strlen(suffix);
                char *head = tl_labels_fit(l->text[i],
                                           width > sl + TL_LABELS_MIN_WIDTH ? width - sl : TL_LABELS_MIN_WIDTH, 0, 0);
                sbuf b = { 0 };
                if (head == NULL)
                    return -1;
                sb_str(&b, head);
                sb_str(&b, suffix);
                free(head);
                char *t = sb_detach(&b);
                if (t == NULL)
                    return -1;
                free(l->text[i]);
                l->text[i] = t;
            }
    }
    return 0;
}

/* The first labels: a name that does not fit is compacted and cut so that
 * it keeps where it parts from its nearest sibling in the set (the name it
 * shares the longest start with, when they share more than the base name:
 * "vectorized_elementwise…FillFunctor<int>, Arr…"), else its start and end. */
static int first_labels(tl_labels *l, size_t width)
{
    char **c = calloc(l->n + 1, sizeof *c);
    int rc = -1;
    if (c == NULL)
        return -1;
    for (size_t i = 0; i < l->n; i++)
        if ((c[i] = level_text(l, i, 0, width)) == NULL)
            goto out;
    for (size_t i = 0; i < l->n; i++) {
        size_t best = 0, fs = 0, fe = 0;
        if (tl_labels_cols(c[i]) > width) {
            for (size_t j = 0; j < l->n; j++) {
                size_t pre, suf;
                if (j == i || strcmp(c[i], c[j]) == 0)
                    continue;
                common(c[i], c[j], &pre, &suf);
                best = pre > best ? pre : best;
            }
            if (best >= base_cps(c[i])) {
                fs = best;
                fe = best + 1;
            }
        }
        if ((l->text[i] = tl_labels_fit(c[i], width, fs, fe)) == NULL)
            goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; i < l->n; i++)
        free(c[i]);
    free(c);
    return rc;
}

int tl_labels_make(tl_labels *l, const char *const *names, size_t n, size_t width)
{
    memset(l, 0, sizeof *l);
    if (width < TL_LABELS_MIN_WIDTH)
        width = TL_LABELS_MIN_WIDTH;
    l->full = calloc(n + 1, sizeof *l->full);
    l->text = calloc(n + 1, sizeof *l->text);
    size_t *idx = malloc((n + 1) * sizeof *idx), *starts = malloc((n + 1) * sizeof *starts);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    if (l->full == NULL || l->text == NULL || idx == NULL || starts == NULL || lens == NULL)
        goto fail;
    l->n = n;
    for (size_t i = 0; i < n; i++)
        if ((l->full[i] = tl_labels_full(names[i])) == NULL)
            goto fail;
    if (first_labels(l, width) != 0)
        goto fail;
    for (int lvl = 0; lvl < 3; lvl++)
        for (int k = 0; k < 2; k++) {
            int rc = pass(l, idx, starts, lens, lvl, width);
            if (rc < 0)
                goto fail;
            if (rc == 1)
                goto distinct;
        }
distinct:
    if (suffixes(l, idx, starts, lens, width) != 0)
        goto fail;
    free(idx);
    free(starts);
    free(lens);
    return 0;
fail:
    free(idx);
    free(starts);
    free(lens);
    tl_labels_release(l);
    return -1;
}
