/*
 * term.h - what the `tally` command prints on a terminal or into a log is
 * text: control characters that came from an input (an ESC in a kernel name,
 * a CR in a file name) are shown escaped, the way `ls -b` and `less` show
 * them, so a trace cannot set the window title, clear the screen or
 * overwrite a warning line.
 *
 * The command's standard output and standard error are replaced at start by
 * streams that escape as they write (tl_term_wrap). tally's own text has no
 * control characters but the newline, which passes; the one other exception
 * is a CR at the very start of one write on standard error: the progress
 * line redrawing itself. Documents written to standard output (`-o -`, the
 * JSON of `inspect --json`) go through common/output.h's own descriptor and
 * are never altered.
 */
#ifndef TALLY_TERM_H
#define TALLY_TERM_H

#include <stddef.h>
#include <stdio.h>

/* Colour on standard error (git's, cargo's and ripgrep's convention): an
 * error line red, a warning line yellow, everything else (notes, progress,
 * usage hints, "wrote FILE") plain. A line's class is read from its start
 * ("tally: warning:" is a warning, "tally...: " any other message an error)
 * unless tl_term_mark named it first. The colour codes are the stream's
 * own: an ESC from an input is still shown escaped inside a coloured line. */
enum tl_term_color_mode { TL_COLOR_AUTO, TL_COLOR_ALWAYS, TL_COLOR_NEVER };
enum tl_term_class { TL_TERM_PLAIN, TL_TERM_ERROR, TL_TERM_WARNING };

/* Whether to colour: always and never as they say; auto only on a terminal
 * (is_tty), with NO_COLOR unset or empty (no-color.org) and TERM not
 * "dumb". no_color and term are the environment's values (NULL: unset). */
int tl_term_color_wanted(enum tl_term_color_mode mode, const char *no_color, const char *term, int is_tty);

/* "auto", "always" or "never" into *mode. 0, or -1 for another word. */
int tl_term_color_parse(const char *s, enum tl_term_color_mode *mode);

/* Colour the lines of f, a stream of tl_term_wrap, from now on (on) or not.
 * Nothing for another stream. */
void tl_term_set_color(FILE *f, int on);

/* The next line written to f (a stream of tl_term_wrap) is of class cls,
 * whatever it starts with (a per-input problem "tally: FILE: TEXT" is a
 * warning). */
void tl_term_mark(FILE *f, enum tl_term_class cls);

/* A stream that writes to fd, escaping control characters. progress_cr: let
 * a CR through when it starts a write (standard error's progress line).
 * Returns NULL when out of memory. */
FILE *tl_term_wrap(int fd, int progress_cr);

/* "s" after a count that is not 1: "1 session of 1 rank", "2 sessions". */
static inline const char *tl_plural_s(size_t n)
{
    return n == 1 ? "" : "s";
}

/* Escape s into buf, newlines included (always terminated; cut with "..."
 * when it does not fit). Returns buf. For one field of a table or a line,
 * where a newline from an input could forge a line of its own. */
char *tl_term_escape(char *buf, size_t len, const char *s);

#endif
