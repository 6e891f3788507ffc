# Tests of the report readers (tools/ingest/read_*.c). Included from tests/CMakeLists.txt,
# so CMAKE_CURRENT_SOURCE_DIR is tests/.
if(TARGET tally_readers)
  tally_add_unit_test(test_report_readers
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_report_readers.c
    LIBS tally_readers)

  # The hand-written tally report fixtures must match the schema the collector follows
  # (the invalid-version one must not).
  add_test(NAME report_readers_fixture_schema
    COMMAND ${TALLY_PYTHON} -c
      "import json,sys,jsonschema; s=json.load(open(sys.argv[1])); jsonschema.validate(json.load(open(sys.argv[2])), s); ok=False\ntry: jsonschema.validate(json.load(open(sys.argv[3])), s)\nexcept jsonschema.ValidationError: ok=True\nsys.exit(0 if ok else 'the invalid-version fixture validates')"
      ${PROJECT_SOURCE_DIR}/schema/tally-report.schema.json
      ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tally-report-v1.json
      ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tally-report-v2.json)
endif()
