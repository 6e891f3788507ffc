/*
 * strtab.h - the string table: each distinct string stored once, named by a
 * dense uint32_t id (0, 1, 2, ... in the order first seen). A profile keeps
 * its names, categories and other texts here (profile.h), so an event costs an
 * id, not a copy, and names compare as integers.
 *
 * Cost: one hash of the string (8 bytes at a time) and a probe per intern or
 * find; the table doubles when half full. Not thread-safe: one table per
 * profile, one profile per thread.
 */
#ifndef TALLY_INGEST_STRTAB_H
#define TALLY_INGEST_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_strtab {
    char **strs;      /* id -> NUL-terminated copy */
    uint32_t *hashes; /* id -> hash of the string, checked before comparing bytes */
    uint32_t n, cap;
    uint32_t *slots; /* open addressing: id + 1, or 0 */
    uint32_t nslots;
} tl_strtab;

void tl_strtab_init(tl_strtab *t);
void tl_strtab_release(tl_strtab *t);
/* Id of the string s[0..len), added if new. UINT32_MAX when out of memory. */
uint32_t tl_strtab_intern(tl_strtab *t, const char *s, size_t len);
/* Id of s if present, else UINT32_MAX. */
uint32_t tl_strtab_find(const tl_strtab *t, const char *s, size_t len);
static inline const char *tl_strtab_get(const tl_strtab *t, uint32_t id)
{
    return id < t->n ? t->strs[id] : "";
}

#endif
