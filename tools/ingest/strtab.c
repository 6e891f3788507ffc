/*
 * strtab.c - the string table (see strtab.h): names interned once per profile,
 * found by an open-addressing hash table of ids.
 */
#include "strtab.h"

#include "array.h"

#include <stdlib.h>
#include <string.h>

/* Grow a typed array (array.h), from 64 entries. */
#define GROW(arr, n, cap) tl_array_grow(&(arr), (n), &(cap), sizeof *(arr), 64)

/* A string hash that takes 8 bytes at a time: kernel names run to a
 * thousand bytes, and every event's name is hashed. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

void tl_strtab_init(tl_strtab *t)
{
    memset(t, 0, sizeof *t);
}

void tl_strtab_release(tl_strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->hashes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static int strtab_rehash(tl_strtab *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 256;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        uint32_t i = t->hashes[id] & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

/* The id of s whose hash is h, or UINT32_MAX; *slot is where the probe stopped
 * (the free slot to insert at). Shared by find and intern so a string is
 * hashed once per intern, not once to look and again to insert. */
static uint32_t strtab_lookup(const tl_strtab *t, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
    uint32_t i = h & (t->nslots - 1);
    while (t->slots[i]) {
        uint32_t id = t->slots[i] - 1;
        const char *x = t->strs[id];
        if (t->hashes[id] == h && memcmp(x, s, len) == 0 && x[len] == '\0')
            return id;
        i = (i + 1) & (t->nslots - 1);
    }
    *slot = i;
    return UINT32_MAX;
}

uint32_t tl_strtab_find(const tl_strtab *t, const char *s, size_t len)
{
    uint32_t slot;
    if (t->nslots == 0)
        return UINT32_MAX;
    return strtab_lookup(t, s, len, (uint32_t)hash_bytes(s, len), &slot);
}

uint32_t tl_strtab_intern(tl_strtab *t, const char *s, size_t len)
{
    uint32_t h = (uint32_t)hash_bytes(s, len), slot = 0;
    uint32_t id = t->nslots ? strtab_lookup(t, s, len, h, &slot) : UINT32_MAX;
    if (id != UINT32_MAX)
        return id;
    if ((t->n + 1) * 2 > t->nslots) {
        if (strtab_rehash(t) != 0)
            return UINT32_MAX;
        /* the table moved: find the free slot again (s is not in it) */
        slot = h & (t->nslots - 1);
        while (t->slots[slot])
            slot = (slot + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) { /* strs and hashes grow together; cap stays uint32_t as the ids are */
        size_t scap = t->cap, hcap = t->cap;
        if (GROW(t->strs, t->n, scap) != 0 || GROW(t->hashes, t->n, hcap) != 0)
            return UINT32_MAX;
        t->cap = (uint32_t)scap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    id = t->n++;
    t->strs[id] = copy;
    t->hashes[id] = h;
    t->slots[slot] = id + 1;
    return id;
}
