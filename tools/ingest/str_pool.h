/*
 * str_pool.h - one shared copy of each name string for every session of the
 * process.
 *
 * Every rank of a job runs the same program, so its sessions name the same
 * operators, kernels and shapes: as each session's own copies, those strings
 * were about 33 KB of every extra rank of a real H200 trace (issue 33). A
 * finished session (tl_session_compact) swaps its names for pooled copies,
 * counted by reference: a string is freed when the last session holding it is
 * released (tl_str_pool_free, which frees a string that is not pooled as
 * free() would). Thread-safe (sessions are finished on --jobs threads).
 */
#ifndef TALLY_STR_POOL_H
#define TALLY_STR_POOL_H

/* The pooled copy of s (one more reference to it), or NULL when out of
 * memory. Pooled strings are never written. */
char *tl_str_pool_take(const char *s);
/* Let go of s: one reference dropped when it is pooled, else free(s) (NULL:
 * nothing). A session may hold both kinds (one made in a test, names lent by
 * a companion before it was compacted), so its release asks the pool. */
void tl_str_pool_free(char *s);
/* Make *s pooled: its pooled copy replaces it (the old one freed); unchanged
 * when it already is, or when out of memory (then it stays the caller's). */
void tl_str_pool_swap(char **s);
/* Distinct strings held now (tests). */
unsigned long tl_str_pool_count(void);

#endif
