#!/usr/bin/env python3
"""check-cmake-min.py - the ctest "cmake_minimum_constructs": tally builds with CMake 3.22.

Ubuntu 22.04 (the usual image of GPU clouds and clusters) ships CMake 3.22.1, so 3.22 is the
minimum. No CMake 3.22 binary can be fetched here (Debian has 3.25), so this test checks the
sources against 3.22 instead of running it:
  1. CMakePresets.json: "version" at most 3 (the presets schema 3.22 reads), cmakeMinimumRequired
     at most 3.22, and no field of a later schema (workflowPresets and packagePresets: 6; include
     and ${fileDir}: 4; testOutputTruncation and ${pathListSep}: 5; $schema: 8; ...);
  2. every cmake_minimum_required / cmake_policy(VERSION) in a CMakeLists.txt or *.cmake(.in) of
     the tree names at most 3.22;
  3. none of the commands, options, generator expressions and properties that CMake added after
     3.22 (the table NEWER below, each with the release that added it, from CMake's release notes)
     appears in those files, nor a `cmake`/`ctest` command-line option newer than 3.22 in the
     Makefile, README.md, .ci/run and the shell scripts;
  4. with a cmake on PATH, `cmake --list-presets=all` reads the presets file.
The constructs the build does use and that 3.22 has are listed in docs/cluster.md ("Building on a
cluster"). Usage: check-cmake-min.py SOURCE_DIR | --self-test (the checks fail on a tree that
uses 3.25's constructs).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MIN = (3, 22)
MAX_PRESETS_VERSION = 3  # CMake 3.21 and 3.22 read presets schema version 3

# (regex, CMake release that added it, what it is). Searched in CMake files with comments removed.
NEWER = [
    (r"^[ \t]*block\s*\(", "3.25", "block()"),
    (r"^[ \t]*endblock\s*\(", "3.25", "endblock()"),
    (r"\breturn\s*\([^)]*\bPROPAGATE\b", "3.25", "return(PROPAGATE)"),
    (r"\bGET_MESSAGE_LOG_LEVEL\b", "3.25", "cmake_language(GET_MESSAGE_LOG_LEVEL)"),
    (r"\bVALIDATOR\b", "3.25", "find_*(VALIDATOR)"),
    (r"\badd_subdirectory\s*\([^)]*\bSYSTEM\b", "3.25", "add_subdirectory(SYSTEM)"),
    (r"\bFetchContent_Declare\s*\([^)]*\bSYSTEM\b", "3.25", "FetchContent_Declare(SYSTEM)"),
    (r"\$<PATH(_EQUAL)?:", "3.24", "$<PATH:...> / $<PATH_EQUAL:...>"),
    (r"\bif\s*\([^)]*\bPATH_EQUAL\b", "3.24", "if(PATH_EQUAL)"),
    (r"\$<LINK_(LIBRARY|GROUP):", "3.24", "$<LINK_LIBRARY:...> / $<LINK_GROUP:...>"),
    (r"\bCOMPILE_WARNING_AS_ERROR\b", "3.24", "COMPILE_WARNING_AS_ERROR / CMAKE_COMPILE_WARNING_AS_ERROR"),
    (r"\bfind_package\s*\([^)]*\bGLOBAL\b", "3.24", "find_package(GLOBAL)"),
    (r"\b(FIND_PACKAGE_ARGS|OVERRIDE_FIND_PACKAGE)\b", "3.24", "FetchContent FIND_PACKAGE_ARGS / OVERRIDE_FIND_PACKAGE"),
    (r"\bSET_DEPENDENCY_PROVIDER\b", "3.24", "cmake_language(SET_DEPENDENCY_PROVIDER)"),
    (r"\bREGISTRY_VIEW\b", "3.24", "find_*(REGISTRY_VIEW)"),
    (r"\bDOWNLOAD_EXTRACT_TIMESTAMP\b", "3.24", "DOWNLOAD_EXTRACT_TIMESTAMP"),
    (r"\bCMAKE_LINK_LIBRARY_USING_", "3.24", "CMAKE_LINK_LIBRARY_USING_<FEATURE>"),
    (r"\bFILE_SETS?\b", "3.23", "target_sources(FILE_SET) / install(FILE_SET)"),
    (r"\bHEADER_SETS?\b", "3.23", "HEADER_SET(S) properties"),
    (r"\bSABIModule\b", "3.26", "FindPython Development.SABIModule"),
    (r"\$<(LIST|COMPILE_ONLY|TARGET_IMPORT_FILE|TARGET_IMPORT_FILE_NAME|TARGET_IMPORT_FILE_DIR):", "3.27",
     "$<LIST:...> / $<COMPILE_ONLY:...> / $<TARGET_IMPORT_FILE...>"),
    (r"\bTIMEOUT_SIGNAL_(NAME|GRACE_PERIOD)\b", "3.27", "test property TIMEOUT_SIGNAL_NAME"),
    (r"\bDEPENDS_EXPLICIT_ONLY\b", "3.27", "add_custom_command(DEPENDS_EXPLICIT_ONLY)"),
    (r"\bJOB_SERVER_AWARE\b", "3.28", "add_custom_command(JOB_SERVER_AWARE)"),
    (r"\bif\s*\([^)]*\bIS_(READABLE|WRITABLE|EXECUTABLE)\b", "3.29", "if(IS_READABLE ...)"),
    (r"\b(CMAKE_)?TEST_LAUNCHER\b", "3.29", "TEST_LAUNCHER"),
    (r"\bLINKER_TYPE\b", "3.29", "LINKER_TYPE"),
    (r"\bcmake_language\s*\(\s*EXIT\b", "3.29", "cmake_language(EXIT)"),
    (r"\bCODEGEN\b", "3.31", "add_custom_command(CODEGEN)"),
    (r"\bcmake_pkg_config\s*\(", "3.31", "cmake_pkg_config()"),
]

# cmake/ctest command-line options newer than 3.22, searched in the Makefile, README and scripts.
NEWER_CLI = [
    (r"\bcmake\b[^\n]*--workflow\b", "3.25", "cmake --workflow"),
    (r"\bcmake\b[^\n]*--fresh\b", "3.24", "cmake --fresh"),
    (r"\bcmake -E copy -t\b", "3.26", "cmake -E copy -t"),
    (r"\bcmake -E env --modify\b", "3.27", "cmake -E env --modify"),
    (r"\bctest\b[^\n]*--schedule-random-seed\b", "3.30", "ctest --schedule-random-seed"),
]

# presets fields of schema versions above 3, with the version that added them
PRESET_TOP_KEYS = {"include": 4, "workflowPresets": 6, "packagePresets": 6, "$schema": 8}
PRESET_KEYS = {"resolvePackageReferences": 4, "testOutputTruncation": 5, "trace": 7,
               "graphviz": 10, "$comment": 10}
PRESET_MACROS = {"${fileDir}": 4, "${pathListSep}": 5}


def cmake_files(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not x.startswith("build") and not x.startswith(".")
                         and not (rel == "." and x == "node_modules"))
        for f in sorted(files):
            if f == "CMakeLists.txt" or f.endswith(".cmake") or f.endswith(".cmake.in"):
                yield os.path.join(d, f)


def script_files(root):
    for name in ("Makefile", "README.md", ".ci/run"):
        p = os.path.join(root, name)
        if os.path.isfile(p):
            yield p
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("build") and not x.startswith("."))
        for f in sorted(files):
            if f.endswith(".sh"):
                yield os.path.join(d, f)


def strip_comments(text):
    # a CMake comment starts at a # outside a quoted string; bracket comments are not used here
    out = []
    for line in text.splitlines():
        q = False
        cut = len(line)
        for i, c in enumerate(line):
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                q = not q
            elif c == "#" and not q:
                cut = i
                break
        out.append(line[:cut])
    return "\n".join(out)


def version_tuple(s):
    parts = re.findall(r"\d+", s)[:2]
    return tuple(int(x) for x in parts) if len(parts) == 2 else None


def check(root):
    problems = []
    checked = 0
    presets = os.path.join(root, "CMakePresets.json")
    try:
        with open(presets, encoding="utf-8") as f:
            text = f.read()
        doc = json.loads(text)
    except (OSError, ValueError) as e:
        problems.append(f"{presets}: cannot read: {e}")
        doc, text = {}, ""
    if doc:
        v = doc.get("version")
        if not isinstance(v, int) or v > MAX_PRESETS_VERSION:
            problems.append(f"{presets}: version {v}: CMake 3.22 reads presets version {MAX_PRESETS_VERSION} at most")
        mr = doc.get("cmakeMinimumRequired", {})
        got = (mr.get("major", 0), mr.get("minor", 0))
        if got > MIN:
            problems.append(f"{presets}: cmakeMinimumRequired {got[0]}.{got[1]} is above 3.22")

        def walk(node, path):
            if isinstance(node, dict):
                for k, val in node.items():
                    ver = PRESET_KEYS.get(k) or (PRESET_TOP_KEYS.get(k) if not path else None)
                    if ver:
                        problems.append(f"{presets}: {path}{k}: a presets version {ver} field, unknown to CMake 3.22")
                    walk(val, f"{path}{k}.")
            elif isinstance(node, list):
                for i, val in enumerate(node):
                    walk(val, f"{path}{i}.")
        walk(doc, "")
        for m, ver in PRESET_MACROS.items():
            if m in text:
                problems.append(f"{presets}: macro {m} is presets version {ver}, unknown to CMake 3.22")
    for path in cmake_files(root):
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            code = strip_comments(f.read())
        for m in re.finditer(r"\b(cmake_minimum_required|cmake_policy)\s*\(\s*VERSION\s+([0-9.]+)", code, re.I):
            v = version_tuple(m.group(2))
            if v is None or v > MIN:
                problems.append(f"{path}: {m.group(1)}(VERSION {m.group(2)}): above 3.22")
        for rx, ver, what in NEWER:
            for m in re.finditer(rx, code, re.M | re.S):
                line = code.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {what} is CMake {ver}, newer than 3.22")
    for path in script_files(root):
        if os.sep + "platform" + os.sep in path:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for rx, ver, what in NEWER_CLI:
            for m in re.finditer(rx, text):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {what} is CMake {ver}, newer than 3.22")
    cmake = shutil.which("cmake")
    if cmake and doc:
        r = subprocess.run([cmake, "--list-presets=all"], cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"{presets}: cmake --list-presets=all failed: {r.stderr.strip()}")
    return problems, checked


def self_test():
    """The checks must fail on a tree written for 3.25 (what tally had before)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "CMakePresets.json"), "w") as f:
            json.dump({"version": 6, "cmakeMinimumRequired": {"major": 3, "minor": 25, "patch": 0},
                       "configurePresets": [{"name": "dev", "binaryDir": "${sourceDir}/b"}],
                       "workflowPresets": []}, f)
        with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\nproject(x C)\n# block() in a comment is fine\n"
                    "block(SCOPE_FOR VARIABLES)\nendblock()\n"
                    "target_sources(x PUBLIC FILE_SET HEADERS FILES a.h)\n")
        with open(os.path.join(d, "Makefile"), "w") as f:
            f.write("all:\n\tcmake --workflow --preset dev\n")
        problems, _ = check(d)
        want = ["presets version 3 at most", "cmakeMinimumRequired 3.25", "workflowPresets",
                "cmake_minimum_required(VERSION 3.25)", "block()", "endblock()", "FILE_SET",
                "cmake --workflow"]
        text = "\n".join(problems)
        missing = [w for w in want if w not in text]
        if "comment" in text or "CMakeLists.txt:3:" in text:
            missing.append("(a construct in a comment was reported)")
        if missing:
            print("self-test: not reported: " + ", ".join(missing), file=sys.stderr)
            print(text, file=sys.stderr)
            return 1
        print(f"self-test: {len(problems)} problems of a 3.25 tree reported")
        return 0


def main():
    if len(sys.argv) != 2:
        print("usage: check-cmake-min.py SOURCE_DIR | --self-test", file=sys.stderr)
        return 2
    if sys.argv[1] == "--self-test":
        return self_test()
    problems, checked = check(sys.argv[1])
    for p in problems:
        print("check-cmake-min: " + p, file=sys.stderr)
    if problems:
        return 1
    print(f"CMake 3.22: presets version <= {MAX_PRESETS_VERSION}, {checked} CMake files, "
          f"{len(NEWER)} newer constructs and {len(NEWER_CLI)} newer command-line options checked: none used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
