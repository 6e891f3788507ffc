# Tests of the ingest stage (tools/ingest: tally_ingest). Included from tests/unit/CMakeLists.txt.
tally_add_unit_test(test_trace_stream SOURCES test_trace_stream.c LIBS tally_ingest)
tally_add_unit_test(test_json_scan SOURCES test_json_scan.c LIBS tally_ingest)
# The stable sort that is linear on sorted input (tools/ingest/sort_stable.c).
tally_add_unit_test(test_sort_stable SOURCES test_sort_stable.c LIBS tally_ingest)

# The expected event counts are checked in; this keeps them true to the corpus: it re-runs
# the independent Python count and fails with a diff when the corpus has changed.
add_test(NAME trace_stream_corpus_counts
  COMMAND ${TALLY_PYTHON} ${TALLY_TESTS_DIR}/tools/count_events.py
          --check ${CMAKE_CURRENT_SOURCE_DIR}/corpus_event_counts.txt ${TALLY_CORPUS})

# Format sniffing by streamed top-level keys (tools/ingest/sniff.c).
tally_add_unit_test(test_sniff SOURCES test_sniff.c LIBS tally_ingest)

# An input's identity, settled once (tools/ingest/identity.c, run.c, settle.c).
tally_add_unit_test(test_identity SOURCES test_identity.c LIBS tally_ingest)

# The rank from an input's name (tools/ingest/run.c, tl_rank_from_path).
tally_add_unit_test(test_rank_from_path SOURCES test_rank_from_path.c LIBS tally_ingest)

# The partial aggregate format (tools/ingest/partial_fields.c): its reader (ingest), its writer
# (render) and schema/tally-partial.schema.json against one another.
tally_add_unit_test(test_partial SOURCES test_partial.c LIBS tally_render)

# The report readers (tools/ingest/read_*.c).
tally_add_unit_test(test_report_readers SOURCES test_report_readers.c LIBS tally_ingest)

# The hand-written tally report fixtures must match the schema the collector follows
# (the invalid-version one must not).
add_test(NAME report_readers_fixture_schema
  COMMAND ${TALLY_PYTHON} -c
    "import json,sys,jsonschema; s=json.load(open(sys.argv[1])); jsonschema.validate(json.load(open(sys.argv[2])), s); ok=False\ntry: jsonschema.validate(json.load(open(sys.argv[3])), s)\nexcept jsonschema.ValidationError: ok=True\nsys.exit(0 if ok else 'the invalid-version fixture validates')"
    ${PROJECT_SOURCE_DIR}/schema/tally-report.schema.json
    ${TALLY_TESTS_DIR}/fixtures/tally-report-v1.json
    ${TALLY_TESTS_DIR}/fixtures/tally-report-v2.json)

# Self and inclusive time (tools/ingest/nesting.c): the sorted ring and the heap agree.
tally_add_unit_test(test_nesting SOURCES test_nesting.c LIBS tally_ingest)
