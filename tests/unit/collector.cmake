# The collector's tests (libtally), label "collector": `ctest -L collector`.
#
#   module tests    test_histogram, test_stats, test_json_writer, test_config, test_thread:
#                   the library's internals, linked statically with lib/ on the
#                   include path
#   end to end      test_collector, test_threads, test_fork, test_nvml, test_signals,
#                   test_outputs, test_dlclose, test_sampler, test_blocks: scenarios run in forked children through the
#                   public API of the shared library, their files checked with
#                   jansson/zlib and tests/collector/check_outputs.py (schema
#                   validation with Debian's python3 + jsonschema)
#   compiled out    test_disabled: -DTALLY_DISABLE, not linked with libtally
foreach(name histogram stats json_writer config thread)
  tally_add_unit_test(test_${name} SOURCES test_${name}.c
    LIBS tally_static PkgConfig::JANSSON m LABELS collector)
  target_include_directories(test_${name} PRIVATE ${PROJECT_SOURCE_DIR}/lib)
endforeach()
target_compile_definitions(test_config PRIVATE TALLY_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Helpers of the end-to-end tests: fork a scenario, read its files, run the checker.
add_library(tally_collector_test_util STATIC collector_test_util.c)
target_link_libraries(tally_collector_test_util
  PUBLIC tally_test_support PkgConfig::CMOCKA PkgConfig::JANSSON PRIVATE tally_warnings)
target_compile_definitions(tally_collector_test_util PRIVATE
  TALLY_SOURCE_DIR="${PROJECT_SOURCE_DIR}" TALLY_BINARY_DIR="${PROJECT_BINARY_DIR}"
  TALLY_PYTHON_EXE="${TALLY_PYTHON}")

# A fake libnvidia-ml with fixed readings, dlopen'ed through TALLY_NVML_LIBRARY.
add_library(tally_fake_nvml SHARED fake_nvml.c)
target_link_libraries(tally_fake_nvml PRIVATE tally_warnings)
# The same without nvmlDeviceGetComputeRunningProcesses_v3 (a driver before CUDA 11).
add_library(tally_fake_nvml_v1 SHARED fake_nvml.c)
target_link_libraries(tally_fake_nvml_v1 PRIVATE tally_warnings)
target_compile_definitions(tally_fake_nvml_v1 PRIVATE FAKE_NVML_NO_V3)

foreach(name collector threads fork nvml outputs signals sampler blocks)
  tally_add_unit_test(test_${name} SOURCES test_${name}.c
    LIBS tally::tally tally_collector_test_util Threads::Threads m LABELS collector)
  set_tests_properties(test_${name} PROPERTIES TIMEOUT 120)
endforeach()
target_compile_definitions(test_nvml PRIVATE TALLY_FAKE_NVML="$<TARGET_FILE:tally_fake_nvml>"
  TALLY_FAKE_NVML_V1="$<TARGET_FILE:tally_fake_nvml_v1>")
add_dependencies(test_nvml tally_fake_nvml tally_fake_nvml_v1)
target_compile_definitions(test_sampler PRIVATE TALLY_FAKE_NVML="$<TARGET_FILE:tally_fake_nvml>")
add_dependencies(test_sampler tally_fake_nvml)
target_compile_definitions(test_blocks PRIVATE TALLY_FAKE_NVML="$<TARGET_FILE:tally_fake_nvml>")
add_dependencies(test_blocks tally_fake_nvml)

# dlopen/dlclose of libtally, then SIGTERM (issue 26): not linked with libtally.
tally_add_unit_test(test_dlclose SOURCES test_dlclose.c
  LIBS tally_collector_test_util ${CMAKE_DL_LIBS} LABELS collector)
set_tests_properties(test_dlclose PROPERTIES TIMEOUT 120)
target_compile_definitions(test_dlclose PRIVATE TALLY_SHARED_LIB="$<TARGET_FILE:tally_shared>"
  TALLY_FAKE_NVML="$<TARGET_FILE:tally_fake_nvml>")
add_dependencies(test_dlclose tally_shared tally_fake_nvml)

# The end-to-end tests also run under ThreadSanitizer (label "tsan"):
# `make test-tsan` builds only these (target tally_tsan_tests) with
# -DTALLY_SANITIZE_THREAD=ON and runs `ctest -L tsan`. A data race in a
# scenario's child makes it exit 66, which fails the test.
add_custom_target(tally_tsan_tests DEPENDS test_collector test_threads test_fork test_nvml
  test_outputs test_signals test_dlclose test_sampler test_blocks tally_fake_nvml tally_fake_nvml_v1
  tally_cli bench_gen_kineto_trace) # and tally report's threads (tests/cluster/threads.sh)
foreach(name collector threads fork nvml outputs signals dlclose sampler blocks)
  set_tests_properties(test_${name} PROPERTIES LABELS "collector;tsan")
endforeach()

# Every API macro with TALLY_DISABLE: compiles, and links without libtally.
tally_add_unit_test(test_disabled SOURCES test_disabled.c LIBS ${CMAKE_DL_LIBS} LABELS collector)
target_include_directories(test_disabled PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(test_disabled PRIVATE TALLY_DISABLE)
