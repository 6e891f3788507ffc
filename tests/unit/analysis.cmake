# Tests of the analysis stage (tools/analyze: tally_analyze) and of `tally aggregate` /
# `tally merge` on the shared corpus. Included from tests/CMakeLists.txt, so
# CMAKE_CURRENT_SOURCE_DIR is tests/.
if(TARGET tally_analyze)
  foreach(t intervals session rules stragglers telemetry docs)
    tally_add_unit_test(test_${t}
      SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_${t}.c
      LIBS tally_analyze
      LABELS analysis)
  endforeach()
  # the call tree: nesting into paths, the cap, partials, the merge across ranks (and the page's note)
  if(TARGET tally_render)
    tally_add_unit_test(test_calltree
      SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_calltree.c
      LIBS tally_render tally_analyze
      LABELS analysis)
  endif()
  # the 100,000-rank case: a guard against a quadratic straggler analysis (it took 813 s)
  set_tests_properties(test_stragglers PROPERTIES TIMEOUT 120)
endif()

if(TARGET tally_cli)
  set(_an_work ${CMAKE_CURRENT_BINARY_DIR}/analysis)

  # The aggregate of any split of the inputs, merged in any order and in two levels,
  # is byte-identical to the aggregate of all of them.
  add_test(NAME aggregate_merge_split
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/analysis/merge_split.sh
      $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${_an_work}/merge_split)
  set_tests_properties(aggregate_merge_split PROPERTIES LABELS analysis)

  # The aggregate validates against its schema on several corpus sets, with the numbers
  # a user reads.
  add_test(NAME aggregate_schema
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/analysis/schema_check.sh
      $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${PROJECT_SOURCE_DIR}/schema/tally-aggregate.schema.json
      ${TALLY_PYTHON} ${_an_work}/schema)
  set_tests_properties(aggregate_schema PROPERTIES LABELS analysis)

  # Partials (tally aggregate --partial, merge --partial) validate against their schema, with
  # enums written by name.
  add_test(NAME partial_schema
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/analysis/partial_schema_check.sh
      $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${PROJECT_SOURCE_DIR}/schema/tally-partial.schema.json
      ${TALLY_PYTHON} ${_an_work}/partial_schema ${PROJECT_SOURCE_DIR})
  set_tests_properties(partial_schema PROPERTIES LABELS analysis)

  # Sampled telemetry: crafted libtally and Inferix reports, the corpus Inferix reports
  # and a real run with the fake NVML, checked in summary, aggregate JSON, Markdown, HTML.
  set(_tel_real "")
  if(TARGET tally_sample_pipeline AND TARGET tally_fake_nvml)
    set(_tel_real $<TARGET_FILE:tally_sample_pipeline> $<TARGET_FILE:tally_fake_nvml>)
  endif()
  add_test(NAME telemetry
    COMMAND ${TALLY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/telemetry/check_telemetry.py
      $<TARGET_FILE:tally_cli> ${CMAKE_CURRENT_SOURCE_DIR}/fixtures ${TALLY_CORPUS} ${_an_work}/telemetry ${_tel_real})
  set_tests_properties(telemetry PROPERTIES LABELS analysis)

  # Stragglers on generated traces: a rank slowed by the generator is found, with the
  # kernels it slowed as evidence; a run without one has none.
  if(TARGET bench_gen_kineto_trace)
    add_test(NAME aggregate_stragglers_generated
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/analysis/stragglers_generated.sh
        $<TARGET_FILE:tally_cli> $<TARGET_FILE:bench_gen_kineto_trace> ${TALLY_PYTHON}
        ${_an_work}/stragglers)
    set_tests_properties(aggregate_stragglers_generated PROPERTIES LABELS analysis)
  endif()

  # The GPU breakdown agrees with an independent implementation of DESIGN.md's
  # definitions (tests/reference/gpu_reference.py) on real traces.
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/reference/gpu_reference.py)
    add_test(NAME aggregate_matches_reference
      COMMAND sh -c [=[
set -e
tally=$1 corpus=$2 py=$3 ref=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
for set in hta/trace_filter param-dlrm_kineto-8rank; do
  out="$work/$(echo "$set" | tr / _).json"
  "$tally" aggregate -q "$corpus/$set" -o "$out"
  files=$(find "$corpus/$set" -type f \( -name '*.json' -o -name '*.json.gz' \) | sort)
  "$py" "$ref" --compare-aggregate "$out" $files
done
]=] sh $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${TALLY_PYTHON}
        ${CMAKE_CURRENT_SOURCE_DIR}/reference/gpu_reference.py ${_an_work}/reference)
    set_tests_properties(aggregate_matches_reference PROPERTIES LABELS analysis)
  endif()
endif()
