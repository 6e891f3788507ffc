# Tests of the analysis stage (tools/analyze: tally_analyze). Included from
# tests/unit/CMakeLists.txt; the command-level analysis tests are in tests/analysis.
foreach(t intervals session waits collbw shapes telemetry gpu_order)
  tally_add_unit_test(test_${t} SOURCES test_${t}.c LIBS tally_analyze LABELS analysis)
endforeach()
# the rules' and stragglers' sentences are read as render writes their numbers (text_numbers.h);
# the docs' tables are written by render from analyze's tables
foreach(t rules stragglers docs)
  tally_add_unit_test(test_${t} SOURCES test_${t}.c LIBS tally_render LABELS analysis)
endforeach()
# the call tree: nesting into paths, the cap, partials, the merge across ranks (and the page's note)
tally_add_unit_test(test_calltree SOURCES test_calltree.c LIBS tally_render LABELS analysis)
# the 100,000-rank case: a guard against a quadratic straggler analysis (it took 813 s)
set_tests_properties(test_stragglers PROPERTIES TIMEOUT 120)
# 300,000 GPU streams of one rank: a guard against a quadratic merge (200,000 took 112 s)
set_tests_properties(test_session PROPERTIES TIMEOUT 60)
