/*
 * escape.c - context escaping for HTML, SVG and Markdown (see escape.h).
 * One loop per context over bytes; multi-byte UTF-8 passes through as is,
 * since none of the characters that need escaping is outside ASCII.
 */
#include "escape.h"

#include <string.h>

enum { CTX_TEXT, CTX_ATTR, CTX_MD };

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t tl_escape_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (max == 0 || n <= max)
        return n;
    size_t cut = max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    return cut;
}

static int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;
}

static void put_html(FILE *f, unsigned char c, int attr)
{
    switch (c) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': attr ? fputs("&quot;", f) : fputc(c, f); break;
    case '\'': attr ? fputs("&#39;", f) : fputc(c, f); break;
    case '\n': attr ? fputs("&#10;", f) : fputc(c, f); break;
    default: is_control(c) ? fputs(replacement, f) : fputc(c, f); break;
    }
}

static void put_md(FILE *f, unsigned char c)
{
    if (c == '\n' || c == '\r' || c == '\t') {
        fputc(' ', f);
    } else if (is_control(c)) {
        fputs(replacement, f);
    } else if (c != 0 && strchr("|\\`*_[]<>#~&!", c) != NULL) {
        fputc('\\', f);
        fputc(c, f);
    } else {
        fputc(c, f);
    }
}

static void escape(FILE *f, const char *s, size_t max, int ctx)
{
    if (s == NULL)
        return;
    size_t n = tl_escape_cut(s, max);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (ctx == CTX_MD)
            put_md(f, c);
        else
            put_html(f, c, ctx == CTX_ATTR);
    }
    if (s[n] != '\0')
        fputs("\xe2\x80\xa6", f); /* … */
}

void tl_escape_html(FILE *f, const char *s) { escape(f, s, 0, CTX_TEXT); }
void tl_escape_html_n(FILE *f, const char *s, size_t max) { escape(f, s, max, CTX_TEXT); }
void tl_escape_attr(FILE *f, const char *s) { escape(f, s, 0, CTX_ATTR); }
void tl_escape_attr_n(FILE *f, const char *s, size_t max) { escape(f, s, max, CTX_ATTR); }
void tl_escape_md(FILE *f, const char *s) { escape(f, s, 0, CTX_MD); }
void tl_escape_md_n(FILE *f, const char *s, size_t max) { escape(f, s, max, CTX_MD); }
