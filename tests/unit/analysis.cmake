# Tests of the analysis stage (tools/analyze: tally_analyze). Included from
# tests/unit/CMakeLists.txt; the command-level analysis tests are in tests/analysis.
foreach(t intervals session rules stragglers waits collbw shapes telemetry docs gpu_order)
  tally_add_unit_test(test_${t} SOURCES test_${t}.c LIBS tally_analyze LABELS analysis)
endforeach()
# the call tree: nesting into paths, the cap, partials, the merge across ranks (and the page's note)
tally_add_unit_test(test_calltree SOURCES test_calltree.c LIBS tally_render LABELS analysis)
# the 100,000-rank case: a guard against a quadratic straggler analysis (it took 813 s)
set_tests_properties(test_stragglers PROPERTIES TIMEOUT 120)
# 300,000 GPU streams of one rank: a guard against a quadratic merge (200,000 took 112 s)
set_tests_properties(test_session PROPERTIES TIMEOUT 60)
