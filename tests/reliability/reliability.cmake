# The reliability suite (label "reliability"): small replays of the attacks of
# issue 10 on ingest -- reports past 64 KiB, damaged rank files in a directory
# and in a compare, FIFOs, stdin and process substitution, duplicate paths,
# 100k distinct names under a low budget and RLIMIT_AS. Each case asserts no
# crash, no hang (timeouts), bounded memory, the warnings and the exit codes.
# Included from tests/CMakeLists.txt, so CMAKE_CURRENT_SOURCE_DIR is tests/.
add_executable(tally_rel_gen_loop ${CMAKE_CURRENT_SOURCE_DIR}/reliability/gen_loop.c)
target_link_libraries(tally_rel_gen_loop PRIVATE tally::tally tally_warnings)

find_program(TALLY_BASH bash REQUIRED)
add_test(NAME reliability_ingest
  COMMAND ${TALLY_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/reliability/ingest.sh
          $<TARGET_FILE:tally_cli> $<TARGET_FILE:tally_rel_gen_loop> ${TALLY_CORPUS} ${TALLY_PYTHON})
set_tests_properties(reliability_ingest PROPERTIES LABELS reliability TIMEOUT 600)

find_program(TALLY_PRLIMIT prlimit)
if(TALLY_PRLIMIT)
  add_test(NAME reliability_memory
    COMMAND ${TALLY_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/reliability/memory.sh
            $<TARGET_FILE:tally_cli> ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reliability/gen_names.py)
  set_tests_properties(reliability_memory PROPERTIES LABELS "reliability;nosan" TIMEOUT 600)
endif()
