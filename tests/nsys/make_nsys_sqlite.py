#!/usr/bin/env python3
"""Write a small Nsight Systems SQLite export by hand, as `nsys export --type sqlite` writes it.

Tables and column names are those of Nsight Systems' documented export schema ("SQLite Export
Schema Reference" of the nsys exporter documentation; `.schema` of a real export): the CUPTI
activity tables, NVTX_EVENTS, StringIds, ThreadNames, PROCESSES and the TARGET_INFO_* tables.
Times are ns since the session start; globalTid is nsys' serialized id (PID = globalTid /
0x1000000 % 0x1000000, TID = globalTid % 0x1000000).

The workload, one process (pid 4242) on one H100: a 4 MiB host-to-device copy, then three NVTX
"train_step" ranges of 10 ms, each with "forward" and "backward" ranges inside; per step a GEMM
and an elementwise kernel in forward, a GEMM, an NCCL all-reduce (on a stream of its own,
overlapping the GEMM) and a memset in backward, each launched by a CUDA runtime call whose
correlation id the kernel carries; a cudaStreamSynchronize at the end of each step.

`rows()` gives the rows as Python data, so a test can compute the expected numbers itself.

usage: make_nsys_sqlite.py OUT.sqlite
"""
import sqlite3
import sys

PID, TID = 4242, 4242
GLOBAL_PID = (1 << 56) | (PID << 24)
GLOBAL_TID = GLOBAL_PID | TID
DEVICE, STREAM, NCCL_STREAM = 0, 7, 13
MS, US = 1_000_000, 1_000
SESSION_START_UTC_NS = 1_764_000_000_000_000_000

GEMM = "void gemm_kernel<float, 128>(float const*, float const*, float*, int)"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float*)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
    nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
    ctxPid INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER NOT NULL, cudaId INTEGER NOT NULL, pid INTEGER,
    uuid TEXT, numMultiprocessors INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds (id), priority INTEGER,
    globalTid INTEGER);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL REFERENCES StringIds (id), returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds (id),
    shortName INTEGER NOT NULL REFERENCES StringIds (id), mangledName INTEGER REFERENCES StringIds (id),
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
    dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER,
    virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
    graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
    globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER REFERENCES StringIds (id), domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,
    jsonText TEXT);
"""


def rows():
    """The workload as plain data: every table's rows as dicts (times in ns)."""
    runtime, kernels, memcpy, memset, sync, nvtx = [], [], [], [], [], []
    corr = [0]

    def launch(api, t, dur=5 * US):
        corr[0] += 1
        runtime.append(dict(name=api, start=t, end=t + dur, corr=corr[0]))
        return corr[0]

    c = launch("cudaMemcpyAsync_v3020", 1 * MS, 10 * US)
    memcpy.append(dict(start=1 * MS + 20 * US, end=1 * MS + 120 * US, stream=STREAM, corr=c, bytes=4 << 20,
                       copyKind=1, srcKind=2, dstKind=3))
    nvtx.append(dict(text="dataset ready", start=1 * MS + 500 * US, end=None, eventType=34))  # a mark
    for k in range(3):
        s = 2 * MS + k * 10 * MS
        nvtx.append(dict(text="train_step", start=s, end=s + 10 * MS, eventType=59))
        nvtx.append(dict(text="forward", start=s + 100 * US, end=s + 4 * MS, eventType=59))
        nvtx.append(dict(text="backward", start=s + 4 * MS, end=s + 8 * MS, eventType=59))
        c = launch("cudaLaunchKernel_v7000", s + 200 * US)
        kernels.append(dict(name=GEMM, start=s + 300 * US, end=s + 1800 * US, stream=STREAM, corr=c,
                            grid=(64, 32, 1), block=(128, 1, 1)))
        c = launch("cudaLaunchKernel_v7000", s + 250 * US)
        kernels.append(dict(name=ELEMENTWISE, start=s + 1800 * US, end=s + 2000 * US, stream=STREAM, corr=c,
                            grid=(1024, 1, 1), block=(128, 1, 1)))
        c = launch("cudaMemsetAsync_v3020", s + 4050 * US)
        memset.append(dict(start=s + 6300 * US, end=s + 6350 * US, stream=STREAM, corr=c, bytes=1 << 20,
                           memKind=3))
        c = launch("cudaLaunchKernel_v7000", s + 4100 * US)
        kernels.append(dict(name=GEMM, start=s + 4200 * US, end=s + 6200 * US, stream=STREAM, corr=c,
                            grid=(64, 32, 1), block=(128, 1, 1)))
        c = launch("cuLaunchKernel", s + 4150 * US)  # a driver call (NCCL launches through the driver API)
        kernels.append(dict(name=NCCL, start=s + 5000 * US, end=s + 6000 * US, stream=NCCL_STREAM, corr=c,
                            grid=(2, 1, 1), block=(512, 1, 1)))
        c = launch("cudaStreamSynchronize_v3020", s + 8 * MS, 500 * US)
        # the host waiting on an event: no stream (syncType 1, Event Sync)
        sync.append(dict(start=s + 9 * MS, end=s + 9 * MS + 20 * US, stream=0xFFFFFFFF, corr=c + 1000,
                         syncType=1))
    return dict(runtime=runtime, kernels=kernels, memcpy=memcpy, memset=memset, sync=sync, nvtx=nvtx)


def write(path):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[s], s))
        return strings[s]

    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.1')")
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '2025-11-24T16:00:00Z', '')",
               (SESSION_START_UTC_NS,))
    db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Device', 'Hostname', 1, 'node-a17')")
    db.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, totalMemory, smCount, uuid, "
               "chipName, cuDevice, computeMajor, computeMinor) VALUES (0, 5, 'NVIDIA H100 80GB HBM3', "
               "'0000:1b:00.0', 1, 85520809984, 132, 'GPU-1234', 'GH100', 0, 9, 0)")
    db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (5, ?, ?, 'GPU-1234', 132)", (DEVICE, PID))
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (GLOBAL_PID, PID))
    db.execute("INSERT INTO ThreadNames VALUES (?, 10, ?)", (sid("python3"), GLOBAL_TID))
    db.executemany("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)",
                   [(34, "NvtxMark", "NVTX Mark"), (59, "NvtxPushPopRange", "NVTX PushPop Range"),
                    (60, "NvtxStartEndRange", "NVTX StartEnd Range"), (75, "NvtxDomainCreate", "NVTX Domain Create")])
    db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)",
                   [(1, "CUDA_MEMCPY_HTOD", "Host-to-Device"), (2, "CUDA_MEMCPY_DTOH", "Device-to-Host"),
                    (8, "CUDA_MEMCPY_DTOD", "Device-to-Device")])
    db.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)",
                   [(1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"), (2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
                    (3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device")])
    r = rows()
    for x in r["runtime"]:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0, NULL)",
                   (x["start"], x["end"], GLOBAL_TID, x["corr"], sid(x["name"])))
    for i, x in enumerate(r["kernels"]):
        short = x["name"].split("(")[0].split("<")[0].split()[-1]
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?, NULL, 1, 0, 64, "
                   "?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, 0, 0, 0)",
                   (x["start"], x["end"], DEVICE, x["stream"], x["corr"], GLOBAL_PID, sid(x["name"]), sid(short),
                    *x["grid"], *x["block"], i + 1))
    for x in r["memcpy"]:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, "
                   "NULL, 0, 1, 0, NULL, NULL)",
                   (x["start"], x["end"], DEVICE, x["stream"], x["corr"], GLOBAL_PID, x["bytes"], x["copyKind"],
                    x["srcKind"], x["dstKind"]))
    for x in r["memset"]:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, 1, NULL, ?, ?, ?, 0, ?, NULL, ?)",
                   (x["start"], x["end"], DEVICE, x["stream"], x["corr"], GLOBAL_PID, x["bytes"], x["memKind"]))
    for x in r["sync"]:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, ?, 1, ?, ?, ?, ?, 3)",
                   (x["start"], x["end"], DEVICE, x["stream"], x["corr"], GLOBAL_PID, x["syncType"]))
    # a domain's creation (not a range), then the ranges and marks; "forward" and "backward" are
    # registered strings (textId), the rest plain text, as nsys writes both
    db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (0, 75, 'app', ?, 1)",
               (GLOBAL_TID,))
    for x in r["nvtx"]:
        registered = x["text"] in ("forward", "backward")
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, globalTid, "
                   "textId, domainId) VALUES (?, ?, ?, 0, 0, 4278190335, ?, ?, ?, 0)",
                   (x["start"], x["end"], x["eventType"], None if registered else x["text"], GLOBAL_TID,
                    sid(x["text"]) if registered else None))
    db.commit()
    db.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write(sys.argv[1])
