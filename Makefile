# Thin wrapper around CMake: `make`, `make run`, `make check` on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps run check check-asan bench clean

all: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps.sh

run: all
	./$(BUILD)/vmhost

# Every test on the normal build, then the unit and fixture tests again under ASan+UBSan.
check: all
	cd $(BUILD) && ctest --output-on-failure --timeout 900
	$(MAKE) --no-print-directory check-asan

check-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVMHOST_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure --timeout 900 -L sanitize

bench: all
	./$(BUILD)/vmhost bench accounting

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
