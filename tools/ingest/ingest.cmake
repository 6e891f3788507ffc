# The ingest stage: streaming readers of trace inputs. Included from tools/CMakeLists.txt,
# so CMAKE_CURRENT_SOURCE_DIR is tools/ and headers are included as "ingest/<file>.h".
add_library(tally_ingest STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/trace_stream.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/gzip_source.c)
target_include_directories(tally_ingest PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tally_ingest PUBLIC ZLIB::ZLIB PRIVATE tally_warnings)
