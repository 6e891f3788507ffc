# bench_collector_overhead: ns per tally_begin/tally_end pair in every
# configuration (trace on/off, over the event budget, 1 and 2 threads, disabled
# at run time, compiled out), beside a clock_gettime pair measured in the same
# run. Linked with the static library so that the calls are direct, as in a
# program built with libtally.a (the shared library adds a PLT jump per call).
# Included from bench/CMakeLists.txt.
add_executable(bench_collector_overhead
  ${CMAKE_CURRENT_SOURCE_DIR}/collector_overhead.c
  ${CMAKE_CURRENT_SOURCE_DIR}/collector_overhead_off.c)
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/collector_overhead_off.c
  PROPERTIES COMPILE_DEFINITIONS TALLY_DISABLE)
target_link_libraries(bench_collector_overhead PRIVATE tally_static Threads::Threads tally_warnings)

if(TALLY_BUILD_TESTS)
  # See samples/collector/collector.cmake: the top level enables testing after
  # adding bench/, too late for the tests of this directory.
  enable_testing()
  # A smoke test only: it checks that every configuration runs and reports, and
  # asserts nothing about the timings (timed tests are not allowed).
  add_test(NAME bench_collector_overhead_smoke COMMAND bench_collector_overhead --quick)
  set_tests_properties(bench_collector_overhead_smoke PROPERTIES LABELS "nosan")
endif()
