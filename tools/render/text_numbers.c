/*
 * text_numbers.c - the analysis's typed numbers written by the one
 * formatter (see text_numbers.h).
 */
#define _GNU_SOURCE
#include "text_numbers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* A threshold's text: the formatter's without trailing zeros ("1.000 ms" is
 * "1 ms", "256.0 MiB" is "256 MiB"). */
static const char *round_text(char *buf)
{
    char *dot = strchr(buf, '.');
    if (dot == NULL)
        return buf;
    size_t digits = strspn(dot + 1, "0123456789"), zeros = 0;
    while (zeros < digits && dot[digits - zeros] == '0')
        zeros++;
    /* "1.000 ms" -> "1 ms"; "1.500 ms" -> "1.5 ms" */
    size_t keep = digits - zeros, from = 1 + digits;
    memmove(dot + (keep ? 1 + keep : 0), dot + from, strlen(dot + from) + 1);
    return buf;
}

const char *tl_text_number(char *buf, size_t len, tl_num_kind kind, double v)
{
    switch (kind) {
    case TL_NUM_DUR:
        return tl_units_dur(buf, len, v);
    case TL_NUM_DUR_ROUND:
        return round_text((char *)tl_units_dur(buf, len, v));
    case TL_NUM_BYTES:
        return tl_units_bytes(buf, len, v);
    case TL_NUM_BYTES_ROUND:
        return round_text((char *)tl_units_bytes(buf, len, v));
    case TL_NUM_PCT_WHOLE:
    case TL_NUM_PCT_SIGNED:
        if (isfinite(v)) {
            snprintf(buf, len, kind == TL_NUM_PCT_WHOLE ? "%.0f%%" : "%+.1f%%", v);
            return buf;
        }
        break;
    case TL_NUM_COUNT:
    case TL_NUM_RATIO:
    case TL_NUM_PCT_AS_SET:
        if (isfinite(v)) {
            snprintf(buf, len, kind == TL_NUM_COUNT ? "%g" : kind == TL_NUM_RATIO ? "%gx" : "%g%%", v);
            return buf;
        }
        break;
    case TL_NUM_PCT_DOWN:
        return tl_units_pct_down(buf, len, v);
    case TL_NUM_PCT:
        break;
    }
    return tl_units_pct(buf, len, v);
}

char *tl_text_numbers(const char *s)
{
    if (s == NULL)
        return strdup("");
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (m == NULL)
        return NULL;
    for (const char *p = s; *p;) {
        size_t plain = strcspn(p, "\x1f\x1e");
        fwrite(p, 1, plain, m);
        p += plain;
        if (*p == '\0')
            break;
        tl_num_kind kind;
        double v;
        size_t n = tl_num_parse(p, &kind, &v);
        if (n > 0) {
            char buf[48];
            fputs(tl_text_number(buf, sizeof buf, kind, v), m);
            p += n;
        } else {
            /* a token cut short (a bounded buffer in analyze): dropped whole,
             * its marker, kind and hex digits, so no stray bytes reach a page */
            p++;
            if (*p && tl_num_kind_known((unsigned char)*p) && p[-1] == '\x1f')
                p++;
            for (int i = 0; i < 16 && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')); i++)
                p++;
        }
    }
    return fclose(m) == 0 ? out : (free(out), NULL);
}

void tl_text_numbers_put(FILE *f, const char *s, void (*put)(FILE *f, const char *text))
{
    char *t = tl_text_numbers(s);
    put(f, t ? t : "");
    free(t);
}
