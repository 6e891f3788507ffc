# Tests of the render stage (tools/render: tally_render): escaping, and the
# HTML and Markdown reports of synthetic aggregates (hostile names, section
# order, determinism, size bounds). Included from tests/CMakeLists.txt, so
# CMAKE_CURRENT_SOURCE_DIR is tests/.
if(TARGET tally_render)
  tally_add_unit_test(test_render
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_render.c
    LIBS tally_render tally_analyze
    LABELS render)
endif()
# What the command prints on a terminal: control characters escaped (term.c).
if(TARGET tally_analyze)
  tally_add_unit_test(test_term
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_term.c
    LIBS tally_analyze
    LABELS render)
endif()

# Labels (tools/render/labels.c) and console tables on the corpus's real
# kernel and op names (ingest reads them, so tally_inputs too).
if(TARGET tally_render)
  tally_add_unit_test(test_labels
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_labels.c
    LIBS tally_render tally_analyze
    LABELS render)
endif()
