# The collector sample: tally_sample_pipeline, a simulated video-diffusion
# pipeline instrumented with libtally (what `make demo` runs), and its smoke
# test. Included from samples/CMakeLists.txt, so CMAKE_CURRENT_SOURCE_DIR is samples/.
set(TALLY_SAMPLE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/collector)

add_executable(tally_sample_pipeline ${TALLY_SAMPLE_DIR}/pipeline.c)
target_link_libraries(tally_sample_pipeline PRIVATE tally::tally Threads::Threads m tally_warnings)

if(TALLY_BUILD_TESTS)
  # The top level calls enable_testing() only after adding samples/, and ctest
  # collects tests only from directories where testing was enabled when they
  # were added (a fresh configure without this line lists none of them).
  enable_testing()
  add_test(NAME sample_demo_runs
    COMMAND sh ${TALLY_SAMPLE_DIR}/check-demo.sh
      ${TALLY_SAMPLE_DIR}/launch.sh $<TARGET_FILE:tally_sample_pipeline>
      ${CMAKE_CURRENT_BINARY_DIR}/sample_demo_runs)
endif()
