/*
 * intern.c - the global table of names.
 *
 * Names are copied once and get a small integer id that indexes the
 * per-thread statistics tables. Lookups by string take a mutex, but the hot
 * path rarely gets here: each thread caches pointer -> id (thread.c). The id
 * -> string array is paged so it never moves: a thread may read tl_name(id)
 * while another thread adds names.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_BITS 10
#define PAGE_SIZE (1u << PAGE_BITS)
#define NPAGES (TL_MAX_NAMES / PAGE_SIZE)

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static const char **pages[NPAGES];
static atomic_uint nnames = 1; /* id 0 is reserved for overflow */
static uint32_t *hash_slots;   /* open addressing: id or 0 */
static uint32_t hash_cap;
static uint64_t overflowed;
static const char overflow_name[] = "(other names)";

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

const char *tl_name(uint32_t id)
{
    if (id == TL_NAME_OVERFLOW || id >= atomic_load(&nnames))
        return overflow_name;
    return pages[id >> PAGE_BITS][id & (PAGE_SIZE - 1)];
}

uint32_t tl_name_count(void)
{
    return atomic_load(&nnames);
}
uint64_t tl_intern_overflowed(void)
{
    pthread_mutex_lock(&intern_lock); /* written by tl_intern on any thread */
    uint64_t n = overflowed;
    pthread_mutex_unlock(&intern_lock);
    return n;
}

uint32_t tl_intern_find(const char *name)
{
    uint32_t id = UINT32_MAX;
    size_t len = strnlen(name, TL_MAX_NAME_LEN);
    uint64_t h = hash_str(name, len);
    pthread_mutex_lock(&intern_lock);
    for (uint32_t i = hash_cap ? (uint32_t)h & (hash_cap - 1) : 0; hash_cap && hash_slots[i];
         i = (i + 1) & (hash_cap - 1)) {
        const char *s = tl_name(hash_slots[i]);
        if (strncmp(s, name, len) == 0 && s[len] == '\0') {
            id = hash_slots[i];
            break;
        }
    }
    pthread_mutex_unlock(&intern_lock);
    return id;
}

static int grow_hash(void)
{
    uint32_t cap = hash_cap ? hash_cap * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    uint32_t n = atomic_load(&nnames);
    for (uint32_t id = 1; id < n; id++) {
        const char *s = tl_name(id);
        uint64_t h = hash_str(s, strlen(s));
        uint32_t i = (uint32_t)h & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = id;
    }
    free(hash_slots);
    hash_slots = slots;
    hash_cap = cap;
    return 0;
}

uint32_t tl_intern(const char *name)
{
    uint32_t id = TL_NAME_OVERFLOW;
    if (name == NULL)
        name = "(null)";
    size_t len = strnlen(name, TL_MAX_NAME_LEN);
    uint64_t h = hash_str(name, len);
    pthread_mutex_lock(&intern_lock);
    if (hash_cap == 0 || atomic_load(&nnames) * 2 >= hash_cap) {
        if (grow_hash() != 0)
            goto out;
    }
    uint32_t i = (uint32_t)h & (hash_cap - 1);
    while (hash_slots[i]) {
        const char *s = tl_name(hash_slots[i]);
        if (strncmp(s, name, len) == 0 && s[len] == '\0') {
            id = hash_slots[i];
            goto out;
        }
        i = (i + 1) & (hash_cap - 1);
    }
    uint32_t n = atomic_load(&nnames);
    if (n >= TL_MAX_NAMES) {
        overflowed++;
        goto out;
    }
    if (pages[n >> PAGE_BITS] == NULL) {
        pages[n >> PAGE_BITS] = calloc(PAGE_SIZE, sizeof(char *));
        if (pages[n >> PAGE_BITS] == NULL)
            goto out;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        goto out;
    memcpy(copy, name, len);
    copy[len] = '\0';
    pages[n >> PAGE_BITS][n & (PAGE_SIZE - 1)] = copy;
    hash_slots[i] = n;
    atomic_store(&nnames, n + 1); /* publish after the page entry is set */
    id = n;
out:
    pthread_mutex_unlock(&intern_lock);
    return id;
}

void tl_intern_atfork_prepare(void)
{
    pthread_mutex_lock(&intern_lock);
}
void tl_intern_atfork_parent(void)
{
    pthread_mutex_unlock(&intern_lock);
}
void tl_intern_atfork_child(void)
{
    pthread_mutex_unlock(&intern_lock);
}
