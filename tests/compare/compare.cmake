# Tests of `tally compare` (tools/analyze/compare.c, significance.c, tools/cmd_compare.c,
# tools/render/compare_*.c). Included from tests/CMakeLists.txt, so
# CMAKE_CURRENT_SOURCE_DIR is tests/. Every test name starts with compare_ (ctest -R compare).
set(_cmp_dir ${CMAKE_CURRENT_SOURCE_DIR}/compare)
set(_cmp_work ${CMAKE_CURRENT_BINARY_DIR}/compare)
set(_cmp_schema ${PROJECT_SOURCE_DIR}/schema/tally-compare.schema.json)

if(TARGET tally_analyze)
  # The statistics against independently derived values (mwu_reference.py, tables).
  tally_add_unit_test(compare_significance
    SOURCES ${_cmp_dir}/test_significance.c
    LIBS tally_analyze
    LABELS compare)
  # Matching, verdicts, --normalize, --metric and the correction on synthetic aggregates.
  tally_add_unit_test(compare_matching
    SOURCES ${_cmp_dir}/test_compare.c
    LIBS tally_analyze
    LABELS compare)
  # The reference values still come out of the reference script.
  add_test(NAME compare_reference_values COMMAND ${TALLY_PYTHON} ${_cmp_dir}/mwu_reference.py)
  set_tests_properties(compare_reference_values PROPERTIES LABELS compare
    PASS_REGULAR_EXPRESSION "exact x vs y: U=4.0 p=0.051948051948051951")
endif()

if(TARGET tally_cli)
  # Exit codes: usage, no input, unwritable output.
  add_test(NAME compare_cli_errors
    COMMAND sh ${_cmp_dir}/errors.sh $<TARGET_FILE:tally_cli> ${_cmp_work}/errors)
  # HTA's own comparison inputs: added, removed and changed names; valid outputs.
  add_test(NAME compare_corpus_hta
    COMMAND sh ${_cmp_dir}/corpus.sh $<TARGET_FILE:tally_cli> ${TALLY_PYTHON} ${_cmp_schema}
      ${TALLY_CORPUS} ${_cmp_work}/corpus)
  # Names that try to escape HTML, XML and Markdown.
  add_test(NAME compare_hostile_names
    COMMAND sh ${_cmp_dir}/hostile.sh $<TARGET_FILE:tally_cli> ${TALLY_PYTHON} ${_cmp_schema}
      ${_cmp_work}/hostile)
  # FramePack, one report a side, vae_decode 9.5x slower: an untested large increase fails the gate.
  add_test(NAME compare_framepack_untested
    COMMAND sh ${_cmp_dir}/framepack.sh $<TARGET_FILE:tally_cli> ${TALLY_PYTHON} ${_cmp_schema}
      ${TALLY_CORPUS} ${_cmp_work}/framepack)
  # Sessions of one rank: the per-session table, the drift finding, compare --sessions.
  add_test(NAME compare_sessions_drift
    COMMAND sh ${_cmp_dir}/drift.sh $<TARGET_FILE:tally_cli> ${TALLY_PYTHON} ${TALLY_CORPUS} ${_cmp_work}/drift)
  set_tests_properties(compare_cli_errors compare_corpus_hta compare_hostile_names compare_framepack_untested
    compare_sessions_drift PROPERTIES LABELS compare)

  if(TARGET bench_gen_kineto_trace)
    # One kernel 30 % slower: the only regression, --fail-on-regression exits 1; valid outputs.
    add_test(NAME compare_generated_regression
      COMMAND sh ${_cmp_dir}/generated.sh $<TARGET_FILE:tally_cli> $<TARGET_FILE:bench_gen_kineto_trace>
        ${TALLY_PYTHON} ${_cmp_schema} ${_cmp_work}/generated)
    # A/A for five seeds: no regression, exit 0.
    add_test(NAME compare_generated_aa
      COMMAND sh ${_cmp_dir}/aa.sh $<TARGET_FILE:tally_cli> $<TARGET_FILE:bench_gen_kineto_trace>
        ${TALLY_PYTHON} ${_cmp_work}/aa)
    set_tests_properties(compare_generated_regression compare_generated_aa PROPERTIES LABELS compare)
  endif()

  if(TARGET tally_sample_pipeline)
    # The collector sample, baseline vs optimized: attention about halves against the unchanged
    # mlp stage (robust to machine load), and is an improvement when the machine is steady.
    add_test(NAME compare_collector_sample
      COMMAND sh ${_cmp_dir}/sample.sh $<TARGET_FILE:tally_cli> $<TARGET_FILE:tally_sample_pipeline>
        ${PROJECT_SOURCE_DIR}/samples/collector/launch.sh ${TALLY_PYTHON} ${_cmp_schema} ${_cmp_work}/sample)
    # The demo's story (make demo): slower vae_decode fails the gate, faster attention, the
    # count change named, rank 3 the straggler, A/A passes, --sessions agrees.
    add_test(NAME compare_demo_story
      COMMAND sh ${_cmp_dir}/demo.sh $<TARGET_FILE:tally_cli> $<TARGET_FILE:tally_sample_pipeline>
        ${PROJECT_SOURCE_DIR}/samples/collector/launch.sh ${TALLY_PYTHON} ${_cmp_schema} ${_cmp_work}/demo)
    set_tests_properties(compare_collector_sample compare_demo_story PROPERTIES LABELS compare)
    # Wall-clock stages: run alone, so that this suite's other tests do not load the cores under it.
    set_tests_properties(compare_demo_story PROPERTIES RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
  endif()
endif()
