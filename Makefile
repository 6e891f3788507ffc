# Thin wrapper over CMake: the README's two commands.
#   make demo   install what is missing, build (release), run the sample as 4 ranks
#   make test   install what is missing, build, run every test (ctest)
# Each target configures with a preset of CMakePresets.json (release, dev, asan, tsan, fuzz: the
# options live there, -Werror included) into its build directory (the preset's own unless BUILD
# is changed); CMAKE_FLAGS adds options. Without make (CMake >= 3.22): cmake --preset dev &&
# cmake --build --preset dev && ctest --preset dev (or asan, tsan) configures, builds and tests.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps deps-test build demo test test-sanitize test-tsan fuzz clean

all: build

deps:
	@sh scripts/install-deps.sh build

deps-test:
	@sh scripts/install-deps.sh test

# The demo build needs only the build dependencies: no tests, no benchmarks.
build: deps
	cmake --preset release -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh samples/collector/run-demo.sh $(BUILD)

test: deps-test
	cmake --preset dev -B $(BUILD)-test $(CMAKE_FLAGS)
	cmake --build $(BUILD)-test -j $(JOBS)
	cd $(BUILD)-test && ctest --output-on-failure -j $(JOBS)

# Every test but the benchmarks' smoke runs (label nosan) under ASan and UBSan.
test-sanitize: deps-test
	cmake --preset asan -B $(BUILD)-asan $(CMAKE_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -LE nosan

# The collector's end-to-end (thread, fork, signal) tests under ThreadSanitizer.
test-tsan: deps-test
	cmake --preset tsan -B $(BUILD)-tsan $(CMAKE_FLAGS)
	cmake --build $(BUILD)-tsan -j $(JOBS) --target tally_tsan_tests
	cd $(BUILD)-tsan && ctest --output-on-failure -j $(JOBS) -L tsan

# A short libFuzzer run of every parser (clang), seeded with the corpus (beside the checkout,
# else TALLY_CORPUS_DIR, else the workplace's copy: as tests/CMakeLists.txt finds it).
FUZZ_SECONDS ?= 60
CORPUS ?= $(firstword $(wildcard ../shared/corpus $(TALLY_CORPUS_DIR) /work/shared/corpus))
fuzz: deps-test
	cmake --preset fuzz -B $(BUILD)-fuzz $(CMAKE_FLAGS)
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_trace_stream fuzz_report_readers fuzz_ingest fuzz_partial fuzz_compare
	sh tests/fuzz/run-fuzzers.sh $(BUILD)-fuzz $(CORPUS) . $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(BUILD)-test $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
