# Tests of the render stage (tools/render: tally_render). Included from tests/unit/CMakeLists.txt.
#   test_render   escaping, and the HTML and Markdown reports of synthetic aggregates (hostile
#                 names, section order, determinism, size bounds)
#   test_term     what the command prints on a terminal: control characters escaped (term.c)
#   test_labels   labels (labels.c) and console tables on the corpus's real kernel and op names
foreach(t render term labels)
  tally_add_unit_test(test_${t} SOURCES test_${t}.c LIBS tally_render LABELS render)
endforeach()
