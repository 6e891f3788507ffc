/*
 * signals.c - writing the outputs when the program is stopped by SIGINT,
 * SIGTERM or SIGHUP (Ctrl-C, torchrun and Slurm time limits, preemption),
 * which skip the atexit handler.
 *
 * The one idea: a signal handler may do almost nothing (no malloc, no locks,
 * no stdio), so it only wakes a writer thread through a pipe (the self-pipe
 * trick) and waits on a second pipe, with a timeout, until the outputs are
 * written. Then it gives the signal back to the program as if libtally were
 * not there: the disposition the program had before tally_init() is
 * restored and the signal raised again (the exit status is the signal's), or
 * the program's own handler is called (chained). The writer and sampler
 * threads block every signal, so the handler never runs on a thread it waits
 * for. A second signal while the outputs are written is not waited for.
 *
 * A handler that interrupted a thread inside libtally (holding the registry
 * lock or its own buffer's flag) would wait for a writer that waits for it:
 * the timeout bounds that case, and the program then ends as it would have,
 * without the outputs.
 *
 * A signal that arrives while tally_shutdown() writes (the exit-time write of
 * a large trace takes seconds, and torchrun and Slurm send SIGTERM exactly
 * then) is held: the handler notes it and returns, the write goes on to its
 * end, and tally_shutdown() then restores the program's dispositions and
 * delivers the held signal (tl_signals_hold/tl_signals_release); a second
 * signal meanwhile is not held and ends the program at once. Waiting in
 * the handler instead could deadlock: it may run on the very thread that
 * writes. tl_signals_teardown() restores the dispositions and stops the
 * writer thread, so nothing of libtally is left to run on a signal after
 * tally_shutdown() (or dlclose(), which runs it).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int handled[] = { SIGINT, SIGTERM, SIGHUP };
#define NHANDLED (sizeof handled / sizeof handled[0])

static struct {
    int installed[NHANDLED];
    struct sigaction old[NHANDLED]; /* what the program had before tally_init */
    int wake[2], done[2];           /* handler -> writer, writer -> handler */
    pid_t writer_pid;               /* the process whose writer thread owns the pipes */
    pthread_t writer;               /* joined by tl_signals_teardown */
    atomic_int busy;                /* a handler is waiting for the writer */
    atomic_int holding;             /* tally_shutdown() writes: signals are held */
    atomic_int held;                /* the signal held meanwhile, or 0 */
    atomic_int writer_exits;        /* the writer leaves after its answer */
} sg = { .wake = { -1, -1 }, .done = { -1, -1 } };

static int slot_of(int sig)
{
    for (size_t i = 0; i < NHANDLED; i++)
        if (handled[i] == sig)
            return (int)i;
    return -1;
}

static int is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    for (;;) {
        unsigned char sig;
        ssize_t n = read(sg.wake[0], &sig, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1)
            return NULL;
        int i = slot_of(sig);
        /* The program ends after a default disposition: the final write
         * (with the summary); else its own handler decides, and recording
         * goes on: a flush. */
        atomic_store(&tl_g.signal_writing, 1);
        if (i >= 0 && is_default(&sg.old[i]))
            tally_shutdown();
        else
            tally_flush();
        atomic_store(&tl_g.signal_writing, 0);
        while (write(sg.done[1], &sig, 1) < 0 && errno == EINTR)
            ;
        /* tally_shutdown() ran here (teardown on this thread): the program
         * is about to end of the signal; the pipes stay for the handler. */
        if (atomic_load(&sg.writer_exits))
            return NULL;
    }
}

/* Start the writer thread with every signal blocked (it inherits the mask). */
static int start_writer(void)
{
    pthread_t th;
    sigset_t all, prev;
    if (pipe2(sg.wake, O_CLOEXEC) != 0)
        return -1;
    /* non-blocking: the handler drains stale answers and polls */
    if (pipe2(sg.done, O_CLOEXEC | O_NONBLOCK) != 0)
        goto fail_wake;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int rc = pthread_create(&th, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (rc != 0)
        goto fail_done;
    sg.writer = th;
    atomic_store(&sg.writer_exits, 0);
    sg.writer_pid = getpid();
    return 0;
fail_done:
    close(sg.done[0]);
    close(sg.done[1]);
fail_wake:
    close(sg.wake[0]);
    close(sg.wake[1]);
    sg.wake[0] = sg.wake[1] = sg.done[0] = sg.done[1] = -1;
    return -1;
}

/* Ask the writer for the outputs and wait for it, at most
 * TL_SIGNAL_WRITE_TIMEOUT_MS. Only async-signal-safe calls. */
static void write_outputs_from_handler(int sig)
{
    if (sg.wake[1] < 0 || getpid() != sg.writer_pid || atomic_load(&tl_g.state) != TL_RUNNING)
        return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&sg.busy, &expected, 1))
        return; /* a second signal: do not wait again */
    unsigned char b = (unsigned char)sig;
    unsigned char drain[16];
    /* An answer left over from a handler that gave up waiting. */
    while (read(sg.done[0], drain, sizeof drain) > 0)
        ;
    if (write(sg.wake[1], &b, 1) == 1) {
        struct pollfd pfd = { .fd = sg.done[0], .events = POLLIN };
        int left = TL_SIGNAL_WRITE_TIMEOUT_MS;
        uint64_t until = tl_clock_ns_monotonic() + (uint64_t)left * 1000000u;
        for (;;) {
            int r = poll(&pfd, 1, left);
            if (r > 0) {
                (void)!read(sg.done[0], &b, 1);
                break;
            }
            uint64_t now = tl_clock_ns_monotonic();
            if (r == 0 || now >= until)
                break;
            left = (int)((until - now) / 1000000u) + 1; /* EINTR: wait the rest */
        }
    }
    atomic_store(&sg.busy, 0);
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved_errno = errno;
    int i = slot_of(sig);
    if (i < 0)
        return;
    if (atomic_load(&sg.holding) > 0 && atomic_exchange(&sg.held, sig) == 0) {
        /* tally_shutdown() is writing: it delivers the signal when done
         * (see the file comment), unless it finished in between and did
         * not take it, which the exchange decides. A second signal while
         * one is held is not held: it ends the program now (a user's
         * second Ctrl-C), as it would without libtally. */
        if (atomic_load(&sg.holding) > 0 || atomic_exchange(&sg.held, 0) == 0) {
            errno = saved_errno;
            return;
        }
    }
    write_outputs_from_handler(sig);
    const struct sigaction *old = &sg.old[i];
    if (is_default(old)) {
        /* End as the program would have without libtally: the default
         * action, delivered as soon as the signal is unblocked. */
        sigset_t one;
        sigaction(sig, old, NULL);
        sigemptyset(&one);
        sigaddset(&one, sig);
        raise(sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    } else if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, info, ctx);
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
    errno = saved_errno;
}

static void install(void)
{
    for (size_t i = 0; i < NHANDLED; i++) {
        struct sigaction now, sa;
        if (sigaction(handled[i], NULL, &now) != 0)
            continue;
        /* A signal the program ignores (SIGHUP under nohup) stays ignored. */
        if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN)
            continue;
        sg.old[i] = now;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_mask = now.sa_mask;
        /* The program's restart behaviour is kept for its own handler. */
        sa.sa_flags = SA_SIGINFO | (is_default(&now) ? SA_RESTART : (now.sa_flags & SA_RESTART));
        if (sigaction(handled[i], &sa, NULL) == 0)
            sg.installed[i] = 1;
    }
}

int tl_signals_setup(void)
{
    if (start_writer() != 0)
        return -1;
    install();
    return 0;
}

void tl_signals_hold(void)
{
    atomic_fetch_add(&sg.holding, 1);
}

void tl_signals_release(void)
{
    atomic_fetch_sub(&sg.holding, 1);
    int sig = atomic_exchange(&sg.held, 0);
    /* The dispositions are the program's again (teardown): the signal ends
     * the program, or calls its handler, as if libtally were not there. */
    if (sig != 0)
        kill(getpid(), sig);
}

void tl_signals_teardown(void)
{
    for (size_t i = 0; i < NHANDLED; i++) {
        if (sg.installed[i] && sigaction(handled[i], &sg.old[i], NULL) == 0)
            sg.installed[i] = 0;
    }
    if (sg.wake[1] < 0 || getpid() != sg.writer_pid)
        return;
    if (pthread_equal(pthread_self(), sg.writer)) {
        /* called by the writer itself (the signal's final write) */
        atomic_store(&sg.writer_exits, 1);
        pthread_detach(sg.writer);
        return;
    }
    /* The writer sees the end of its pipe and returns. */
    close(sg.wake[1]);
    pthread_join(sg.writer, NULL);
    /* A handler that was still waiting for an answer (it had the answer
     * before the writer returned) leaves before its pipe is closed. */
    for (int spins = 0; atomic_load(&sg.busy) && spins < 1000; spins++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    close(sg.wake[0]);
    close(sg.done[0]);
    close(sg.done[1]);
    sg.wake[0] = sg.wake[1] = sg.done[0] = sg.done[1] = -1;
}

/* In a fork child the writer thread does not exist and the pipes are shared
 * with the parent (whose writer would answer): they are closed, and the
 * child has no writer. A signal then ends the child (or calls its handler)
 * as it would without libtally, without the child's outputs: a thread may not
 * be created in the child of a multi-threaded parent before exec() (only
 * async-signal-safe calls are allowed there; ThreadSanitizer refuses it
 * outright), and the parent, which owns the run, keeps its own writer. */
void tl_signals_atfork_child(void)
{
    if (sg.wake[0] < 0)
        return;
    close(sg.wake[0]);
    close(sg.wake[1]);
    close(sg.done[0]);
    close(sg.done[1]);
    sg.wake[0] = sg.wake[1] = sg.done[0] = sg.done[1] = -1;
    atomic_store(&sg.busy, 0);
    atomic_store(&sg.holding, 0);
    atomic_store(&sg.held, 0);
}
