"""Builds tally._tally, the CPython extension, from libtally's own sources.

The extension compiles the collector's C files of this checkout (../lib, ../common) into
the module, as CMake links libtally's static library into it: one implementation, and
no libtally.so needed at run time. Metadata is in pyproject.toml.
"""
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIB = os.path.join(ROOT, "lib")
COMMON = os.path.join(ROOT, "common")
INCLUDE = os.path.join(ROOT, "include")

# libtally's sources: lib/CMakeLists.txt's TALLY_LIB_SOURCES and common/'s object library.
LIB_SOURCES = [
    "clock.c", "collector.c", "config.c", "gzip_writer.c", "intern.c", "memory.c", "nvml.c", "report.c",
    "sampler.c", "summary.c", "thread.c", "trace.c", "outpath.c", "query.c", "signals.c", "blocks.c",
    "section_args.c", "counter_rates.c",
]
COMMON_SOURCES = ["array.c", "histogram.c", "json_writer.c", "output.c", "stats.c", "units.c"]


def libtally_sources():
    files = [os.path.join(LIB, f) for f in LIB_SOURCES]
    files += [os.path.join(COMMON, f) for f in COMMON_SOURCES]
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        sys.exit("tally: setup.py: %s: not found. The module is built from a tally checkout: "
                 "python/ needs ../lib, ../common and ../include beside it (build it with "
                 "`pip install ./python` from the checkout's root, not from a copy of python/)"
                 % missing[0])
    return files


class build_ext_with_libtally(build_ext):
    """Adds libtally's sources at build time. They lie outside python/, which setup()'s
    own file lists may not name (egg_info refuses absolute and '..' paths)."""

    def build_extension(self, ext):
        if ext.name == "tally._tally":
            ext.sources = list(ext.sources) + libtally_sources()
        super().build_extension(ext)


setup(
    cmdclass={"build_ext": build_ext_with_libtally},
    ext_modules=[
        Extension(
            "tally._tally",
            sources=["tally/_tally.c"],
            include_dirs=[INCLUDE, LIB, COMMON],
            define_macros=[("TALLY_STATIC_DEFINE", "1")],
            libraries=["z", "pthread", "dl", "m"],
            extra_compile_args=["-std=gnu11", "-fvisibility=hidden"],
        )
    ],
)
