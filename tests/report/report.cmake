# Tests of the HTML report (`tally report`): its structure against golden
# outlines, its escaping of hostile input, the page in a real browser with
# JavaScript off and on, and its size on big inputs. Each test writes into its
# own folder under tests/report/ of the build tree (screenshots included).
# Included from tests/CMakeLists.txt.
set(TALLY_REPORT_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/report)
set(TALLY_REPORT_OUT ${CMAKE_CURRENT_BINARY_DIR}/report)

# The page's outline (sections, headings, tables, charts) of small fixed inputs
# against tests/report/golden/*.outline (TALLY_REGEN=1 rewrites them), static
# checks of the page, and byte-for-byte determinism.
add_test(NAME report_golden
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/golden_structure.py
          --tally $<TARGET_FILE:tally_cli> --corpus ${TALLY_CORPUS}
          --golden ${TALLY_REPORT_TESTS}/golden --out ${TALLY_REPORT_OUT}/golden)

# Input strings made to break out of HTML, SVG and Markdown. Uses the browser
# when it is installed (to see that no script runs), static checks otherwise.
add_test(NAME report_escaping
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/hostile.py
          --tally $<TARGET_FILE:tally_cli> --out ${TALLY_REPORT_OUT}/escaping)
set_tests_properties(report_escaping PROPERTIES TIMEOUT 300)

# The 8-rank DLRM set in headless Chromium (selenium), JavaScript off and on.
# Skipped (exit 77) when chromium, chromium-driver or python3-selenium is
# missing: `scripts/install-deps.sh test` installs them.
add_test(NAME report_browser
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/browser_check.py
          --tally $<TARGET_FILE:tally_cli> --corpus ${TALLY_CORPUS} --out ${TALLY_REPORT_OUT}/browser)
set_tests_properties(report_browser PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)

# The page stays small however big the input: millions of events from the
# synthetic Kineto generator (bench/, so only when the benchmarks are built).
if(TARGET bench_gen_kineto_trace)
  add_test(NAME report_size
    COMMAND sh ${TALLY_REPORT_TESTS}/size_check.sh $<TARGET_FILE:tally_cli>
            $<TARGET_FILE:bench_gen_kineto_trace> ${TALLY_CORPUS} ${TALLY_REPORT_OUT}/size)
  set_tests_properties(report_size PROPERTIES TIMEOUT 600 LABELS "nosan")
endif()

# Screenshots as tests: the DLRM, trace_filter and FramePack reports and a
# compare page at 1280 and 1920 px, light and dark, saved under
# tests/report/layout/ of the build tree for a person to look at, with DOM
# checks (nothing overflows, chart labels inside their charts and distinct).
add_test(NAME report_layout
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/layout_check.py
          --tally $<TARGET_FILE:tally_cli> --corpus ${TALLY_CORPUS} --out ${TALLY_REPORT_OUT}/layout)
set_tests_properties(report_layout PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)

# The call tree (flame graphs, tree table, the merged tree in the JSON) on real
# traces against an independent reading of them in Python: sums over ranks,
# least and most of one rank, roots as the sum of their top-level calls, the
# merged tree as the per-rank trees summed, and the table's text.
add_test(NAME report_calltree
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/calltree_check.py
          --tally $<TARGET_FILE:tally_cli> --corpus ${TALLY_CORPUS} --out ${TALLY_REPORT_OUT}/calltree)
set_tests_properties(report_calltree PROPERTIES TIMEOUT 300 LABELS render)

# The rank palette keeps 16 colors apart for color-blind viewers (simulated),
# with contrast against the background, in light and dark.
add_test(NAME report_palette
  COMMAND ${TALLY_PYTHON} ${TALLY_REPORT_TESTS}/palette_check.py ${PROJECT_SOURCE_DIR}/assets/report.css)

# `tally summary` fits 80 columns (and --width N) on real inputs.
add_test(NAME summary_width
  COMMAND sh ${TALLY_REPORT_TESTS}/summary_width.sh $<TARGET_FILE:tally_cli> ${TALLY_CORPUS})
