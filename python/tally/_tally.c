/*
 * _tally.c - the CPython extension over libtally (the `tally` Python module's
 * C half; tally/__init__.py is the other half and the public face).
 *
 * Every call goes straight to libtally's public API (include/tally/tally.h):
 * the module records nothing itself, it adapts. The one idea a reader needs:
 * the hot path is `with tally.section(name):`, so `section` and `iteration`
 * are C types with their own vectorcall constructor, __enter__ and __exit__
 * (no Python frame, no argument tuple, no lock), and the name's UTF-8 text is
 * the str object's own cached buffer, which libtally's per-thread name cache
 * recognises by its address.
 *
 * Nesting. libtally closes the innermost open section of the calling thread
 * (tally_end takes no name). Python code can end sections out of order: two
 * asyncio tasks on one thread that each hold a section across an await, or a
 * generator suspended inside a `with`. So each thread keeps its own stack of
 * the section objects it opened (py_stack); __exit__ looks its object up from
 * the top. When it is the innermost, one tally_end closes it. When sections
 * opened after it are still open (another task's), they are closed with it,
 * at this moment ("cut", recorded as a "tally.section_cut" event naming both),
 * and their own __exit__ later does nothing. An object that is not on the
 * thread's stack at all (already cut, or entered on another thread) ends
 * nothing. So libtally's own stack never closes the wrong section.
 *
 * The GIL is released only around calls that do I/O or take libtally's locks
 * for long (memory_snapshot, flush, shutdown); the recording calls are tens
 * of nanoseconds, less than releasing and taking it back would cost.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <tally/tally.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Open sections tracked per thread; libtally's own limit (TL_MAX_DEPTH) is
 * the same. Sections beyond it are still passed to libtally (which counts
 * them as problems.depth_overflow) and closed innermost-first. */
#define TL_PY_MAX_DEPTH 256

struct tl_py_stack {
    int depth;
    int untracked;                   /* sections opened beyond TL_PY_MAX_DEPTH, still open */
    int named;                       /* name_thread() ran on this thread */
    PyObject *open[TL_PY_MAX_DEPTH]; /* strong references */
};

static _Thread_local struct tl_py_stack py_stack;

/* Set once libtally was started by this module (or found started): every
 * recording call checks it first. Guarded by the GIL. */
static int py_inited;
/* The file name prefix used when TALLY_NAME is not set: the script's stem
 * (set by __init__.py from sys.argv[0]). */
static char default_name[128];

static PyObject *update_wrapper; /* functools.update_wrapper */

enum { KIND_SECTION = 0, KIND_ITERATION = 1 };

typedef struct {
    PyObject_HEAD PyObject *name; /* str */
    const char *utf8;             /* the UTF-8 buffer cached inside name */
    int kind;
} SectionObject;

typedef struct {
    PyObject_HEAD SectionObject *section;
    PyObject *func;
    PyObject *dict; /* __name__, __doc__, __wrapped__... (functools.update_wrapper) */
    vectorcallfunc vectorcall;
} WrappedObject;

static PyTypeObject SectionType;
static PyTypeObject IterationType;
static PyTypeObject WrappedType;

/* ---- starting libtally ------------------------------------------------------ */

/* Configuration from the environment, as in C, but with the script's name as
 * the default file name prefix (libtally's default would be "python3"). */
static int start_from_env(void)
{
    tally_config cfg;
    tally_config_from_env(&cfg);
    if ((cfg.name == NULL || cfg.name[0] == '\0') && default_name[0] != '\0')
        cfg.name = default_name;
    tally_init(&cfg); /* TALLY_ESTATE: already started by C code in this process */
    py_inited = 1;
    return 0;
}

static inline void ensure_started(void)
{
    if (__builtin_expect(!py_inited, 0))
        start_from_env();
}

/* ---- the per-thread stack of open sections -------------------------------- */

/* Writes s as a JSON string body (no quotes) into buf. */
static void json_escape(char *buf, size_t len, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(buf + o, len - o, "\\u%04x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o] = '\0';
}

static void note_cut(SectionObject *cut, SectionObject *by)
{
    char a[200], b[200], args[480];
    json_escape(a, sizeof a, cut->utf8);
    json_escape(b, sizeof b, by->utf8);
    snprintf(args, sizeof args, "{\"section\":\"%s\",\"closed_with\":\"%s\"}", a, b);
    tally_event("tally.section_cut", args);
}

/* A lane of the trace is named after its OS thread (libtally reads
 * /proc/self/task/TID/comm when the thread first records). Python before 3.14
 * does not name the OS threads it starts, so every lane would read "python3":
 * a thread that first opens a section while it still has the name it
 * inherited from the process gets its Python name (threading's "worker-1",
 * "Thread-2 (run)"), cut to the kernel's 15 bytes, as Python 3.14 does for
 * every thread. The main thread, and a thread that was named, keep theirs. */
static void name_thread(void)
{
    char comm[16], process[16] = "";
    py_stack.named = 1;
    if ((pid_t)syscall(SYS_gettid) == getpid() || pthread_getname_np(pthread_self(), comm, sizeof comm) != 0)
        return;
    FILE *f = fopen("/proc/self/comm", "r");
    if (f == NULL)
        return;
    if (fgets(process, sizeof process, f) == NULL)
        process[0] = '\0';
    fclose(f);
    process[strcspn(process, "\n")] = '\0';
    if (strcmp(comm, process) != 0)
        return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *current = threading ? PyObject_CallMethod(threading, "current_thread", NULL) : NULL;
    PyObject *name = current ? PyObject_GetAttrString(current, "name") : NULL;
    const char *text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (text != NULL && text[0] != '\0') {
        char buf[16];
        size_t n = strlen(text) < 15 ? strlen(text) : 15;
        while (n > 0 && n < strlen(text) && ((unsigned char)text[n] & 0xc0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
        memcpy(buf, text, n);
        buf[n] = '\0';
        pthread_setname_np(pthread_self(), buf);
    }
    Py_XDECREF(name);
    Py_XDECREF(current);
    Py_XDECREF(threading);
    PyErr_Restore(type, value, tb); /* whatever failed here, the section goes on */
}

static void section_open(SectionObject *s)
{
    ensure_started();
    if (__builtin_expect(!py_stack.named, 0))
        name_thread();
    if (s->kind == KIND_ITERATION) {
        tally_iteration_begin(s->utf8);
        return;
    }
    struct tl_py_stack *st = &py_stack;
    if (st->depth < TL_PY_MAX_DEPTH && st->untracked == 0) {
        Py_INCREF(s);
        st->open[st->depth++] = (PyObject *)s;
    } else {
        st->untracked++;
    }
    tally_begin(s->utf8);
}

static void section_close(SectionObject *s)
{
    if (s->kind == KIND_ITERATION) {
        tally_iteration_end(s->utf8);
        return;
    }
    struct tl_py_stack *st = &py_stack;
    if (st->untracked > 0) {
        st->untracked--;
        tally_end();
        return;
    }
    int i = st->depth - 1;
    while (i >= 0 && st->open[i] != (PyObject *)s)
        i--;
    if (i < 0)
        return; /* cut earlier, or opened on another thread */
    while (st->depth - 1 > i) {
        SectionObject *o = (SectionObject *)st->open[--st->depth];
        tally_end();
        note_cut(o, s);
        Py_DECREF(o);
    }
    st->depth--;
    tally_end();
    Py_DECREF(s);
}

/* ---- section and iteration ------------------------------------------------- */

static PyObject *section_make(PyTypeObject *type, PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a str name, got %.80s",
                     type == &IterationType ? "iteration" : "section", Py_TYPE(name)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &n);
    if (utf8 == NULL)
        return NULL;
    if ((size_t)n != strlen(utf8)) {
        PyErr_SetString(PyExc_ValueError, "a section name cannot contain a NUL character");
        return NULL;
    }
    SectionObject *s = PyObject_New(SectionObject, type);
    if (s == NULL)
        return NULL;
    Py_INCREF(name);
    s->name = name;
    s->utf8 = utf8;
    s->kind = type == &IterationType ? KIND_ITERATION : KIND_SECTION;
    return (PyObject *)s;
}

static PyObject *section_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyTypeObject *t = (PyTypeObject *)type;
    if (nargs == 1 && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0))
        return section_make(t, args[0]);
    if (nargs == 0 && kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 &&
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "name") == 0)
        return section_make(t, args[0]);
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one argument, the name",
                 t == &IterationType ? "iteration" : "section");
    return NULL;
}

static PyObject *section_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "name", NULL };
    PyObject *name;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O", kwlist, &name))
        return NULL;
    return section_make(type, name);
}

static void section_dealloc(SectionObject *s)
{
    Py_DECREF(s->name);
    PyObject_Free(s);
}

static PyObject *section_enter(SectionObject *s, PyObject *unused)
{
    section_open(s);
    Py_INCREF(s);
    return (PyObject *)s;
}

/* Ends the section whatever happened inside it and never swallows the
 * exception (returns False). */
static PyObject *section_exit(SectionObject *s, PyObject *const *args, Py_ssize_t nargs)
{
    section_close(s);
    Py_RETURN_FALSE;
}

static PyObject *section_repr(SectionObject *s)
{
    return PyUnicode_FromFormat("tally.%s(%R)", s->kind == KIND_ITERATION ? "iteration" : "section", s->name);
}

static PyObject *section_get_name(SectionObject *s, void *unused)
{
    Py_INCREF(s->name);
    return s->name;
}

static PyObject *wrapped_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* As a decorator: @tally.section("decode") def decode(...). */
static PyObject *section_call(SectionObject *s, PyObject *args, PyObject *kwds)
{
    PyObject *func;
    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_SetString(PyExc_TypeError, "a tally section used as a decorator takes one function");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "tally.%s(%R) decorates a function, got %.80s",
                     s->kind == KIND_ITERATION ? "iteration" : "section", s->name, Py_TYPE(func)->tp_name);
        return NULL;
    }
    /* A generator or coroutine function returns at its first suspension: the
     * decorator would time the creation of the generator, not its work, and
     * a section open across its suspensions would not nest with its caller's. */
    if (PyFunction_Check(func)) {
        PyCodeObject *code = (PyCodeObject *)PyFunction_GET_CODE(func);
        if (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) {
            PyErr_Format(PyExc_TypeError,
                         "tally.%s(%R) cannot decorate %U, a generator or coroutine function "
                         "(it would time only the creation of the generator): use "
                         "`with tally.section(...)` inside it",
                         s->kind == KIND_ITERATION ? "iteration" : "section", s->name,
                         ((PyFunctionObject *)func)->func_qualname);
            return NULL;
        }
    }
    WrappedObject *w = PyObject_GC_New(WrappedObject, &WrappedType);
    if (w == NULL)
        return NULL;
    Py_INCREF(s);
    Py_INCREF(func);
    w->section = s;
    w->func = func;
    w->dict = NULL;
    w->vectorcall = wrapped_vectorcall;
    PyObject_GC_Track(w);
    PyObject *r = PyObject_CallFunctionObjArgs(update_wrapper, (PyObject *)w, func, NULL);
    if (r == NULL) {
        Py_DECREF(w);
        return NULL;
    }
    Py_DECREF(r);
    return (PyObject *)w;
}

static PyMethodDef section_methods[] = {
    { "__enter__", (PyCFunction)section_enter, METH_NOARGS, "Begin the section; returns it." },
    { "__exit__", (PyCFunction)(void (*)(void))section_exit, METH_FASTCALL,
      "End the section (also when an exception leaves it; the exception propagates)." },
    { NULL, NULL, 0, NULL }
};

static PyGetSetDef section_getset[] = { { "name", (getter)section_get_name, NULL, "The section's name.", NULL },
                                        { NULL, NULL, NULL, NULL, NULL } };

PyDoc_STRVAR(section_doc, "section(name)\n--\n\n"
                          "A timed section of the calling thread: `with tally.section(\"vae_decode\"):`\n"
                          "or, as a decorator, `@tally.section(\"decode\")`. Sections nest; each thread\n"
                          "has its own lane. The section ends when the block is left, also by an\n"
                          "exception (which propagates). A section object may be kept and reused, also\n"
                          "from several threads at once.");

PyDoc_STRVAR(iteration_doc, "iteration(name)\n--\n\n"
                            "One iteration of the loop named name (\"diffusion_step\"):\n"
                            "`with tally.iteration(\"diffusion_step\"):` or as a decorator. Iterations get\n"
                            "their own statistics (with it/s) and keep their samples for `tally compare`.\n"
                            "At most one iteration of a name is open per thread.");

static PyTypeObject SectionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tally.section",
    .tp_basicsize = sizeof(SectionObject),
    .tp_dealloc = (destructor)section_dealloc,
    .tp_repr = (reprfunc)section_repr,
    .tp_call = (ternaryfunc)section_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = section_doc,
    .tp_methods = section_methods,
    .tp_getset = section_getset,
    .tp_new = section_new,
    .tp_vectorcall = section_vectorcall,
};

static PyTypeObject IterationType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tally.iteration",
    .tp_basicsize = sizeof(SectionObject),
    .tp_dealloc = (destructor)section_dealloc,
    .tp_repr = (reprfunc)section_repr,
    .tp_call = (ternaryfunc)section_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = iteration_doc,
    .tp_methods = section_methods,
    .tp_getset = section_getset,
    .tp_new = section_new,
    .tp_vectorcall = section_vectorcall,
};

/* ---- the decorated function -------------------------------------------------- */

static PyObject *wrapped_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    WrappedObject *w = (WrappedObject *)self;
    SectionObject *s = w->section;
    section_open(s);
    PyObject *r = PyObject_Vectorcall(w->func, args, nargsf, kwnames);
    section_close(s); /* sets no exception: one raised by func stays set */
    return r;
}

/* A method: bind like a function does. */
static PyObject *wrapped_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int wrapped_traverse(WrappedObject *w, visitproc visit, void *arg)
{
    Py_VISIT(w->section);
    Py_VISIT(w->func);
    Py_VISIT(w->dict);
    return 0;
}

static int wrapped_clear(WrappedObject *w)
{
    Py_CLEAR(w->section);
    Py_CLEAR(w->func);
    Py_CLEAR(w->dict);
    return 0;
}

static void wrapped_dealloc(WrappedObject *w)
{
    PyObject_GC_UnTrack(w);
    wrapped_clear(w);
    PyObject_GC_Del(w);
}

static PyObject *wrapped_repr(WrappedObject *w)
{
    return PyUnicode_FromFormat("<function %R timed by %R>", w->func, (PyObject *)w->section);
}

static PyGetSetDef wrapped_getset[] = { { "__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL },
                                        { NULL, NULL, NULL, NULL, NULL } };

static PyTypeObject WrappedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tally.timed_function",
    .tp_basicsize = sizeof(WrappedObject),
    .tp_dealloc = (destructor)wrapped_dealloc,
    .tp_vectorcall_offset = offsetof(WrappedObject, vectorcall),
    .tp_repr = (reprfunc)wrapped_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A function timed as a tally section on every call (made by @tally.section).",
    .tp_traverse = (traverseproc)wrapped_traverse,
    .tp_clear = (inquiry)wrapped_clear,
    .tp_getset = wrapped_getset,
    .tp_descr_get = wrapped_get,
    .tp_dictoffset = offsetof(WrappedObject, dict),
};

/* ---- module functions ------------------------------------------------------------ */

static PyObject *py_counter(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "counter(name, value) takes two arguments");
        return NULL;
    }
    const char *name = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
    if (name == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "counter(): the name must be a str");
        return NULL;
    }
    double v = PyFloat_AsDouble(args[1]);
    if (v == -1.0 && PyErr_Occurred())
        return NULL;
    ensure_started();
    tally_counter(name, v);
    Py_RETURN_NONE;
}

static PyObject *py_event(PyObject *m, PyObject *args)
{
    const char *name, *json = NULL;
    if (!PyArg_ParseTuple(args, "s|z:event", &name, &json))
        return NULL;
    ensure_started();
    tally_event(name, json);
    Py_RETURN_NONE;
}

static PyObject *py_memory_snapshot(PyObject *m, PyObject *args)
{
    const char *label;
    if (!PyArg_ParseTuple(args, "s:memory_snapshot", &label))
        return NULL;
    ensure_started();
    /* Registered Python providers take the GIL back (py_provider). */
    Py_BEGIN_ALLOW_THREADS tally_memory_snapshot(label);
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *py_tag(PyObject *m, PyObject *args)
{
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "ss:tag", &key, &value))
        return NULL;
    ensure_started();
    int rc = tally_tag(key, value);
    if (rc == TALLY_EFULL) {
        PyErr_SetString(PyExc_ValueError, "tag(): at most 64 tags per report");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_set_rank(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "rank", "world_size", NULL };
    int rank, world = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "i|i:set_rank", kwlist, &rank, &world))
        return NULL;
    ensure_started();
    tally_set_rank(rank, world);
    Py_RETURN_NONE;
}

/* counter_rate(name, hits, misses): tally_counter_rate. */
static PyObject *py_counter_rate(PyObject *m, PyObject *args)
{
    const char *name, *hits, *misses;
    if (!PyArg_ParseTuple(args, "sss:counter_rate", &name, &hits, &misses))
        return NULL;
    int rc = tally_counter_rate(name, hits, misses);
    if (rc != 0) {
        PyErr_SetString(PyExc_ValueError, rc == TALLY_EFULL ? "counter_rate(): at most 32 rates"
                                                            : "counter_rate(): empty name or a name over 127 bytes");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* now(): tally_now, a reading of the library's clock (0 when it is not running). */
static PyObject *py_now(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyLong_FromUnsignedLongLong((unsigned long long)tally_now());
}

/* record_range(name, start, end): tally_range, a section between two now() readings,
 * recorded on the calling thread (tally.torch's DDP hook: from the hook to the
 * future's callback). */
static PyObject *py_record_range(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name;
    unsigned long long start, end;
    if (!PyArg_ParseTuple(args, "sKK:record_range", &name, &start, &end))
        return NULL;
    tally_range(name, (uint64_t)start, (uint64_t)end);
    Py_RETURN_NONE;
}

/* section_args(args_json): tally_section_args, the metadata of the thread's
 * innermost open section (tally.stage and tally.section_args of __init__.py). */
static PyObject *py_section_args(PyObject *m, PyObject *args)
{
    const char *json;
    if (!PyArg_ParseTuple(args, "s:section_args", &json))
        return NULL;
    ensure_started();
    tally_section_args(json);
    Py_RETURN_NONE;
}

/* block_begin(frames=-1.0), block_end(): tally_block_begin/end (the
 * tally.block context manager of __init__.py). */
static PyObject *py_block_begin(PyObject *m, PyObject *args)
{
    double frames = -1.0;
    if (!PyArg_ParseTuple(args, "|d:block_begin", &frames))
        return NULL;
    ensure_started();
    tally_block_begin(frames);
    Py_RETURN_NONE;
}

static PyObject *py_block_end(PyObject *m, PyObject *unused)
{
    ensure_started();
    tally_block_end();
    Py_RETURN_NONE;
}

static PyObject *py_step(PyObject *m, PyObject *unused)
{
    ensure_started();
    tally_step();
    Py_RETURN_NONE;
}

static PyObject *py_flush(PyObject *m, PyObject *unused)
{
    int rc;
    if (!py_inited)
        Py_RETURN_TRUE; /* nothing recorded: nothing to write */
    Py_BEGIN_ALLOW_THREADS rc = tally_flush();
    Py_END_ALLOW_THREADS return PyBool_FromLong(rc == 0);
}

static PyObject *py_shutdown(PyObject *m, PyObject *unused)
{
    int rc;
    if (!py_inited)
        Py_RETURN_TRUE;
    Py_BEGIN_ALLOW_THREADS rc = tally_shutdown();
    Py_END_ALLOW_THREADS return PyBool_FromLong(rc == 0);
}

static PyObject *py_enabled(PyObject *m, PyObject *unused)
{
    ensure_started();
    return PyBool_FromLong(tally_enabled());
}

static PyObject *py_stats(PyObject *m, PyObject *args)
{
    const char *name;
    tally_stats st;
    if (!PyArg_ParseTuple(args, "s:stats", &name))
        return NULL;
    if (!py_inited || tally_stats_get(name, &st) != 0)
        Py_RETURN_NONE;
    return Py_BuildValue("{s:s,s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "kind", st.iteration ? "iteration" : "section",
                         "count", (unsigned long long)st.count, "total_ns", st.total_ns, "mean_ns", st.mean_ns,
                         "min_ns", st.min_ns, "max_ns", st.max_ns, "std_ns", st.std_ns, "median_ns", st.median_ns,
                         "p95_ns", st.p95_ns);
}

/* current(): the sampler's latest reading as a dict with only the valid
 * readings, or None (sampler off, nothing read yet, not started). Lock-free
 * in libtally: no need to release the GIL. */
static int put_num(PyObject *d, const char *key, double v)
{
    PyObject *o = PyFloat_FromDouble(v);
    int rc = o != NULL ? PyDict_SetItemString(d, key, o) : -1;
    Py_XDECREF(o);
    return rc;
}

static PyObject *gpu_dict(const tally_gpu_reading *g)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    PyObject *idx = PyLong_FromLong(g->index);
    int rc = idx != NULL ? PyDict_SetItemString(d, "index", idx) : -1;
    Py_XDECREF(idx);
    const struct {
        unsigned flag;
        const char *key;
        double v;
    } f[] = {
        { TALLY_GPU_UTIL, "utilization_pct", g->utilization_pct },
        { TALLY_GPU_UTIL, "memory_utilization_pct", g->memory_utilization_pct },
        { TALLY_GPU_MEMORY, "used_bytes", g->used_bytes },
        { TALLY_GPU_MEMORY, "total_bytes", g->total_bytes },
        { TALLY_GPU_PROCESS, "process_used_bytes", g->process_used_bytes },
        { TALLY_GPU_TEMP, "temperature_c", g->temperature_c },
        { TALLY_GPU_POWER, "power_w", g->power_w },
        { TALLY_GPU_LIMIT, "power_limit_w", g->power_limit_w },
        { TALLY_GPU_CLOCKS, "sm_clock_mhz", g->sm_clock_mhz },
        { TALLY_GPU_CLOCKS, "memory_clock_mhz", g->memory_clock_mhz },
        { TALLY_GPU_BASE_CLOCK, "base_sm_clock_mhz", g->base_sm_clock_mhz },
    };
    for (size_t i = 0; rc == 0 && i < sizeof f / sizeof f[0]; i++)
        if (g->valid & f[i].flag)
            rc = put_num(d, f[i].key, f[i].v);
    if (rc == 0 && (g->valid & TALLY_GPU_THROTTLE)) {
        PyObject *t = PyLong_FromUnsignedLongLong(g->throttle_reasons);
        rc = t != NULL ? PyDict_SetItemString(d, "throttle_reasons", t) : -1;
        Py_XDECREF(t);
    }
    if (rc != 0)
        Py_CLEAR(d);
    return d;
}

static PyObject *py_current(PyObject *m, PyObject *unused)
{
    tally_reading r;
    if (!py_inited || tally_current(&r) != 0)
        Py_RETURN_NONE;
    PyObject *d = Py_BuildValue("{s:K,s:L}", "sequence", (unsigned long long)r.sequence, "time_unix_ns",
                                (long long)r.time_unix_ns);
    if (d == NULL)
        return NULL;
    const struct {
        unsigned flag;
        const char *key;
        double v;
    } f[] = {
        { TALLY_READING_CPU, "cpu_pct", r.cpu_pct },
        { TALLY_READING_MEMORY, "rss_bytes", r.rss_bytes },
        { TALLY_READING_MEMORY, "system_available_bytes", r.system_available_bytes },
        { TALLY_READING_LOAD, "load1", r.load1 },
        { TALLY_READING_DISK, "disk_read_bytes_per_s", r.disk_read_bytes_per_s },
        { TALLY_READING_DISK, "disk_write_bytes_per_s", r.disk_write_bytes_per_s },
        { TALLY_READING_DEVICE, "device_read_bytes_per_s", r.device_read_bytes_per_s },
        { TALLY_READING_DEVICE, "device_write_bytes_per_s", r.device_write_bytes_per_s },
    };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof f / sizeof f[0]; i++)
        if (r.valid & f[i].flag)
            rc = put_num(d, f[i].key, f[i].v);
    PyObject *gpus = rc == 0 ? PyList_New(0) : NULL;
    for (int i = 0; gpus != NULL && i < r.ngpus && (r.valid & TALLY_READING_GPU); i++) {
        PyObject *g = gpu_dict(&r.gpus[i]);
        if (g == NULL || PyList_Append(gpus, g) != 0)
            Py_CLEAR(gpus);
        Py_XDECREF(g);
    }
    rc = gpus != NULL ? PyDict_SetItemString(d, "gpus", gpus) : -1;
    Py_XDECREF(gpus);
    if (rc != 0)
        Py_CLEAR(d);
    return d;
}

/* init(enable=None, output_dir=None, name=None, trace=None, max_events=None,
 *      sample_ms=None, schedule=None, summary=None, preset=None, sample_gpu_ms=None,
 *      sample_cpu_ms=None, sample=None, gpus=None, flush_s=None): the environment's
 * configuration with these replaced (a preset first, the others over it). */
static PyObject *py_init(PyObject *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "enable",        "output_dir", "name",    "trace",   "max_events",
                              "sample_ms",     "schedule",   "summary", "preset",  "sample_gpu_ms",
                              "sample_cpu_ms", "sample",     "gpus",    "flush_s", NULL };
    PyObject *enable = Py_None, *trace = Py_None, *summary = Py_None;
    PyObject *max_events = Py_None, *sample_ms = Py_None;
    PyObject *sample_gpu_ms = Py_None, *sample_cpu_ms = Py_None, *flush_s = Py_None;
    const char *output_dir = NULL, *name = NULL, *schedule = NULL;
    const char *preset = NULL, *sample = NULL, *gpus = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OzzOOOzOzOOzzO:init", kwlist, &enable, &output_dir, &name, &trace,
                                     &max_events, &sample_ms, &schedule, &summary, &preset, &sample_gpu_ms,
                                     &sample_cpu_ms, &sample, &gpus, &flush_s))
        return NULL;
    if (py_inited) {
        PyErr_SetString(PyExc_RuntimeError, "tally.init(): tally is already started (init() must come before the "
                                            "first section, counter or snapshot)");
        return NULL;
    }
    tally_config cfg;
    tally_config_from_env(&cfg);
    if ((cfg.name == NULL || cfg.name[0] == '\0') && default_name[0] != '\0')
        cfg.name = default_name;
    if (output_dir != NULL)
        cfg.output_dir = output_dir;
    if (name != NULL)
        cfg.name = name;
    if (schedule != NULL)
        cfg.schedule = schedule;
    /* a preset given here comes first; the other arguments override it */
    if (preset != NULL && tally_config_preset(&cfg, preset) != 0) {
        PyErr_Format(PyExc_ValueError, "tally.init(): unknown preset '%s' (expected dev, prod or debug)", preset);
        return NULL;
    }
    if (sample != NULL)
        cfg.sample = sample;
    if (gpus != NULL)
        cfg.gpus = gpus;
    struct {
        PyObject *o;
        int *dst;
    } flags[] = {
        { enable, &cfg.enable },
        { trace, &cfg.trace },
        { summary, &cfg.summary },
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].o != Py_None) {
            int t = PyObject_IsTrue(flags[i].o);
            if (t < 0)
                return NULL;
            *flags[i].dst = t;
        }
    struct {
        PyObject *o;
        long *dst;
        const char *what;
    } nums[] = {
        { max_events, &cfg.max_events, "max_events" },
        { sample_ms, &cfg.sample_ms, "sample_ms" },
        { sample_gpu_ms, &cfg.sample_gpu_ms, "sample_gpu_ms" },
        { sample_cpu_ms, &cfg.sample_cpu_ms, "sample_cpu_ms" },
        { flush_s, &cfg.flush_s, "flush_s" },
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (nums[i].o != Py_None) {
            long v = PyLong_AsLong(nums[i].o);
            if (v == -1 && PyErr_Occurred())
                return NULL;
            if (v < 0) {
                PyErr_Format(PyExc_ValueError, "tally.init(): %s must be >= 0, got %ld", nums[i].what, v);
                return NULL;
            }
            *nums[i].dst = v;
        }
    /* sample_ms is both parts' period unless they are given too (as in C) */
    if (sample_ms != Py_None && sample_gpu_ms == Py_None)
        cfg.sample_gpu_ms = 0;
    if (sample_ms != Py_None && sample_cpu_ms == Py_None)
        cfg.sample_cpu_ms = 0;
    int rc = tally_init(&cfg);
    py_inited = 1;
    if (rc == TALLY_ESTATE) {
        PyErr_SetString(PyExc_RuntimeError, "tally.init(): libtally was already started in this process");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_set_default_name(PyObject *m, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    snprintf(default_name, sizeof default_name, "%s", name);
    Py_RETURN_NONE;
}

/* A provider registered from Python: fn() returns {key: bytes}. Called by
 * tally_memory_snapshot on the snapshotting thread (without the GIL). */
static void py_provider(tally_provider_sink *sink, void *user)
{
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *fn = user;
    PyObject *r = PyObject_CallNoArgs(fn);
    if (r != NULL && !PyDict_Check(r)) {
        PyErr_Format(PyExc_TypeError,
                     "a tally memory provider must return a dict of "
                     "name -> bytes, got %.80s",
                     Py_TYPE(r)->tp_name);
        Py_CLEAR(r);
    }
    if (r != NULL) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(r, &pos, &k, &v)) {
            const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
            double bytes = key != NULL ? PyFloat_AsDouble(v) : -1.0;
            if (key == NULL || (bytes == -1.0 && PyErr_Occurred())) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "a tally memory provider's keys must be str");
                break;
            }
            tally_provider_put(sink, key, bytes);
        }
        Py_DECREF(r);
    }
    if (PyErr_Occurred())
        PyErr_WriteUnraisable(fn);
    PyGILState_Release(g);
}

static PyObject *py_register_memory_provider(PyObject *m, PyObject *args)
{
    const char *name;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "sO:register_memory_provider", &name, &fn))
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "register_memory_provider(name, fn): fn must be callable");
        return NULL;
    }
    ensure_started();
    Py_INCREF(fn); /* kept for the life of the process: providers are never removed */
    int rc = tally_register_memory_provider(name, py_provider, fn);
    if (rc != 0) {
        Py_DECREF(fn);
        PyErr_SetString(PyExc_ValueError, rc == TALLY_EFULL ? "register_memory_provider(): at most 8 memory providers"
                                                            : "register_memory_provider(): bad name");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The forking thread's open sections belong to the parent: the child starts
 * with empty statistics (libtally) and an empty stack (here). */
static void atfork_child(void)
{
    py_stack.depth = 0;
    py_stack.untracked = 0;
}

static PyMethodDef module_methods[] = {
    { "counter", (PyCFunction)(void (*)(void))py_counter, METH_FASTCALL,
      "counter(name, value)\n--\n\nRecord a value of the counter name (tokens, loss)." },
    { "event", py_event, METH_VARARGS,
      "event(name, args_json=None)\n--\n\nRecord an instant event; args_json is a JSON object text." },
    { "memory_snapshot", py_memory_snapshot, METH_VARARGS,
      "memory_snapshot(label)\n--\n\nRSS, peak RSS, system memory, NVML and the providers' readings." },
    { "tag", py_tag, METH_VARARGS, "tag(key, value)\n--\n\nAttach a tag to the report." },
    { "set_rank", (PyCFunction)(void (*)(void))py_set_rank, METH_VARARGS | METH_KEYWORDS,
      "set_rank(rank, world_size=0)\n--\n\nSet this process's rank and the world size." },
    { "step", py_step, METH_NOARGS, "step()\n--\n\nAdvance the profiling schedule by one step." },
    { "block_begin", py_block_begin, METH_VARARGS,
      "block_begin(frames=-1.0)\n--\n\nOpen a block of a block-wise generation that makes frames frames." },
    { "block_end", py_block_end, METH_NOARGS, "block_end()\n--\n\nClose the open block." },
    { "now", py_now, METH_NOARGS,
      "now()\n--\n\nA reading of the library's clock, for record_range() (0 when it is not running)." },
    { "record_range", py_record_range, METH_VARARGS,
      "record_range(name, start, end)\n--\n\nA section from one now() reading to another, recorded on this thread "
      "(for work whose start and end are seen by different threads)." },
    { "counter_rate", py_counter_rate, METH_VARARGS,
      "counter_rate(name, hits, misses)\n--\n\nThe report gives name = hits / (hits + misses) of two counters." },
    { "section_args", py_section_args, METH_VARARGS,
      "section_args(args_json)\n--\n\nAttach a JSON object to the innermost open section of this thread." },
    { "flush", py_flush, METH_NOARGS, "flush()\n--\n\nWrite the report and trace so far; True when written." },
    { "shutdown", py_shutdown, METH_NOARGS,
      "shutdown()\n--\n\nStop recording and write the outputs; True when written." },
    { "enabled", py_enabled, METH_NOARGS, "enabled()\n--\n\nTrue while recording." },
    { "stats", py_stats, METH_VARARGS,
      "stats(name)\n--\n\nStatistics of a section or iteration so far (a dict), or None." },
    { "init", (PyCFunction)(void (*)(void))py_init, METH_VARARGS | METH_KEYWORDS,
      "init(*, enable=None, output_dir=None, name=None, trace=None, max_events=None, "
      "sample_ms=None, schedule=None, summary=None, preset=None, sample_gpu_ms=None, "
      "sample_cpu_ms=None, sample=None, gpus=None, flush_s=None)\n--\n\n"
      "Start recording with the environment's configuration, these replaced." },
    { "current", py_current, METH_NOARGS,
      "current()\n--\n\nThe sampler's latest reading (a dict of the valid readings), or None." },
    { "register_memory_provider", py_register_memory_provider, METH_VARARGS,
      "register_memory_provider(name, fn)\n--\n\nfn() -> {key: bytes}, read at every snapshot." },
    { "_set_default_name", py_set_default_name, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL }
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tally._tally",
    .m_doc = "libtally, the collector, for Python (see the tally package).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__tally(void); /* the one exported symbol */

PyMODINIT_FUNC PyInit__tally(void)
{
    PyObject *m = NULL, *functools = NULL;
    static int atfork_registered;

    if (PyType_Ready(&SectionType) < 0 || PyType_Ready(&IterationType) < 0 || PyType_Ready(&WrappedType) < 0)
        goto fail;
    functools = PyImport_ImportModule("functools");
    if (functools == NULL)
        goto fail;
    Py_XSETREF(update_wrapper, PyObject_GetAttrString(functools, "update_wrapper"));
    if (update_wrapper == NULL)
        goto fail;
    m = PyModule_Create(&module_def);
    if (m == NULL)
        goto fail;
    Py_INCREF(&SectionType);
    if (PyModule_AddObject(m, "section", (PyObject *)&SectionType) < 0) {
        Py_DECREF(&SectionType);
        goto fail;
    }
    Py_INCREF(&IterationType);
    if (PyModule_AddObject(m, "iteration", (PyObject *)&IterationType) < 0) {
        Py_DECREF(&IterationType);
        goto fail;
    }
    if (PyModule_AddStringConstant(m, "libtally_version", TALLY_VERSION_STRING) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DEPTH", TL_PY_MAX_DEPTH) < 0)
        goto fail;
    if (!atfork_registered) {
        pthread_atfork(NULL, NULL, atfork_child);
        atfork_registered = 1;
    }
    Py_DECREF(functools);
    return m;
fail:
    Py_XDECREF(functools);
    Py_XDECREF(m);
    return NULL;
}
