# The report readers (tally report, FramePack, Inferix): small JSON documents read
# with jansson's DOM into a per-rank profile; and partial aggregates, read into
# session results. Included from tools/CMakeLists.txt, so CMAKE_CURRENT_SOURCE_DIR
# is tools/.
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
add_library(tally_readers STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/read_tally_report.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/read_framepack.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/read_inferix.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/profile.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/calltree.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/kernel_class.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/session.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/partial_fields.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/read_partial.c)
target_include_directories(tally_readers PUBLIC
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest ${PROJECT_SOURCE_DIR}/lib)
target_link_libraries(tally_readers
  PUBLIC PkgConfig::JANSSON tally_static m
  PRIVATE tally_warnings)
