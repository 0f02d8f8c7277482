# Thin wrapper around CMake: `make`, `make run`, `make check` on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# `make install PREFIX=/usr DESTDIR=DIR`; the build's paths (units, man pages) follow PREFIX.
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps deps-check run check check-asan check-tsan bench clean install uninstall deb

# vmhost alone, without its tests (no cmocka needed): make, make run, make install.
all: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DVMHOST_TESTS=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# What building and running vmhost needs (scripts/deps/build/): never a service or a test tool.
deps:
	@scripts/install-deps.sh build

# Also what the tests use (scripts/deps/test/, package/), their services kept from starting.
deps-check:
	@scripts/install-deps.sh build test package

run: all
	./$(BUILD)/vmhost

# Every test on the normal build (the same build/ with the tests on), then the unit and fixture
# tests again under ASan+UBSan, and the tests whose threads share data under ThreadSanitizer;
# each run fails on a skip tests/expected-skips.txt does not list.
check: deps-check
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DVMHOST_TESTS=ON -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure --timeout 900 --output-junit junit.xml
	tests/skips.sh $(BUILD)/junit.xml
	$(MAKE) --no-print-directory check-asan
	$(MAKE) --no-print-directory check-tsan

check-asan: deps-check
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVMHOST_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure --timeout 900 -L sanitize --output-junit junit.xml
	tests/skips.sh $(ASAN_BUILD)/junit.xml

# Its own build: TSan and ASan cannot share a process. A race report fails the test.
check-tsan: deps-check
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVMHOST_SANITIZE_THREAD=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && ctest --output-on-failure --timeout 300 -L tsan --output-junit junit.xml
	tests/skips.sh $(TSAN_BUILD)/junit.xml

# The binary, man pages, bash completion, systemd units (not enabled), an example
# /etc/vmhost/ksm-tune.ini, docs, Prometheus rules and Grafana dashboard: packaging/CMakeLists.txt.
install: all
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

uninstall: all
	@packaging/uninstall.sh $(BUILD) "$(DESTDIR)"

# build/deb/vmhost_VERSION_ARCH.deb, by dpkg-buildpackage in a staging copy (packaging/deb.sh).
deb: deps
	@scripts/install-deps.sh package
	@packaging/deb.sh $(BUILD)/deb

bench: all
	./$(BUILD)/vmhost bench accounting

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
