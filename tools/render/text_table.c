/*
 * text_table.c - console tables that fit a width (see text_table.h).
 */
#define _GNU_SOURCE
#include "text_table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "array.h"
#include "labels.h"
#include "term.h"

/* s with the control characters of an input shown escaped (term.h), before
 * anything is measured, so columns stay aligned and a newline in a name
 * cannot forge a line (malloc'd; NULL when out of memory). */
static char *escaped(const char *s)
{
    size_t len = 8 * strlen(s) + 16; /* the longest escape of one byte, with room */
    char *buf = malloc(len);
    return buf ? tl_term_escape(buf, len, s) : NULL;
}

void tl_text_table_init(tl_text_table *t, const tl_text_col *cols, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
    t->ncols = ncols;
}

void tl_text_table_release(tl_text_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void tl_text_table_row(tl_text_table *t, const char *const *cells)
{
    if (t->oom)
        return;
    if (tl_array_grow(&t->cells, t->nrows, &t->cap, t->ncols * sizeof *t->cells, 16) != 0) { /* a row: ncols cells */
        t->oom = 1;
        return;
    }
    char **row = t->cells + t->nrows * t->ncols;
    for (size_t k = 0; k < t->ncols; k++) {
        row[k] = escaped(cells[k] ? cells[k] : "");
        if (row[k] == NULL)
            t->oom = 1;
    }
    t->nrows++;
}

/* s padded to w display columns, on the left (right-aligned) or the right. */
static void cell(FILE *out, const char *s, size_t w, int right, int last)
{
    size_t c = tl_labels_cols(s), pad = c < w ? w - c : 0;
    if (right)
        fprintf(out, "%*s%s", (int)pad, "", s);
    else
        fprintf(out, "%s%*s", s, last ? 0 : (int)pad, "");
}

static size_t natural(const tl_text_table *t, size_t k)
{
    size_t w = tl_labels_cols(t->cols[k].head);
    for (size_t r = 0; r < t->nrows; r++) {
        size_t c = tl_labels_cols(t->cells[r * t->ncols + k]);
        w = c > w ? c : w;
    }
    return w;
}

/* The columns shown (shown[k]) at width, and the flexible column's width. */
static size_t layout(const tl_text_table *t, const size_t *nat, int *shown, size_t width, size_t *need)
{
    size_t flex = t->ncols, total = 0;
    for (size_t k = 0; k < t->ncols; k++) {
        shown[k] = 1;
        if (t->cols[k].flex)
            flex = k;
        /* the names column counts at its least: every column fits beside it */
        total += (t->cols[k].flex && nat[k] > TL_TEXT_FLEX_MIN ? TL_TEXT_FLEX_MIN : nat[k]) + (k ? TL_TEXT_GAP : 0);
    }
    *need = total;
    for (;;) {
        size_t used = 0, n = 0;
        for (size_t k = 0; k < t->ncols; k++)
            if (shown[k]) {
                size_t w = k == flex ? (nat[k] < TL_TEXT_FLEX_MIN ? nat[k] : TL_TEXT_FLEX_MIN) : nat[k];
                used += w + (n++ ? TL_TEXT_GAP : 0);
            }
        if (used <= width)
            break;
        size_t drop = t->ncols;
        for (size_t k = 0; k < t->ncols; k++)
            if (shown[k] && t->cols[k].priority > 0 &&
                (drop == t->ncols || t->cols[k].priority >= t->cols[drop].priority))
                drop = k;
        if (drop == t->ncols)
            break; /* only what must be shown is left: it may be wider */
        shown[drop] = 0;
    }
    if (flex == t->ncols)
        return 0;
    size_t others = 0, n = 0;
    for (size_t k = 0; k < t->ncols; k++)
        if (shown[k])
            others += (k == flex ? 0 : nat[k]) + (n++ ? TL_TEXT_GAP : 0);
    size_t room = width > others ? width - others : 0;
    size_t min = nat[flex] < TL_TEXT_FLEX_MIN ? nat[flex] : TL_TEXT_FLEX_MIN;
    return room < min ? min : room < nat[flex] ? room : nat[flex];
}

static int by_text(const void *x, const void *y, void *cells)
{
    const char *const *c = cells;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int d = strcmp(c[a], c[b]);
    return d ? d : (a > b) - (a < b);
}

/* The names column's distinct texts, in first-seen order, into uniq (*nu of
 * them); row r's text is uniq[id[r]]. Equal names get one label: a counter
 * or snapshot that every rank has is one name, never "tokens #2". */
static int distinct(const char **names, size_t n, const char **uniq, size_t *id, size_t *nu)
{
    size_t *ord = malloc((n + 1) * sizeof *ord), *rep = malloc((n + 1) * sizeof *rep);
    if (ord == NULL || rep == NULL) {
        free(ord);
        free(rep);
        return -1;
    }
    for (size_t r = 0; r < n; r++)
        ord[r] = r;
    qsort_r(ord, n, sizeof *ord, by_text, names);
    for (size_t k = 0; k < n; k++) /* each row's first equal row */
        rep[ord[k]] = k > 0 && strcmp(names[ord[k]], names[ord[k - 1]]) == 0 ? rep[ord[k - 1]] : ord[k];
    *nu = 0;
    for (size_t r = 0; r < n; r++) {
        if (rep[r] == r) {
            id[r] = (*nu)++;
            uniq[id[r]] = names[r];
        } else {
            id[r] = id[rep[r]];
        }
    }
    free(ord);
    free(rep);
    return 0;
}

int tl_text_table_print(FILE *out, tl_text_table *t, size_t width)
{
    int rc = -1;
    size_t *nat = calloc(t->ncols + 1, sizeof *nat), need = 0, flex = t->ncols;
    int *shown = calloc(t->ncols + 1, sizeof *shown);
    const char **names = calloc(t->nrows + 1, sizeof *names), **uniq = calloc(t->nrows + 1, sizeof *uniq);
    size_t *id = calloc(t->nrows + 1, sizeof *id), nu = 0;
    tl_labels lab = { 0 };
    if (nat == NULL || shown == NULL || names == NULL || uniq == NULL || id == NULL || t->oom)
        goto out;
    for (size_t k = 0; k < t->ncols; k++) {
        nat[k] = natural(t, k);
        if (t->cols[k].flex)
            flex = k;
    }
    size_t fw = layout(t, nat, shown, width, &need);
    if (flex < t->ncols) {
        for (size_t r = 0; r < t->nrows; r++)
            names[r] = t->cells[r * t->ncols + flex];
        if (distinct(names, t->nrows, uniq, id, &nu) != 0 || tl_labels_make(&lab, uniq, nu, fw) != 0)
            goto out;
        /* labels may be narrower than the width given: size the column by them */
        size_t w = tl_labels_cols(t->cols[flex].head);
        for (size_t r = 0; r < nu; r++) {
            size_t c = tl_labels_cols(lab.text[r]);
            w = c > w ? c : w;
        }
        nat[flex] = w;
    }
    size_t last = 0, total = 0, n = 0;
    for (size_t k = 0; k < t->ncols; k++)
        if (shown[k]) {
            last = k;
            total += nat[k] + (n++ ? TL_TEXT_GAP : 0);
        }
    for (size_t k = 0, first = 1; k < t->ncols; k++)
        if (shown[k]) {
            fprintf(out, "%*s", first ? 0 : TL_TEXT_GAP, "");
            cell(out, t->cols[k].head, nat[k], t->cols[k].right, k == last);
            first = 0;
        }
    fputc('\n', out);
    for (size_t i = 0; i < total; i++)
        fputc('-', out);
    fputc('\n', out);
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t k = 0, first = 1; k < t->ncols; k++)
            if (shown[k]) {
                const char *s = k == flex ? lab.text[id[r]] : t->cells[r * t->ncols + k];
                fprintf(out, "%*s", first ? 0 : TL_TEXT_GAP, "");
                cell(out, s, nat[k], t->cols[k].right, k == last);
                first = 0;
            }
        fputc('\n', out);
    }
    char *note = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&note, &len);
    int hidden = 0;
    for (size_t k = 0; m && k < t->ncols; k++)
        if (!shown[k]) {
            if (hidden++)
                fprintf(m, ", %s", t->cols[k].head);
            else
                fprintf(m, "(not shown at %zu columns: %s", width, t->cols[k].head);
        }
    if (m && hidden)
        fprintf(m, "; --width %zu shows all)", need);
    if (m)
        fclose(m);
    if (hidden && note)
        tl_text_wrap(out, "", note, width);
    free(note);
    rc = 0;
out:
    tl_labels_release(&lab);
    free(nat);
    free(shown);
    free(names);
    free(uniq);
    free(id);
    return rc;
}

/* The byte length of the first `cols` code points of s. */
static size_t prefix_bytes(const char *s, size_t len, size_t cols)
{
    size_t i = 0, c = 0;
    while (i < len) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == cols)
            break;
        i++;
    }
    return i;
}

void tl_text_wrap(FILE *out, const char *first, const char *raw, size_t width)
{
    size_t indent = tl_labels_cols(first), room = width > indent + 10 ? width - indent : 10;
    char *text = escaped(raw ? raw : "");
    const char *p = text ? text : "";
    fputs(first, out);
    size_t col = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        size_t len = strcspn(p, " ");
        char *word = strndup(p, len);
        size_t wc = word ? tl_labels_cols(word) : len;
        free(word);
        if (col > 0 && col + 1 + wc > room) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = 0;
        }
        if (col > 0) {
            fputc(' ', out);
            col++;
        }
        while (wc > room - col) { /* a word longer than a line */
            size_t b = prefix_bytes(p, len, room - col);
            fwrite(p, 1, b, out);
            p += b;
            len -= b;
            wc -= room - col;
            fprintf(out, "\n%*s", (int)indent, "");
            col = 0;
        }
        fwrite(p, 1, len, out);
        col += wc;
        p += len;
    }
    fputc('\n', out);
    free(text);
}

size_t tl_text_width(int want, int fd)
{
    long w = want;
    struct winsize ws;
    if (w <= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    if (w <= 0)
        w = TL_TEXT_DEFAULT_WIDTH;
    return (size_t)(w < TL_TEXT_MIN_WIDTH ? TL_TEXT_MIN_WIDTH : w > TL_TEXT_MAX_WIDTH ? TL_TEXT_MAX_WIDTH : w);
}
