/*
 * text_table.c - human units for console tables (see text_table.h).
 */
#include "text_table.h"

#include "term.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *tl_fmt_duration(char *buf, size_t len, double ns)
{
    if (!isfinite(ns))
        snprintf(buf, len, "-");
    else if (ns >= 1e9)
        snprintf(buf, len, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, len, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, len, "%.3f us", ns / 1e3);
    else
        snprintf(buf, len, "%.0f ns", ns);
    return buf;
}

const char *tl_fmt_bytes(char *buf, size_t len, double b)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    if (!isfinite(b)) {
        snprintf(buf, len, "-");
        return buf;
    }
    while (fabs(b) >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
    return buf;
}

const char *tl_fmt_cut(char *buf, size_t len, const char *raw, size_t width)
{
    /* Control characters from the input shown escaped (term.h), before
     * measuring, so the columns stay aligned. */
    char esc[1024];
    const char *s = tl_term_escape(esc, sizeof esc, raw);
    size_t n = strlen(s);
    if (width + 1 > len)
        width = len - 1;
    if (n <= width) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    /* Cut on a UTF-8 character boundary. */
    size_t cut = width > 3 ? width - 3 : 0;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    snprintf(buf, len, "%.*s...", (int)cut, s);
    return buf;
}
