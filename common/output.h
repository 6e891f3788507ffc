/*
 * output.h - the one output module of tally: every file the `tally` command
 * and libtally write goes through it.
 *
 * The one idea: an output path is written exactly as the user asked, and
 * nothing else is ever replaced.
 *   - "-" is standard output.
 *   - A character device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is
 *     written directly, never renamed over. A path that is the file standard
 *     output already writes to (`-o out.html > out.html`, /dev/stdout to a
 *     file) is written through standard output.
 *   - A regular file or a new path is written to a temporary file in the
 *     same directory and renamed over the path once every byte was written
 *     and synced, so an interrupted run leaves the old file and no half file.
 *     The temporary file is created without a name (O_TMPFILE, linked at
 *     commit time) where the file system allows, else with O_CREAT|O_EXCL|
 *     O_NOFOLLOW under a random name; either way nobody can plant a symlink
 *     where it will be. It gets the replaced file's mode (and owner, where
 *     that can be kept; else the file is rewritten in place, see below).
 *   - A symlink is resolved and its target written atomically; the link
 *     stays. (A symlink in a sticky world-writable directory that belongs
 *     to someone else is refused, as the kernel's protected_symlinks does.)
 *   - A directory, a block device, a path whose directory does not exist, a
 *     read-only file, and a file that is one of the inputs (compared by
 *     device and inode through the caller's is_input callback) are errors
 *     before anything is written.
 *   - A writable file in a directory where no temporary file can be created
 *     (read-only directory), or one whose owner cannot be kept, is staged in
 *     an unnamed temporary file and copied over the old contents at commit
 *     time: not atomic, but the old file survives every failure before the
 *     commit, and its owner, links and mode stay.
 *
 * Several outputs of one command are committed together with
 * tl_output_commit_all(): all are finished (flushed, checked, synced) first,
 * then renamed; when one rename fails, the ones already renamed are put back
 * from hard-linked backups, so a failure leaves all old outputs or all new.
 *
 * Nothing here prints: errors are written to o->err as "PATH: what went
 * wrong". The functions are thread-safe for distinct tl_output objects (the
 * library writes from the host program's threads).
 */
#ifndef TALLY_COMMON_OUTPUT_H
#define TALLY_COMMON_OUTPUT_H

#include <stdio.h>
#include <sys/types.h>

/* Room for a path of PATH_MAX bytes and the reason. */
#define TL_OUTPUT_ERR_LEN 4400

/* Open flags. */
#define TL_OUTPUT_GZIP 1u /* compress with gzip: write through tl_output_write only */
/* The path is a name the program chose for a file of its own (libtally's
 * {name}-rank{N}.{pid}-{time} stems): anything but a regular file there -- a
 * symbolic link, a FIFO, a device planted by someone who can write to the
 * directory -- is refused, never followed or written into. */
#define TL_OUTPUT_OWN_NAME 2u

enum tl_output_kind {
    TL_OUTPUT_STDOUT = 1, /* "-", or the file standard output already is */
    TL_OUTPUT_DIRECT,     /* a character device, FIFO or socket */
    TL_OUTPUT_ATOMIC,     /* temporary file in the target's directory, renamed */
    TL_OUTPUT_IN_PLACE,   /* staged apart, copied over the old contents */
};

/* Does (dev, ino) name one of the inputs? Return nonzero to refuse it. */
typedef int (*tl_output_is_input_fn)(dev_t dev, ino_t ino, void *user);

typedef struct tl_output {
    FILE *f;    /* write here (stdio), unless opened with TL_OUTPUT_GZIP */
    char *path; /* as given: what messages name */
    int kind;   /* enum tl_output_kind */
    int failed; /* an error happened; err says which */
    char err[TL_OUTPUT_ERR_LEN];
    /* private */
    char *target;  /* the file replaced (a symlink's target), for ATOMIC / IN_PLACE */
    char *base;    /* its name inside dirfd */
    char *tmpname; /* the named temporary file, NULL while unnamed */
    char *backup;  /* hard link to the old file during commit_all */
    int dirfd;
    int fd;      /* the descriptor under f */
    int unnamed; /* O_TMPFILE: linked into the directory at commit */
    int existed; /* the target existed (its old contents can be restored) */
    int finished;
    int placed;      /* renamed into place by commit_all (undone on a later failure) */
    void *gz;        /* gzFile */
    int write_errno; /* the first failed write's errno (ENOSPC), reported at finish */
} tl_output;

/* For tests: nonzero makes tl_output_open name its temporary files (the
 * fallback of file systems without O_TMPFILE), so that path is tested too. */
extern int tl_output_named_temps;

/* Open path for writing (see the file comment for what each kind of path
 * does). is_input may be NULL. Returns 0, or -1 with o->err set and nothing
 * created. o needs no initialization; on error there is nothing to release. */
int tl_output_open(tl_output *o, const char *path, unsigned flags, tl_output_is_input_fn is_input, void *user);

/* Write len bytes (through gzip when opened with TL_OUTPUT_GZIP). 0 or -1
 * (errno set). The signature fits tl_json's sink. */
int tl_output_write(void *o, const void *buf, size_t len);

/* Check a path without creating anything: the errors tl_output_open would
 * give for it apart from the input check (a directory, a missing directory,
 * a block device, a read-only file, a symlink that must not be followed).
 * For commands, to fail before minutes of reading. 0, or -1 with err set. */
int tl_output_check(const char *path, char *err, size_t errlen);

/* Flush, check every write (ferror), fsync; the data is then safely on disk
 * in the temporary file but not yet in place. Direct outputs are done here.
 * 0, or -1 with o->err set (the output is then aborted). */
int tl_output_finish(tl_output *o);

/* Finish and move one output into place, and release it. 0, or -1 with
 * o->err set (the old file is kept; nothing is left behind). */
int tl_output_commit(tl_output *o);

/* Finish every output, then move them into place together: when any fails,
 * none is moved (those already moved are put back) and every one is
 * released. Outputs that failed have o->failed set and o->err says why;
 * the others were not written because of them. 0, or -1. */
int tl_output_commit_all(tl_output *const *outs, size_t n);

/* Give up: remove the temporary file, release o. Safe on a released o. */
void tl_output_abort(tl_output *o);

#endif
