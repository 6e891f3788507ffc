# The ingest stage: streaming readers of trace inputs. Included from tools/CMakeLists.txt,
# so CMAKE_CURRENT_SOURCE_DIR is tools/ and headers are included as "ingest/<file>.h".
add_library(tally_ingest STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/trace_stream.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/json_scan.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest/gzip_source.c)
target_include_directories(tally_ingest PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tally_ingest PUBLIC ZLIB::ZLIB PRIVATE tally_warnings)

# isa-l's igzip inflates gzip several times faster than zlib (Debian libisal-dev); zlib stays
# the fallback, so the package is optional. -DTALLY_WITH_ISAL=OFF builds without it.
option(TALLY_WITH_ISAL "Inflate gzip with isa-l when it is found" ON)
if(TALLY_WITH_ISAL)
  find_path(TALLY_ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
  find_library(TALLY_ISAL_LIBRARY isal)
  if(TALLY_ISAL_INCLUDE_DIR AND TALLY_ISAL_LIBRARY)
    message(STATUS "tally: gzip inflate with isa-l (${TALLY_ISAL_LIBRARY})")
    target_compile_definitions(tally_ingest PRIVATE TALLY_HAVE_ISAL)
    target_include_directories(tally_ingest PRIVATE ${TALLY_ISAL_INCLUDE_DIR})
    target_link_libraries(tally_ingest PUBLIC ${TALLY_ISAL_LIBRARY})
    set(TALLY_HAVE_ISAL ON CACHE INTERNAL "tally_ingest inflates with isa-l")
  else()
    message(STATUS "tally: isa-l not found (libisal-dev): gzip inflate with zlib")
    set(TALLY_HAVE_ISAL OFF CACHE INTERNAL "tally_ingest inflates with isa-l")
  endif()
else()
  set(TALLY_HAVE_ISAL OFF CACHE INTERNAL "tally_ingest inflates with isa-l")
endif()
