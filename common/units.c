/*
 * units.c - human units with fixed decimals (see units.h). The number of
 * decimals follows the magnitude so a column of values reads with about four
 * significant digits: 1.246 ms, 14.46 ms, 317.5 ms. It lives in common/ (in
 * libtally and the tally command) so the collector's exit summary and the
 * command print the same text.
 */
#define _POSIX_C_SOURCE 200809L
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#define DASH "\xe2\x80\x93" /* – */

static const char *fixed(char *buf, size_t len, double v, const char *unit)
{
    double a = fabs(v);
    int dec = a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0;
    snprintf(buf, len, "%.*f %s", dec, v, unit);
    return buf;
}

const char *tl_units_dur(char *buf, size_t len, double ns)
{
    double a = fabs(ns);
    if (!isfinite(ns))
        snprintf(buf, len, DASH);
    else if (a >= 999.95e6) /* what would round to "1000.0 ms" is "1.000 s" */
        fixed(buf, len, ns / 1e9, "s");
    else if (a >= 999.95e3)
        fixed(buf, len, ns / 1e6, "ms");
    else if (a >= 999.5)
        fixed(buf, len, ns / 1e3, "\xc2\xb5s");
    else
        snprintf(buf, len, "%.0f ns", ns);
    return buf;
}

const char *tl_units_bytes(char *buf, size_t len, double b)
{
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;
    if (!isfinite(b)) {
        snprintf(buf, len, DASH);
        return buf;
    }
    while (fabs(b) >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", b);
    else
        snprintf(buf, len, "%.1f %s", b, units[u]);
    return buf;
}

const char *tl_units_pct(char *buf, size_t len, double pct)
{
    if (!isfinite(pct))
        snprintf(buf, len, DASH);
    else
        snprintf(buf, len, "%.1f%%", pct);
    return buf;
}

const char *tl_units_pct_down(char *buf, size_t len, double pct)
{
    if (!isfinite(pct))
        snprintf(buf, len, DASH);
    else if (pct < 0.01)
        snprintf(buf, len, "under 0.01%%");
    else
        snprintf(buf, len, "%.2f%%", floor(100 * pct + 1e-9) / 100);
    return buf;
}

const char *tl_units_fmt(char *buf, size_t len, double v, int unit)
{
    switch (unit) {
    case TL_UNIT_NS:
        return tl_units_dur(buf, len, v);
    case TL_UNIT_BYTES:
        return tl_units_bytes(buf, len, v);
    case TL_UNIT_PCT:
        return tl_units_pct(buf, len, v);
    default:
        break;
    }
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (unit == TL_UNIT_RATIO)
        snprintf(buf, len, "%.2fx", v);
    else
        tl_units_count(buf, len, v);
    return buf;
}

const char *tl_units_count(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else {
        double a = fabs(v);
        snprintf(buf, len, "%.*f", a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0, v);
    }
    return buf;
}

/* The unit a tick label uses: the one that suits the step. */
static double tick_scale(double step, int unit, const char **name)
{
    if (unit == TL_UNIT_NS) {
        static const double f[] = { 1e9, 1e6, 1e3, 1 };
        static const char *n[] = { "s", "ms", "\xc2\xb5s", "ns" };
        for (int i = 0; i < 4; i++)
            if (step >= f[i] / 2 || i == 3) {
                *name = n[i];
                return f[i];
            }
    }
    if (unit == TL_UNIT_BYTES) {
        static const char *n[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        double f = 1;
        int i = 0;
        while (i < 4 && step >= f * 1024 / 10) {
            f *= 1024;
            i++;
        }
        *name = n[i];
        return f;
    }
    *name = unit == TL_UNIT_PCT ? "%" : "";
    return 1;
}

const char *tl_units_tick(char *buf, size_t len, double v, double step, int unit)
{
    const char *name;
    double scale = tick_scale(step, unit, &name);
    double x = v / scale;
    if (fabs(x) < 1e-9)
        x = 0;
    snprintf(buf, len, "%.4g%s%s", x, unit == TL_UNIT_PCT || *name == '\0' ? "" : " ", name);
    return buf;
}

double tl_units_nice_step(double span, int n, int unit)
{
    if (!(span > 0) || !isfinite(span))
        return 1;
    double raw = span / (n > 0 ? n : 1);
    double base = 1, mult = 10;
    if (unit == TL_UNIT_BYTES)
        while (base * 1024 <= raw)
            base *= 1024;
    double p = base * pow(mult, floor(log10(raw / base)));
    static const double steps[] = { 1, 2, 5, 10 };
    for (int i = 0; i < 4; i++)
        if (p * steps[i] >= raw)
            return p * steps[i];
    return p * 10;
}

const char *tl_units_date(char *buf, size_t len, int64_t unix_s)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "%lld", (long long)unix_s);
    return buf;
}

int tl_units_is_wall(int64_t ns)
{
    return ns >= 946684800LL * 1000000000LL;
}

const char *tl_units_time(char *buf, size_t len, int64_t ns)
{
    if (ns == INT64_MIN) {
        snprintf(buf, len, DASH);
        return buf;
    }
    if (!tl_units_is_wall(ns)) {
        char d[32];
        snprintf(buf, len, "%s%s", ns >= 0 ? "+" : "", tl_units_dur(d, sizeof d, (double)ns));
        return buf;
    }
    time_t t = (time_t)(ns / 1000000000LL);
    struct tm tm;
    char day[32];
    if (gmtime_r(&t, &tm) == NULL || strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        day[0] = '\0';
    snprintf(buf, len, "%s.%03dZ", day, (int)(ns % 1000000000LL / 1000000));
    return buf;
}

int tl_units_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}
