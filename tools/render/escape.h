/*
 * escape.h - every string that came from an input, made safe for the place it
 * lands: HTML text, HTML/SVG attribute values, Markdown (text and table
 * cells). The one idea: escaping is per context, never "once for all", and
 * the renderers never print an input string any other way.
 *
 * HTML text and attributes: & < > (and " ' in attributes) become entities,
 * which also covers SVG inlined in HTML (the HTML parser reads it). Control
 * characters other than tab and newline, and bytes that are not valid UTF-8,
 * become U+FFFD, so a NUL, an escape byte or a stray 0xff in a kernel name
 * cannot confuse a parser or a terminal, and the output is valid UTF-8. Markdown:
 * every character with a meaning in GitHub-flavoured Markdown (| \ ` * _ [ ]
 * < > # ~ & !) gets a backslash, and line breaks become spaces so a table
 * cell stays one cell.
 *
 * The _n variants cut the string to at most max bytes (on a UTF-8 character
 * boundary) and append "…" when they cut; max 0 means no limit. All functions
 * write to a FILE* and are thread-compatible (no shared state).
 */
#ifndef TALLY_RENDER_ESCAPE_H
#define TALLY_RENDER_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* HTML (and SVG) text content. NULL writes nothing. */
void tl_escape_html(FILE *f, const char *s);
void tl_escape_html_n(FILE *f, const char *s, size_t max);
/* An attribute value inside double or single quotes. */
void tl_escape_attr(FILE *f, const char *s);
void tl_escape_attr_n(FILE *f, const char *s, size_t max);
/* Markdown inline text or a table cell (GFM). */
void tl_escape_md(FILE *f, const char *s);
void tl_escape_md_n(FILE *f, const char *s, size_t max);

/* The length of the longest prefix of s of at most max bytes that ends on a
 * UTF-8 character boundary (max 0: strlen(s)). */
size_t tl_escape_cut(const char *s, size_t max);

#endif
