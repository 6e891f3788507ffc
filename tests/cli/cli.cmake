# CLI tests: golden cases (tests/cli/cases) and the corpus sweep.
add_test(NAME cli_cases
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run-cases.sh $<TARGET_FILE:tally_cli>
          ${CMAKE_CURRENT_SOURCE_DIR}/cli/cases ${TALLY_CORPUS} ${PROJECT_SOURCE_DIR})
add_test(NAME corpus_sweep
  COMMAND ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/corpus/sweep.py $<TARGET_FILE:tally_cli> ${TALLY_CORPUS})
set_tests_properties(corpus_sweep PROPERTIES TIMEOUT 900)
# Every kind of output path, the command line, help and terminal escaping (issue 9).
add_test(NAME cli_outputs
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/outputs.sh $<TARGET_FILE:tally_cli> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_outputs PROPERTIES TIMEOUT 300)
# The man page and completions follow `tally help`, and install.
add_test(NAME cli_manpage
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/manpage.sh $<TARGET_FILE:tally_cli> ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
