/*
 * term.c - escaping streams for terminals and logs (see term.h).
 *
 * ESC is shown as \e, the C escapes (\a \b \t \v \f \r) as themselves, other
 * C0 bytes and DEL as \xNN, and the C1 controls U+0080..U+009F (which some
 * terminals obey, CSI = U+009B among them) as \u00NN. Every other byte,
 * UTF-8 or not, passes: it has no control meaning.
 */
#define _GNU_SOURCE
#include "term.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct term_cookie {
    int fd;
    int progress_cr;
    int pending_c2; /* the last write ended inside a sequence that may be a control (pending_bytes) */
    int color;      /* colour lines by class (tl_term_set_color) */
    int mid_line;   /* the last write did not end a line */
    int in_color;   /* a colour was started on this line: reset before its newline */
    int mark;       /* the class of the next line (tl_term_mark), or -1 */
} term_cookie;

/* The wrapped streams and their cookies, to find a cookie from its FILE. */
#define TERM_MAX_STREAMS 4
static struct {
    FILE *f;
    term_cookie *t;
} streams[TERM_MAX_STREAMS];

static term_cookie *cookie_of(FILE *f)
{
    for (int i = 0; i < TERM_MAX_STREAMS; i++)
        if (streams[i].f == f && f != NULL)
            return streams[i].t;
    return NULL;
}

#define SGR_RED "\033[31m"
#define SGR_YELLOW "\033[33m"
#define SGR_RESET "\033[0m"

/* The escaped form of byte c (or of U+0080+c-0x80 when c1), in out; its length. */
static size_t escape_one(unsigned char c, int c1, char out[8])
{
    static const char hex[] = "0123456789abcdef";
    if (c1) {
        memcpy(out, "\\u00", 4);
        out[4] = hex[c >> 4];
        out[5] = hex[c & 15];
        return 6;
    }
    const char *named = NULL;
    switch (c) {
    case 0x1b:
        named = "\\e";
        break;
    case '\a':
        named = "\\a";
        break;
    case '\b':
        named = "\\b";
        break;
    case '\t':
        named = "\\t";
        break;
    case '\v':
        named = "\\v";
        break;
    case '\f':
        named = "\\f";
        break;
    case '\r':
        named = "\\r";
        break;
    default:
        break;
    }
    if (named) {
        memcpy(out, named, 2);
        return 2;
    }
    out[0] = '\\';
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    return 4;
}

static int needs_escape(unsigned char c)
{
    return (c < 0x20 && c != '\n') || c == 0x7f;
}

/* The UTF-8 lead bytes held back until the next byte says whether they start
 * a control: 0xC2 (a C1 control, U+0080-U+009F), 0xD8 (U+061C, the Arabic
 * letter mark), 0xE2 and then 0xE2 0x80 or 0xE2 0x81 (the bidi controls
 * U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: "Trojan Source" reorders a
 * line with them). *pending holds them (0xC2, 0xD8, 0xE2, 0xE280, 0xE281);
 * pending_bytes writes them back out when they were text after all. */
static size_t pending_bytes(int pending, char *out)
{
    if (pending > 0xff) {
        out[0] = (char)(pending >> 8);
        out[1] = (char)(pending & 0xff);
        return 2;
    }
    if (pending) {
        out[0] = (char)pending;
        return 1;
    }
    return 0;
}

/* The code point a held sequence and its next byte c make when they are a
 * bidi control, else 0. */
static unsigned bidi_control(int pending, unsigned char c)
{
    if (pending == 0xD8 && c == 0x9c)
        return 0x061c;
    if (pending == 0xE280 && (c == 0x8e || c == 0x8f || (c >= 0xaa && c <= 0xae)))
        return 0x2000u + (c - 0x80u);
    if (pending == 0xE281 && c >= 0xa6 && c <= 0xa9)
        return 0x2040u + (c - 0x80u);
    return 0;
}

/* Escape s[0..n) into out (room for 6 bytes per input byte). */
static size_t escape_block(const unsigned char *s, size_t n, char *out, int *pending_c2, int allow_first_cr)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (*pending_c2) {
            int pend = *pending_c2;
            *pending_c2 = 0;
            if (pend == 0xC2 && c >= 0x80 && c <= 0x9f) {
                o += escape_one(c, 1, out + o);
                continue;
            }
            if (pend == 0xE2 && (c == 0x80 || c == 0x81)) {
                *pending_c2 = 0xE200 | c;
                continue;
            }
            unsigned cp = bidi_control(pend, c);
            if (cp) {
                memcpy(out + o, "\\u", 2);
                out[o + 2] = hex[(cp >> 12) & 15];
                out[o + 3] = hex[(cp >> 8) & 15];
                out[o + 4] = hex[(cp >> 4) & 15];
                out[o + 5] = hex[cp & 15];
                o += 6;
                continue;
            }
            o += pending_bytes(pend, out + o);
        }
        if (c == 0xc2 || c == 0xd8 || c == 0xe2) {
            *pending_c2 = c;
            continue;
        }
        if (needs_escape(c) && !(c == '\r' && i == 0 && allow_first_cr)) {
            o += escape_one(c, 0, out + o);
            continue;
        }
        out[o++] = (char)c;
    }
    return o;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The class of a line from its first bytes (one write starts a line: tally
 * prints each message with one fprintf, unbuffered on standard error). */
static int line_class(const char *s, size_t n)
{
#define STARTS(p) (n >= sizeof(p) - 1 && memcmp(s, p, sizeof(p) - 1) == 0)
    if (n == 0 || s[0] == '\r')
        return TL_TERM_PLAIN; /* the progress line */
    if (STARTS("tally: warning:") || STARTS("tally-mpi: warning:") || STARTS("tally: ignoring "))
        return TL_TERM_WARNING;
    if (STARTS("tally: note:") || STARTS("tally: reading with") || STARTS("tally: wrote ") ||
        STARTS("tally: no output asked for") || STARTS("tally validate: ") || STARTS("tally-mpi: ranks assigned"))
        return TL_TERM_PLAIN;
    if (STARTS("tally"))
        return TL_TERM_ERROR;
    return TL_TERM_PLAIN;
#undef STARTS
}

/* Escape and write buf[0..size) with no line colouring. */
static int write_escaped(term_cookie *t, const char *buf, size_t size, int first_cr)
{
    char out[6 * 1024 + 8];
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done > 1024 ? 1024 : size - done;
        size_t o = escape_block((const unsigned char *)buf + done, chunk, out, &t->pending_c2, first_cr && done == 0);
        if (write_all(t->fd, out, o) != 0)
            return -1;
        done += chunk;
    }
    return 0;
}

/* The coloured path: each line started in this write gets its class's colour,
 * reset before its newline. */
static ssize_t term_write_color(term_cookie *t, const char *buf, size_t size)
{
    size_t done = 0;
    while (done < size) {
        if (!t->mid_line) {
            int cls = t->mark >= 0 ? t->mark : line_class(buf + done, size - done);
            t->mark = -1;
            const char *sgr = cls == TL_TERM_ERROR ? SGR_RED : cls == TL_TERM_WARNING ? SGR_YELLOW : NULL;
            if (sgr != NULL && write_all(t->fd, sgr, strlen(sgr)) != 0)
                return -1;
            t->in_color = sgr != NULL;
        }
        const char *nl = memchr(buf + done, '\n', size - done);
        size_t seg = nl != NULL ? (size_t)(nl - (buf + done)) : size - done;
        if (write_escaped(t, buf + done, seg, t->progress_cr && done == 0) != 0)
            return -1;
        done += seg;
        if (nl == NULL) {
            t->mid_line = 1;
            break;
        }
        if (t->pending_c2) { /* a lead byte alone before the newline: not a control */
            char c[2];
            size_t k = pending_bytes(t->pending_c2, c);
            t->pending_c2 = 0;
            if (write_all(t->fd, c, k) != 0)
                return -1;
        }
        if (t->in_color && write_all(t->fd, SGR_RESET, strlen(SGR_RESET)) != 0)
            return -1;
        if (write_all(t->fd, "\n", 1) != 0)
            return -1;
        t->in_color = 0;
        t->mid_line = 0;
        done++;
    }
    return (ssize_t)size;
}

static ssize_t term_write(void *ctx, const char *buf, size_t size)
{
    term_cookie *t = ctx;
    if (t->color)
        return term_write_color(t, buf, size);
    if (size > 0) { /* kept up to date so that colour may be turned on mid-run */
        t->mid_line = buf[size - 1] != '\n';
        t->mark = -1;
    }
    char out[6 * 1024 + 8];
    size_t done = 0;
    while (done < size) {
        size_t chunk = size - done > 1024 ? 1024 : size - done;
        size_t o =
            escape_block((const unsigned char *)buf + done, chunk, out, &t->pending_c2, t->progress_cr && done == 0);
        /* A 0xC2 at the very end of the whole write stays pending only
         * until the next write; one that ends a chunk is resolved by the next chunk. */
        if (write_all(t->fd, out, o) != 0)
            return -1;
        done += chunk;
    }
    return (ssize_t)size;
}

static int term_close(void *ctx)
{
    term_cookie *t = ctx;
    int rc = 0;
    for (int i = 0; i < TERM_MAX_STREAMS; i++)
        if (streams[i].t == t)
            streams[i].f = NULL, streams[i].t = NULL;
    if (t->in_color)
        rc = write_all(t->fd, SGR_RESET, strlen(SGR_RESET));
    if (t->pending_c2) {
        char c[2];
        rc = write_all(t->fd, c, pending_bytes(t->pending_c2, c));
    }
    free(t);
    return rc;
}

FILE *tl_term_wrap(int fd, int progress_cr)
{
    term_cookie *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->fd = fd;
    t->progress_cr = progress_cr;
    t->mark = -1;
    cookie_io_functions_t io = { NULL, term_write, NULL, term_close };
    FILE *f = fopencookie(t, "w", io);
    if (f == NULL) {
        free(t);
        return NULL;
    }
    if (progress_cr)
        setvbuf(f, NULL, _IONBF, 0);
    else if (isatty(fd))
        setvbuf(f, NULL, _IOLBF, 0);
    for (int i = 0; i < TERM_MAX_STREAMS; i++)
        if (streams[i].f == NULL) {
            streams[i].f = f;
            streams[i].t = t;
            break;
        }
    return f;
}

int tl_term_color_wanted(enum tl_term_color_mode mode, const char *no_color, const char *term, int is_tty)
{
    if (mode != TL_COLOR_AUTO)
        return mode == TL_COLOR_ALWAYS;
    if (no_color != NULL && no_color[0] != '\0')
        return 0;
    if (term != NULL && strcmp(term, "dumb") == 0)
        return 0;
    return is_tty != 0;
}

int tl_term_color_parse(const char *s, enum tl_term_color_mode *mode)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "always") == 0)
        *mode = TL_COLOR_ALWAYS;
    else if (strcmp(s, "auto") == 0)
        *mode = TL_COLOR_AUTO;
    else if (strcmp(s, "never") == 0)
        *mode = TL_COLOR_NEVER;
    else
        return -1;
    return 0;
}

void tl_term_set_color(FILE *f, int on)
{
    term_cookie *t = cookie_of(f);
    if (t != NULL)
        t->color = on != 0;
}

void tl_term_mark(FILE *f, enum tl_term_class cls)
{
    term_cookie *t = cookie_of(f);
    if (t != NULL && t->color)
        t->mark = (int)cls;
}

char *tl_term_escape(char *buf, size_t len, const char *s)
{
    size_t o = 0;
    int pending = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && len > 0; p++) {
        char one[8];
        /* a newline inside one field is escaped too: it could forge a line */
        size_t n = *p == '\n' ? (memcpy(one, "\\n", 2), 2) : escape_block(p, 1, one, &pending, 0);
        if (o + n + 4 > len) {
            snprintf(buf + (o < len ? o : len - 1), len - (o < len ? o : len - 1), "...");
            return buf;
        }
        memcpy(buf + o, one, n);
        o += n;
    }
    if (pending && o + 2 < len)
        o += pending_bytes(pending, buf + o);
    if (len > 0)
        buf[o < len ? o : len - 1] = '\0';
    return buf;
}
