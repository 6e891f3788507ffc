/*
 * escape.c - context escaping for HTML, SVG and Markdown (see escape.h).
 * One loop over characters: valid UTF-8 sequences pass through as they are
 * (none of the characters that need escaping is outside ASCII); a byte that
 * does not start a valid sequence, and C1 control characters, become U+FFFD,
 * so the page is valid UTF-8 whatever bytes the input held.
 */
#include "escape.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

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

/* The length of the valid UTF-8 sequence at s (of at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80                 ? 1
                 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len > n)
        return 0;
    if (len <= 1)
        return len;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xf0 && s[1] < 0x90)) /* overlong */
        return 0;
    if ((c == 0xed && s[1] > 0x9f) || (c == 0xf4 && s[1] > 0x8f)) /* surrogates, beyond U+10FFFF */
        return 0;
    if (c == 0xc2 && s[1] < 0xa0) /* C1 controls */
        return 0;
    return len;
}

static int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;
}

static void put_html(FILE *f, unsigned char c, int attr)
{
    switch (c) {
    case '&':
        fputs("&amp;", f);
        break;
    case '<':
        fputs("&lt;", f);
        break;
    case '>':
        fputs("&gt;", f);
        break;
    case '"':
        attr ? fputs("&quot;", f) : fputc(c, f);
        break;
    case '\'':
        attr ? fputs("&#39;", f) : fputc(c, f);
        break;
    case '\n':
        attr ? fputs("&#10;", f) : fputc(c, f);
        break;
    default:
        is_control(c) ? fputs(replacement, f) : fputc(c, f);
        break;
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

/*
 * GitHub turns text that looks like a URL or an address into a live link
 * (its "autolink" extension: scheme://, www., user@host): a kernel or file
 * name must not become a link in a CI job summary. The one character that
 * makes it a link is written as an entity (`http&#58;//`, `www&#46;`,
 * `a&#64;b`), which renders as the same text but is not matched. Returns the
 * number of bytes of s it wrote (0: none, the caller writes s[0]).
 */
static size_t defuse_autolink(FILE *f, const unsigned char *s, size_t n, int word_start)
{
    if (s[0] == ':' && n >= 3 && s[1] == '/' && s[2] == '/') {
        fputs("&#58;", f);
        return 1;
    }
    if (s[0] == '@') {
        fputs("&#64;", f);
        return 1;
    }
    if (word_start && n >= 4 && strncasecmp((const char *)s, "www.", 4) == 0) {
        fwrite(s, 1, 3, f);
        fputs("&#46;", f);
        return 4;
    }
    return 0;
}

static void escape(FILE *f, const char *s, size_t max, int ctx)
{
    if (s == NULL)
        return;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = tl_escape_cut(s, max);
    for (size_t i = 0; i < n;) {
        size_t len = utf8_len(u + i, n - i);
        if (len == 0) {
            fputs(replacement, f);
            i++;
        } else if (len > 1) {
            fwrite(u + i, 1, len, f);
            i += len;
        } else {
            size_t used = ctx == CTX_MD ? defuse_autolink(f, u + i, n - i, i == 0 || !isalnum(u[i - 1])) : 0;
            if (used > 0)
                i += used;
            else if (ctx == CTX_MD)
                put_md(f, u[i++]);
            else
                put_html(f, u[i++], ctx == CTX_ATTR);
        }
    }
    if (s[n] != '\0')
        fputs("\xe2\x80\xa6", f); /* … */
}

void tl_escape_html(FILE *f, const char *s)
{
    escape(f, s, 0, CTX_TEXT);
}
void tl_escape_html_n(FILE *f, const char *s, size_t max)
{
    escape(f, s, max, CTX_TEXT);
}
void tl_escape_attr(FILE *f, const char *s)
{
    escape(f, s, 0, CTX_ATTR);
}
void tl_escape_attr_n(FILE *f, const char *s, size_t max)
{
    escape(f, s, max, CTX_ATTR);
}
void tl_escape_md(FILE *f, const char *s)
{
    escape(f, s, 0, CTX_MD);
}
void tl_escape_md_n(FILE *f, const char *s, size_t max)
{
    escape(f, s, max, CTX_MD);
}
