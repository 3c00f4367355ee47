# The two commands the README opens with. Each installs what is missing first.
#   make demo  - build and run anvil's main job on a built-in model
#   make test  - build (plain and sanitizer trees) and run the whole test suite
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan test test-fast demo clean format

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DANVIL_WERROR=ON $(CMAKE_FLAGS) > /dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_DIR) -G Ninja -DANVIL_WERROR=ON -DANVIL_SANITIZE=ON \
	  -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS) > /dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS) --target anvil sanitize_tests

# The whole suite: every test in the plain tree, then the tests labelled
# `sanitize` (parsers of untrusted files, runtime) again under ASan + UBSan.
test: build build-asan
	@scripts/run-tests $(BUILD_DIR) $(ASAN_DIR)

demo: build
	@$(BUILD_DIR)/anvil demo

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
