#!/bin/sh
# check.sh - libtally as its users get it (README: "Build against the installed library").
#   1. cmake --install BUILD_DIR into a scratch prefix; the exported targets file names
#      tally::tally_shared and tally::tally_static and nothing internal (tally_warnings);
#   2. a consumer project (consumer/) finds it with find_package(tally), links tally::tally and
#      tally::tally_static, and both programs write their report and trace at exit;
#   3. the same program built with `pkg-config --cflags --libs tally` (the .pc file is
#      relocatable: prefix from ${pcfiledir}) runs and writes its report;
#   4. tally added to another project with add_subdirectory (subproject/): no tests,
#      benchmarks, samples or -Werror come with it, and tally::tally links.
#
# usage: check.sh BUILD_DIR SOURCE_DIR WORK_DIR CC CMAKE
set -u
build=$1 src=$2 work=$3 cc=$4 cmake=$5
fail=0 pass=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
run() { # run LOG CMD...: quiet unless it fails
    log=$1
    shift
    if "$@" >"$log" 2>&1; then return 0; fi
    echo "---- $* (log $log):"
    tail -30 "$log"
    return 1
}
writes_report() { # writes_report NAME PROGRAM [VAR=VALUE...]: it runs, writes its report and trace
    name=$1 prog=$2
    shift 2
    out=$work/out-$name
    mkdir -p "$out"
    if env "$@" TALLY_OUTPUT_DIR="$out" TALLY_NAME=consumer "$prog" &&
        ls "$out"/consumer-rank0.*.trace.json.gz >/dev/null 2>&1 &&
        grep -q '"step"' "$out"/consumer-rank0.*.report.json; then
        ok "$name runs and writes its report (with the step iterations) and trace"
    else
        bad "$name: no report or trace in $out: $(ls "$out")"
    fi
}
build_project() { # build_project NAME SOURCE_DIR TARGET [-DVAR=VALUE...]: configure and build into $work/NAME-build
    name=$1 dir=$2 target=$3
    shift 3
    run "$work/$name-configure.log" "$cmake" -S "$dir" -B "$work/$name-build" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release "$@" &&
        run "$work/$name-build.log" "$cmake" --build "$work/$name-build" --target "$target"
}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

# 1. install
if run "$work/install.log" "$cmake" --install "$build" --prefix "$prefix"; then
    ok "cmake --install into $prefix"
else
    bad "cmake --install failed"
    echo "install: $pass passed, $fail failed"
    exit 1
fi
config=$(find "$prefix" -name tallyConfig.cmake | head -n 1)
pc=$(find "$prefix" -name tally.pc | head -n 1)
[ -n "$config" ] && ok "installed $config" || bad "no tallyConfig.cmake under $prefix"
[ -n "$pc" ] && ok "installed $pc" || bad "no tally.pc under $prefix"
targets=$(dirname "${config:-/nonexistent}")/tallyTargets.cmake
if [ -f "$targets" ]; then
    grep -q "tally::tally_shared" "$targets" && grep -q "tally::tally_static" "$targets" &&
        ok "tallyTargets.cmake exports tally::tally_shared and tally::tally_static" ||
        bad "tallyTargets.cmake lacks tally::tally_shared or tally::tally_static"
    if grep -n "warnings" "$(dirname "$targets")"/tallyTargets*.cmake; then
        bad "the exported targets name tally's internal warnings target (above)"
    else
        ok "the exported targets name nothing internal"
    fi
else
    bad "no $targets"
fi

# 2. find_package(tally): shared and static
cb=$work/consumer-build
if build_project consumer "$src/tests/install/consumer" all -DCMAKE_PREFIX_PATH="$prefix"; then
    ok "find_package(tally) and a build against tally::tally and tally::tally_static"
    writes_report consumer_shared "$cb/consumer_shared"
    writes_report consumer_static "$cb/consumer_static"
else
    bad "the find_package(tally) consumer does not configure or build"
fi

# 3. pkg-config
if [ -n "$pc" ] && command -v pkg-config >/dev/null; then
    pcdir=$(dirname "$pc")
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs tally)
    libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir tally)
    # shellcheck disable=SC2086
    if run "$work/pkg-config.log" "$cc" "$src/tests/install/consumer/consumer.c" $flags \
            -o "$work/consumer_pc"; then
        writes_report consumer_pc "$work/consumer_pc" LD_LIBRARY_PATH="$libdir"
    else
        bad "cc with pkg-config's flags ($flags) failed"
    fi
else
    bad "pkg-config or tally.pc missing"
fi

# 4. tally as a subproject
sb=$work/subproject-build
if build_project subproject "$src/tests/install/subproject" parent_app -DTALLY_SOURCE="$src"; then
    ok "add_subdirectory(tally): no tests, benchmarks, samples or -Werror; tally::tally links"
    grep -q -- "-Werror" "$sb/tally/lib/CMakeFiles/tally_shared.dir/flags.make" 2>/dev/null &&
        bad "the subproject build compiles libtally with -Werror" || true
else
    bad "tally as a subproject does not configure or build"
fi

echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
