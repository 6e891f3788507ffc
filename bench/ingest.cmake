# Trace ingest benchmark (see bench/README.md). Included from bench/CMakeLists.txt.
#
# bench_gen_kineto_trace: synthetic PyTorch profiler (Kineto) traces, single rank or a
#   whole world, plain or gzip; also the data maker for straggler and compare tests.
# bench_ingest: tally's streaming ingest (end to end, tokenizer alone, .gz, --jobs) beside
#   jansson's DOM loader, Python's json and zcat, measured in the same run.
find_package(PkgConfig REQUIRED)
pkg_check_modules(BENCH_JANSSON REQUIRED IMPORTED_TARGET jansson)

add_executable(bench_gen_kineto_trace ${CMAKE_CURRENT_SOURCE_DIR}/gen_kineto_trace.c)
target_link_libraries(bench_gen_kineto_trace PRIVATE ZLIB::ZLIB m PRIVATE tally_warnings)

# bench_ingest needs the whole input stage (tools/ingest: tally_inputs, which links
# tally_ingest and tally_readers). Without it (a tree where the readers are not in yet),
# only the generator is built.
if(TARGET tally_inputs)
  add_executable(bench_ingest
    ${CMAKE_CURRENT_SOURCE_DIR}/ingest_bench.c
    ${CMAKE_CURRENT_SOURCE_DIR}/gen_kineto_trace.c)
  # The generator is linked in (its main() left out: BENCH_GEN_NO_MAIN) so the benchmark
  # makes its data without looking for another program.
  target_compile_definitions(bench_ingest PRIVATE
    BENCH_GEN_NO_MAIN
    BENCH_DATA_DIR="${CMAKE_BINARY_DIR}/bench-data"
    BENCH_BUILD_TYPE="${CMAKE_BUILD_TYPE}")
  # The memory-per-rank rows run the CLI itself (sessions, analysis and output included).
  if(TARGET tally_cli)
    target_compile_definitions(bench_ingest PRIVATE BENCH_TALLY="$<TARGET_FILE:tally_cli>")
    add_dependencies(bench_ingest tally_cli)
  endif()
  target_include_directories(bench_ingest PRIVATE
    ${PROJECT_SOURCE_DIR}/tools ${PROJECT_SOURCE_DIR}/tools/ingest ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(bench_ingest PRIVATE tally_inputs tally_static PkgConfig::BENCH_JANSSON
    ZLIB::ZLIB Threads::Threads m PRIVATE tally_warnings)

  if(TALLY_BUILD_TESTS)
    # See bench/collector.cmake: testing is enabled after bench/ is added.
    enable_testing()
    # A smoke test only: --quick makes a ~5 MB trace and checks that every reader runs and
    # the table is printed (the program exits non-zero otherwise). It asserts nothing about
    # timings (timed tests are not allowed).
    add_test(NAME bench_ingest_smoke
      COMMAND bench_ingest --quick --data-dir ${CMAKE_CURRENT_BINARY_DIR}/bench-data-smoke)
    set_tests_properties(bench_ingest_smoke PROPERTIES LABELS "nosan")
  endif()
endif()

# bench_simdjson_dur: simdjson's On Demand parser summing "dur", the fastest JSON reader on this
# CPU, as a reference row of bench_ingest. Optional: built when the simdjson package is found.
find_package(simdjson QUIET)
if(simdjson_FOUND)
  enable_language(CXX)
  add_executable(bench_simdjson_dur ${CMAKE_CURRENT_SOURCE_DIR}/simdjson_dur.cpp)
  target_link_libraries(bench_simdjson_dur PRIVATE simdjson::simdjson)
  set_target_properties(bench_simdjson_dur PROPERTIES CXX_STANDARD 17)
  if(TARGET bench_ingest)
    target_compile_definitions(bench_ingest PRIVATE
      BENCH_SIMDJSON="$<TARGET_FILE:bench_simdjson_dur>")
    add_dependencies(bench_ingest bench_simdjson_dur)
  endif()
endif()

# yajl's streaming C parser (Debian libyajl-dev) summing "dur": the other event-at-a-time
# parser. Optional likewise.
pkg_check_modules(BENCH_YAJL QUIET IMPORTED_TARGET yajl)
if(BENCH_YAJL_FOUND AND TARGET bench_ingest)
  target_compile_definitions(bench_ingest PRIVATE BENCH_HAVE_YAJL)
  target_link_libraries(bench_ingest PRIVATE PkgConfig::BENCH_YAJL)
endif()
