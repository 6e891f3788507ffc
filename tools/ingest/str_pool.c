/*
 * str_pool.c - reference-counted shared strings (see str_pool.h).
 *
 * An open-addressing table of entries, each a header (references, hash)
 * followed by the string; the caller holds a pointer to the string, and the
 * header sits just before it. One mutex: a session takes a few hundred to a
 * few thousand names once, when it is finished, which costs far less than
 * analysing it.
 */
#include "str_pool.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    uint64_t refs;
    uint64_t hash;
    char s[];
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry **slots; /* NULL: empty; TOMB: removed */
static size_t nslots, nused, nlive;
static entry tomb_entry;
#define TOMB (&tomb_entry)

/* 8 bytes a step (a multiply and a rotate each), the tail zero-padded:
 * kernel names run to hundreds of bytes, and FNV-1a's byte at a time (a
 * dependent multiply per byte) was a tenth of tally-mpi's process 0 taking
 * the sessions of 256 ranks. The hash only places entries in this table. */
static uint64_t hash_of(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h = (h << 29) | (h >> 35);
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, s + i, len - i);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* Room for one more (live and removed entries below 3/4 of the slots). */
static int grow(void)
{
    if ((nused + 1) * 4 < nslots * 3)
        return 0;
    size_t n = nslots ? nslots : 256;
    while (nlive * 2 + 2 > n)
        n *= 2;
    entry **v = calloc(n, sizeof *v);
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < nslots; i++)
        if (slots[i] != NULL && slots[i] != TOMB) {
            size_t k = (size_t)slots[i]->hash & (n - 1);
            while (v[k] != NULL)
                k = (k + 1) & (n - 1);
            v[k] = slots[i];
        }
    free(slots);
    slots = v;
    nslots = n;
    nused = nlive;
    return 0;
}

char *tl_str_pool_take(const char *s)
{
    size_t len = strlen(s);
    uint64_t h = hash_of(s, len);
    char *out = NULL;
    pthread_mutex_lock(&mu);
    if (grow() == 0) {
        size_t k = (size_t)h & (nslots - 1), free_slot = SIZE_MAX;
        for (; slots[k] != NULL; k = (k + 1) & (nslots - 1)) {
            entry *e = slots[k];
            if (e == TOMB) {
                if (free_slot == SIZE_MAX)
                    free_slot = k;
            } else if (e->hash == h && strcmp(e->s, s) == 0) {
                e->refs++;
                out = e->s;
                break;
            }
        }
        if (out == NULL) {
            entry *e = malloc(sizeof *e + len + 1);
            if (e != NULL) {
                e->refs = 1;
                e->hash = h;
                memcpy(e->s, s, len + 1);
                if (free_slot == SIZE_MAX) {
                    free_slot = k;
                    nused++;
                }
                slots[free_slot] = e;
                nlive++;
                out = e->s;
            }
        }
    }
    pthread_mutex_unlock(&mu);
    return out;
}

/* The slot of the entry whose string is s itself (by address), or SIZE_MAX. */
static size_t slot_of(const char *s)
{
    if (nslots == 0)
        return SIZE_MAX;
    uint64_t h = hash_of(s, strlen(s));
    for (size_t k = (size_t)h & (nslots - 1); slots[k] != NULL; k = (k + 1) & (nslots - 1))
        if (slots[k] != TOMB && slots[k]->s == s)
            return k;
    return SIZE_MAX;
}

void tl_str_pool_free(char *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&mu);
    size_t k = slot_of(s);
    if (k != SIZE_MAX && --slots[k]->refs == 0) {
        free(slots[k]);
        slots[k] = TOMB;
        if (--nlive == 0) { /* the last session went: let go of the table too */
            free(slots);
            slots = NULL;
            nslots = nused = 0;
        }
    }
    pthread_mutex_unlock(&mu);
    if (k == SIZE_MAX)
        free(s);
}

void tl_str_pool_swap(char **s)
{
    if (*s == NULL)
        return;
    char *q = tl_str_pool_take(*s);
    if (q == NULL)
        return;
    if (q == *s) { /* it was pooled: take added a reference it does not need */
        tl_str_pool_free(q);
        return;
    }
    free(*s);
    *s = q;
}

unsigned long tl_str_pool_count(void)
{
    pthread_mutex_lock(&mu);
    unsigned long n = (unsigned long)nlive;
    pthread_mutex_unlock(&mu);
    return n;
}
