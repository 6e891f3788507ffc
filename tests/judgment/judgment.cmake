# The judgment set: real and generated traces, each with the findings that must appear and
# those that must not (tests/judgment/cases.json, run by run.py). Included from
# tests/CMakeLists.txt, so CMAKE_CURRENT_SOURCE_DIR is tests/.
if(TARGET tally_cli AND TALLY_PYTHON)
  add_test(NAME judgment
    COMMAND ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/judgment/run.py
      $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${CMAKE_CURRENT_SOURCE_DIR}/judgment/cases.json
      ${CMAKE_CURRENT_BINARY_DIR}/judgment)
  set_tests_properties(judgment PROPERTIES LABELS "analysis;judgment")
endif()
