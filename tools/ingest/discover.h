/*
 * discover.h - find the inputs: files, directories (walked recursively in
 * sorted order) and archives (.zip, .tar, .tar.gz/.tgz, .tar.zst, ... read
 * through libarchive as streams, never extracted to disk).
 *
 * Discovery is two steps so that --jobs can spread work across files:
 * tl_inputs_collect() lists the items (a file, `-` for stdin, a FIFO, or a
 * whole archive) in a deterministic order, and tl_item_each() opens one item
 * and hands every input in it (the file itself, or each archive member in
 * archive order) to a callback as a byte stream.
 *
 * The one idea: every item is opened exactly once and read front to back.
 * Whether it is an archive is decided from its first bytes (kept and handed
 * out again), not its name and not by opening it a second time, so FIFOs,
 * pipes, `<(...)` process substitution and `-` (stdin) read like files.
 * Items are deduplicated by (st_dev, st_ino) before anything is read: the
 * same file reached twice (`runs runs/rank0.json`, `runs ./runs`, a hard link)
 * is read once, with a note. Archives are treated as hostile: member count,
 * member size and total size are limited, member paths are only ever
 * displayed, members that are not regular files are reported, not read.
 */
#ifndef TALLY_DISCOVER_H
#define TALLY_DISCOVER_H

#include <stdint.h>
#include <stdio.h>

#include "trace_stream.h" /* tl_read_fn */

#include <sys/types.h>

/* What an item turned out to be once its first bytes were read. */
enum tl_item_kind { TL_ITEM_FILE = 1, TL_ITEM_ARCHIVE = 2 };

/* A file on disk by device and inode: what inputs are deduplicated by, and
 * what an output is compared against (an output may never be any input,
 * however the input was reached). */
typedef struct tl_file_id {
    dev_t dev;
    ino_t ino;
} tl_file_id;

/* The path that means standard input. */
#define TL_STDIN_PATH "-"
/* How stdin is named in messages and reports. */
#define TL_STDIN_NAME "(stdin)"
/* Bytes read from the front of an item to decide whether it is an archive
 * (tar's magic sits at 257; a gzip's head is inflated to look for it). */
#define TL_DISCOVER_HEAD 4096
/* At most this many compressed bytes are held to find a tar inside a gzip. */
#define TL_DISCOVER_GZIP_HEAD 65536

typedef struct tl_item {
    char *path;
    int from_walk; /* found by walking a directory, not named by the user */
    int is_stdin;  /* `-`: read standard input */
    /* The identity of what was found (stat, or fstat of stdin): inputs are
     * deduplicated by it, and outputs are checked against it. has_id is 0
     * when stat failed. */
    int has_id;
    tl_file_id id; /* the file (the archive, for its members) */
} tl_item;

/* A path that could not be read, and why (becomes an unreadable input's identity). */
typedef struct tl_item_error {
    char *path, *what;
} tl_item_error;
/* Append copies of path and what to the list *v of *n (room for *cap);
 * dropped when out of memory. */
void tl_item_errors_add(tl_item_error **v, size_t *n, size_t *cap, const char *path, const char *what);

typedef struct tl_item_list {
    tl_item *items;
    size_t n, cap;
    tl_item_error *errors; /* paths that could not be read, with the reason */
    size_t nerrors, errors_cap;
    char **notes; /* things worth saying that are not problems ("read once") */
    size_t nnotes, notes_cap;
    size_t duplicates; /* items dropped because an earlier one is the same file */
} tl_item_list;

typedef struct tl_limits {
    uint64_t max_members;       /* archive members considered (default 100000) */
    uint64_t max_input_bytes;   /* decompressed bytes of one input (default 64 GiB) */
    uint64_t max_archive_bytes; /* decompressed bytes of one archive (default 256 GiB) */
    int max_depth;              /* directory depth (default 64) */
} tl_limits;

void tl_limits_init(tl_limits *l);

void tl_item_list_init(tl_item_list *l);
void tl_item_list_release(tl_item_list *l);

/* List the items of the given paths ("-" is stdin), then drop every item
 * that is the same file (st_dev, st_ino) as an earlier one (list->duplicates,
 * with a note). Errors (a path that does not exist or cannot be read) are
 * recorded in list->errors; returns the number of items. Nothing is opened:
 * a FIFO named here is only opened (and waited on, like cat) when read. */
size_t tl_inputs_collect(tl_item_list *list, const char *const *paths, size_t npaths, const tl_limits *limits);

/* One input as a byte stream. name is what messages and reports show: the
 * file path, or "archive.zip:member/path". */
typedef struct tl_input {
    const char *name;
    const char *path;   /* the file on disk (the archive for a member) */
    const char *member; /* NULL, or the member path inside the archive */
    int from_walk;
    int64_t size; /* bytes as stored (compressed size unknown: -1) */
    tl_read_fn read;
    void *ctx;
    const tl_item *item; /* the item it came from (NULL outside discovery) */
} tl_input;

/* Called for each input of an item. Return 0 to go on, nonzero to stop. */
typedef int (*tl_input_fn)(const tl_input *in, void *user);

/* A problem with the item itself (an archive that cannot be opened, a
 * member over the limits, a member that is a symlink or a device):
 * reported through this callback, the walk goes on. */
typedef void (*tl_item_problem_fn)(const char *name, const char *what, void *user);

/* Open the item (once), decide from its first bytes whether it is an
 * archive, and call fn for each input in it. Returns 0, or -1 when the item
 * could not be opened at all (problem was called). */
int tl_item_each(const tl_item *item, const tl_limits *limits, tl_input_fn fn, tl_item_problem_fn problem, void *user);

/* Sniff the first bytes of a file: is it an archive libarchive should read? */
int tl_bytes_look_like_archive(const unsigned char *buf, size_t len);

#endif
