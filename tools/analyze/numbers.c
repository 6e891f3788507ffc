/*
 * numbers.c - typed numbers inside the analysis's sentences (see numbers.h):
 * written here, read back by render. The value travels as its bits, so the
 * text render writes is the formatter's of the exact double analyze had.
 */
#include "numbers.h"

#include <stdint.h>
#include <string.h>

#define OPEN '\x1f'
#define CLOSE '\x1e'

const char *tl_num_token(char *buf, tl_num_kind kind, double v)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    buf[0] = OPEN;
    buf[1] = (char)kind;
    for (int i = 0; i < 16; i++)
        buf[2 + i] = hex[(bits >> (60 - 4 * i)) & 0xf];
    buf[18] = CLOSE;
    buf[19] = '\0';
    return buf;
}

int tl_num_kind_known(int c)
{
    return c == TL_NUM_DUR || c == TL_NUM_BYTES || c == TL_NUM_PCT || c == TL_NUM_PCT_WHOLE || c == TL_NUM_PCT_SIGNED ||
           c == TL_NUM_DUR_ROUND || c == TL_NUM_BYTES_ROUND || c == TL_NUM_COUNT || c == TL_NUM_RATIO ||
           c == TL_NUM_PCT_AS_SET || c == TL_NUM_PCT_DOWN;
}

size_t tl_num_parse(const char *s, tl_num_kind *kind, double *v)
{
    if (s[0] != OPEN || !tl_num_kind_known((unsigned char)s[1]))
        return 0;
    uint64_t bits = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[2 + i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        bits = bits << 4 | (uint64_t)d;
    }
    if (s[18] != CLOSE)
        return 0;
    *kind = (tl_num_kind)(unsigned char)s[1];
    memcpy(v, &bits, sizeof *v);
    return TL_NUM_TOKEN_LEN;
}
