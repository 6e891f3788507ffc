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

/* A stream that writes to fd, escaping control characters. progress_cr: let
 * a CR through when it starts a write (standard error's progress line).
 * Returns NULL when out of memory. */
FILE *tl_term_wrap(int fd, int progress_cr);

/* "s" after a count that is not 1: "1 session of 1 rank", "2 sessions". */
static inline const char *tl_plural_s(size_t n) { return n == 1 ? "" : "s"; }

/* Escape s into buf, newlines included (always terminated; cut with "..."
 * when it does not fit). Returns buf. For one field of a table or a line,
 * where a newline from an input could forge a line of its own. */
char *tl_term_escape(char *buf, size_t len, const char *s);

#endif
