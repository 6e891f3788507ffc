/*
 * test_term.c - tools/render/term.c: what reaches a terminal is text. The
 * escaping stream and tl_term_escape on the characters an attack uses (ESC
 * sequences that set the title or clear the screen, BEL, CR and BS that
 * overwrite a line, the C1 CSI U+009B) and on what must pass unchanged
 * (UTF-8 text, tally's own newlines, the progress line's leading CR).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "term.h"

/* Write text through a term stream over a pipe; what came out. */
static char *through(const char *text, int progress_cr, int separate_writes)
{
    static char out[4096];
    int p[2];
    assert_int_equal(pipe(p), 0);
    FILE *f = tl_term_wrap(p[1], progress_cr);
    assert_non_null(f);
    if (separate_writes) {
        /* one fprintf per line, as the command writes them */
        for (const char *s = text; *s;) {
            const char *nl = strchr(s, '\n');
            size_t n = nl ? (size_t)(nl - s + 1) : strlen(s);
            fprintf(f, "%.*s", (int)n, s);
            fflush(f);
            s += n;
        }
    } else {
        fputs(text, f);
    }
    assert_int_equal(fclose(f), 0);
    close(p[1]);
    ssize_t n = read(p[0], out, sizeof out - 1);
    close(p[0]);
    out[n > 0 ? n : 0] = '\0';
    return out;
}

static void test_stream_escapes_controls(void **state)
{
    (void)state;
    assert_string_equal(through("name \x1b]0;pwned\x07 end\n", 0, 0), "name \\e]0;pwned\\a end\n");
    assert_string_equal(through("\x1b[2J\x1b[H", 0, 0), "\\e[2J\\e[H");
    assert_string_equal(through("bad\rOK\bX\x7f\x01\n", 0, 0), "bad\\rOK\\bX\\x7f\\x01\n");
    /* C1 CSI as UTF-8 (C2 9B) is a control for some terminals; other C2 xx are text */
    assert_string_equal(through("a\xc2\x9b"
                                "31mb \xc2\xb5s\n",
                                0, 0),
                        "a\\u009b31mb \xc2\xb5s\n");
    /* bidi controls (Trojan Source: U+202E RLO, U+2066 LRI, U+200F RLM, U+061C ALM) are shown
     * escaped; other characters of the same lead bytes (U+2026, U+2014, U+0628) pass */
    assert_string_equal(through("k\xe2\x80\xae"
                                "lanigiro\xe2\x81\xa6x\xe2\x81\xa9 \xe2\x80\x8f\xd8\x9c\n",
                                0, 0),
                        "k\\u202elanigiro\\u2066x\\u2069 \\u200f\\u061c\n");
    assert_string_equal(through("a\xe2\x80\xa6 b\xe2\x80\x94 \xd8\xa8\xe2\n", 0, 0),
                        "a\xe2\x80\xa6 b\xe2\x80\x94 \xd8\xa8\xe2\n");
    /* split across writes, byte by byte */
    assert_string_equal(through("\xe2\n\xe2\x80\n", 0, 1), "\xe2\n\xe2\x80\n");
    char buf[64];
    assert_string_equal(tl_term_escape(buf, sizeof buf, "x\xe2\x80\xaey\xe2\x80"), "x\\u202ey\xe2\x80");
    /* UTF-8 and tabs-free text pass as they are */
    assert_string_equal(through("r\xc3\xa9sum\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x94\xa5\n", 0, 0),
                        "r\xc3\xa9sum\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x94\xa5\n");
}

static void test_progress_cr(void **state)
{
    (void)state;
    /* standard error: a CR that starts a write is the progress line's own */
    assert_string_equal(through("\rtally: read 1/2\n", 1, 1), "\rtally: read 1/2\n");
    /* one inside a write came from an input */
    assert_string_equal(through("tally: a\rOK\n", 1, 1), "tally: a\\rOK\n");
    /* without the progress exception, every CR is escaped */
    assert_string_equal(through("\rx\n", 0, 0), "\\rx\n");
}

static void test_escape_field(void **state)
{
    (void)state;
    char buf[64];
    /* in one field, a newline is escaped too: it could forge a line */
    assert_string_equal(tl_term_escape(buf, sizeof buf, "a\nb"), "a\\nb");
    assert_string_equal(tl_term_escape(buf, sizeof buf, "\x1b[31mred"), "\\e[31mred");
    assert_string_equal(tl_term_escape(buf, sizeof buf, "plain"), "plain");
    /* cut, with "...", never past the buffer */
    char small[12];
    tl_term_escape(small, sizeof small, "\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b");
    assert_true(strlen(small) < sizeof small);
    assert_non_null(strstr(small, "..."));
}

/* Lines written one fprintf at a time to a coloured stderr-like stream (mark:
 * the first line is marked a warning first); what came out. */
static char *through_color(const char *const *lines, size_t n, int mark_first)
{
    static char out[4096];
    int p[2];
    assert_int_equal(pipe(p), 0);
    FILE *f = tl_term_wrap(p[1], 1);
    assert_non_null(f);
    tl_term_set_color(f, 1);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 && mark_first)
            tl_term_mark(f, TL_TERM_WARNING);
        fputs(lines[i], f);
    }
    assert_int_equal(fclose(f), 0);
    close(p[1]);
    ssize_t r = read(p[0], out, sizeof out - 1);
    close(p[0]);
    out[r > 0 ? r : 0] = '\0';
    return out;
}

/* Errors red, warnings yellow, the rest plain; an input's ESC inside a
 * coloured line is still escaped; a message of two writes is one line. */
static void test_color_lines(void **state)
{
    (void)state;
    const char *warn[] = { "tally: warning: rank 3 is missing\n" };
    assert_string_equal(through_color(warn, 1, 0), "\033[33mtally: warning: rank 3 is missing\033[0m\n");
    const char *err[] = { "tally: x.json: cannot open \x1b[2J\n" };
    assert_string_equal(through_color(err, 1, 0), "\033[31mtally: x.json: cannot open \\e[2J\033[0m\n");
    const char *plain[] = { "tally: note: two runs\n", "\rtally: read 1/2 inputs", "\rtally: read 2/2 inputs\n",
                            "tally: wrote r.html\n", "see 'tally help report'\n" };
    assert_string_equal(through_color(plain, 5, 0), "tally: note: two runs\n\rtally: read 1/2 inputs\rtally: read 2/2 "
                                                    "inputs\ntally: wrote r.html\nsee 'tally help report'\n");
    const char *two[] = { "tally: 'reprot' is not a tally command", "; did you mean 'report'?",
                          "\nsee 'tally --help'\n" };
    assert_string_equal(through_color(two, 3, 0), "\033[31mtally: 'reprot' is not a tally command; did you mean "
                                                  "'report'?\033[0m\nsee 'tally --help'\n");
    /* an input's problem ("tally: FILE: TEXT") is marked a warning */
    const char *problem[] = { "tally: t.json: truncated\n", "tally: y: bad\n" };
    assert_string_equal(through_color(problem, 2, 1),
                        "\033[33mtally: t.json: truncated\033[0m\n\033[31mtally: y: bad\033[0m\n");
    /* colour off: no code at all */
    assert_string_equal(through("tally: warning: w\ntally: x: e\n", 1, 1), "tally: warning: w\ntally: x: e\n");
}

/* --color=WHEN and NO_COLOR (no-color.org), TERM=dumb. */
static void test_color_wanted(void **state)
{
    (void)state;
    assert_int_equal(tl_term_color_wanted(TL_COLOR_AUTO, NULL, "xterm", 1), 1);
    assert_int_equal(tl_term_color_wanted(TL_COLOR_AUTO, NULL, "xterm", 0), 0);
    assert_int_equal(tl_term_color_wanted(TL_COLOR_AUTO, "1", "xterm", 1), 0);
    assert_int_equal(tl_term_color_wanted(TL_COLOR_AUTO, "", "xterm", 1), 1); /* empty: unset */
    assert_int_equal(tl_term_color_wanted(TL_COLOR_AUTO, NULL, "dumb", 1), 0);
    assert_int_equal(tl_term_color_wanted(TL_COLOR_ALWAYS, "1", "dumb", 0), 1);
    assert_int_equal(tl_term_color_wanted(TL_COLOR_NEVER, NULL, "xterm", 1), 0);
    enum tl_term_color_mode m = TL_COLOR_AUTO;
    assert_int_equal(tl_term_color_parse("never", &m), 0);
    assert_int_equal(m, TL_COLOR_NEVER);
    assert_int_equal(tl_term_color_parse("always", &m), 0);
    assert_int_equal(m, TL_COLOR_ALWAYS);
    assert_int_equal(tl_term_color_parse("auto", &m), 0);
    assert_int_equal(m, TL_COLOR_AUTO);
    assert_int_equal(tl_term_color_parse("yes", &m), -1);
    assert_int_equal(tl_term_color_parse(NULL, &m), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_escapes_controls),
        cmocka_unit_test(test_color_lines),
        cmocka_unit_test(test_color_wanted),
        cmocka_unit_test(test_progress_cr),
        cmocka_unit_test(test_escape_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
