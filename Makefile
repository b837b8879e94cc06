# Thin wrapper: dependencies, build, test, demo. CMake does the real work.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)

.PHONY: all deps configure build test test-plain test-asan demo bench fuzz clean format lint package

all: build

deps:
	@.ci/install-deps

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The tests run twice: on the normal build and on the sanitizer build.
test: test-plain test-asan

test-plain: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTASKD_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# A .deb of the binary, the man page and the bash completion, in $(BUILD).
package: build
	@cd $(BUILD) && cpack -G DEB

# The demo builds what it runs, the binary, and nothing else (make test
# builds the tests and the benchmarks' helpers).
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target taskd
	@examples/demo.sh $(BUILD)/taskd

# Every benchmark in bench/, then their verdicts in one table (bench/all.sh);
# the results and the commands that produced them are in BENCHMARKS.md.
bench: build
	@command -v hyperfine >/dev/null || apt-get install -y -q hyperfine python3-apscheduler python3-sqlalchemy
	@bench/all.sh $(BUILD)

# Coverage-guided fuzzing of the duration, cron and RRULE parsers with AFL++
# (afl-g++ instrumentation), for FUZZ_SECONDS; findings in build-fuzz/findings.
FUZZ_SECONDS ?= 120
fuzz: deps
	@command -v afl-g++ >/dev/null || apt-get install -y -q afl++
	@CXX=afl-g++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DTASKD_FUZZ=ON -DTASKD_TESTS=OFF >/dev/null
	@cmake --build build-fuzz --target fuzz_parsers
	@AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
	  rm -rf build-fuzz/findings; afl-fuzz -i tests/fuzz/corpus -o build-fuzz/findings -V $(FUZZ_SECONDS) -- build-fuzz/fuzz_parsers
	@crashes=$$(find build-fuzz/findings -path '*crashes/id*' | wc -l); hangs=$$(find build-fuzz/findings -path '*hangs/id*' | wc -l); \
	  echo "fuzz: $$crashes crashes, $$hangs hangs"; [ "$$crashes" = 0 ] && [ "$$hangs" = 0 ]

format:
	@clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp')

lint: build
	@clang-tidy -p $(BUILD) --quiet $$(git ls-files 'src/*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz demo
