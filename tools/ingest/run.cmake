# Discovery, format sniffing and the run (inputs -> profiles): tally_inputs.
# Included from tools/CMakeLists.txt after ingest.cmake and readers.cmake.
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
add_library(tally_inputs STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/binner.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/discover.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/ingest.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/read_trace.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/nesting.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/run.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/sniff.c)
target_include_directories(tally_inputs PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/ingest ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tally_inputs PUBLIC tally_readers tally_ingest PkgConfig::LIBARCHIVE PkgConfig::JANSSON
  Threads::Threads PRIVATE tally_warnings)
