/*
 * text_table.h - human units for console tables: durations ("12.456 s",
 * "3.2 ms"), bytes ("1.5 GiB") and counts.
 */
#ifndef TALLY_TEXT_TABLE_H
#define TALLY_TEXT_TABLE_H

#include <stddef.h>

/* Write a duration given in ns into buf (about 10 characters); returns buf. */
const char *tl_fmt_duration(char *buf, size_t len, double ns);
/* Write a size given in bytes into buf; returns buf. NaN prints "-". */
const char *tl_fmt_bytes(char *buf, size_t len, double bytes);
/* Cut s to at most width display columns with a trailing "..." into buf. */
const char *tl_fmt_cut(char *buf, size_t len, const char *s, size_t width);

#endif
