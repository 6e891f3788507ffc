# Tests of the ingest stage (tools/ingest). Included from tests/CMakeLists.txt, so
# CMAKE_CURRENT_SOURCE_DIR is tests/.
if(TARGET tally_ingest)
  tally_add_unit_test(test_trace_stream
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_trace_stream.c
    LIBS tally_ingest)
  tally_add_unit_test(test_json_scan
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_json_scan.c
    LIBS tally_ingest)

  # The expected event counts are checked in; this keeps them true to the corpus: it re-runs
  # the independent Python count and fails with a diff when the corpus has changed.
  add_test(NAME trace_stream_corpus_counts
    COMMAND ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tools/count_events.py
            --check ${CMAKE_CURRENT_SOURCE_DIR}/unit/corpus_event_counts.txt ${TALLY_CORPUS})
endif()

# Format sniffing by streamed top-level keys (tools/ingest/sniff.c); self and inclusive time
# (tools/ingest/nesting.c).
if(TARGET tally_inputs)
  tally_add_unit_test(test_nesting
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_nesting.c
    LIBS tally_inputs)
  tally_add_unit_test(test_sniff
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_sniff.c
    LIBS tally_inputs)
endif()
