# CLI tests: golden cases (tests/cli/cases) and the corpus sweep.
add_test(NAME cli_cases
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run-cases.sh $<TARGET_FILE:tally_cli>
          ${CMAKE_CURRENT_SOURCE_DIR}/cli/cases ${TALLY_CORPUS} ${PROJECT_SOURCE_DIR})
add_test(NAME corpus_sweep
  COMMAND ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/corpus/sweep.py $<TARGET_FILE:tally_cli> ${TALLY_CORPUS})
set_tests_properties(corpus_sweep PROPERTIES TIMEOUT 900)
