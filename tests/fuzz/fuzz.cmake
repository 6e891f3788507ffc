# Fuzzing of the ingest readers. Included from tests/CMakeLists.txt (CMAKE_CURRENT_SOURCE_DIR
# is tests/).
#
# Always: fuzz_trace_stream_regress, the fuzz target's input function behind a small main(),
# built with the normal compiler and run by ctest over every file of the corpus, so the fuzz
# code path (and its "same result however the bytes arrive" check) runs in every build.
# With -DTALLY_FUZZ=ON and clang: fuzz_trace_stream, the libFuzzer binary, with the ingest
# sources compiled into it so that they carry the fuzzer's coverage instrumentation.
if(TARGET tally_ingest)
  add_executable(fuzz_trace_stream_regress ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_stream.c)
  target_compile_definitions(fuzz_trace_stream_regress PRIVATE TALLY_FUZZ_DRIVER)
  target_link_libraries(fuzz_trace_stream_regress PRIVATE tally_ingest tally_warnings)
  add_test(NAME fuzz_trace_stream_regress COMMAND fuzz_trace_stream_regress ${TALLY_CORPUS}
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/trace_stream ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/ingest)

  if(TALLY_FUZZ)
    if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "TALLY_FUZZ needs clang (configure with -DCMAKE_C_COMPILER=clang)")
    endif()
    get_target_property(_tally_ingest_sources tally_ingest SOURCES)
    add_executable(fuzz_trace_stream ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_stream.c
      ${_tally_ingest_sources})
    target_include_directories(fuzz_trace_stream PRIVATE ${PROJECT_SOURCE_DIR}/tools)
    target_compile_options(fuzz_trace_stream PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(fuzz_trace_stream PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_trace_stream PRIVATE ZLIB::ZLIB tally_warnings)
    if(TALLY_HAVE_ISAL) # the same gzip decoder as tally_ingest (tools/ingest/ingest.cmake)
      target_compile_definitions(fuzz_trace_stream PRIVATE TALLY_HAVE_ISAL)
      target_include_directories(fuzz_trace_stream PRIVATE ${TALLY_ISAL_INCLUDE_DIR})
      target_link_libraries(fuzz_trace_stream PRIVATE ${TALLY_ISAL_LIBRARY})
    endif()
  endif()
endif()

# The report readers and one input end to end (ingest + analysis): the same
# pattern, a corpus regression run in every build and libFuzzer binaries with
# TALLY_FUZZ. The fuzzers link the libraries as built; with TALLY_FUZZ the
# whole tree is built with -fsanitize=fuzzer-no-link (see the top level), so
# the libraries carry coverage instrumentation too.
if(TARGET tally_analyze)
  foreach(target report_readers ingest)
    add_executable(fuzz_${target}_regress ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${target}.c
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/driver.c)
    target_link_libraries(fuzz_${target}_regress PRIVATE tally_analyze tally_warnings)
    add_test(NAME fuzz_${target}_regress COMMAND fuzz_${target}_regress ${TALLY_CORPUS}
      ${PROJECT_SOURCE_DIR}/tests/fixtures ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/ingest)
    if(TALLY_FUZZ)
      add_executable(fuzz_${target} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_${target}.c)
      target_compile_options(fuzz_${target} PRIVATE -fsanitize=fuzzer,address,undefined -g)
      target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer,address,undefined)
      target_link_libraries(fuzz_${target} PRIVATE tally_analyze tally_warnings)
    endif()
  endforeach()
endif()

# The partial-aggregate reader, and what a partial it accepts goes through:
# finish, render, write back (round trip). Seeds in tests/fuzz/seeds/partial.
if(TARGET tally_render)
  add_executable(fuzz_partial_regress ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_partial.c
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/driver.c)
  target_link_libraries(fuzz_partial_regress PRIVATE tally_render tally_analyze tally_warnings)
  add_test(NAME fuzz_partial_regress COMMAND fuzz_partial_regress
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/partial ${TALLY_CORPUS}/derived-edge-cases)
  if(TALLY_FUZZ)
    add_executable(fuzz_partial ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_partial.c)
    target_compile_options(fuzz_partial PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(fuzz_partial PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_partial PRIVATE tally_render tally_analyze tally_warnings)
  endif()
endif()
