# The power benchmark of `tally compare` (see bench/README.md): detection and false-regression
# rates on simulated runs, through the real comparison code. Included from bench/CMakeLists.txt.
if(TARGET tally_analyze)
  add_executable(bench_compare_power ${CMAKE_CURRENT_SOURCE_DIR}/compare_power.c)
  target_include_directories(bench_compare_power PRIVATE ${PROJECT_SOURCE_DIR}/tools/analyze)
  target_link_libraries(bench_compare_power PRIVATE tally_analyze m tally_warnings)
  if(TALLY_BUILD_TESTS)
    # Runs once, tiny: only that the table is printed (its rates need the full run).
    add_test(NAME bench_compare_power_smoke COMMAND bench_compare_power --quick)
    set_tests_properties(bench_compare_power_smoke PROPERTIES LABELS "compare;nosan"
      PASS_REGULAR_EXPRESSION "\\| all \\| all \\|")
  endif()
endif()
