# Thin wrapper around CMake: `make`, `make run`, `make check` on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# `make install PREFIX=/usr DESTDIR=DIR`; the build's paths (units, man pages) follow PREFIX.
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps run check check-asan check-tsan bench clean install uninstall deb

all: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps.sh

run: all
	./$(BUILD)/vmhost

# Every test on the normal build, then the unit and fixture tests again under ASan+UBSan, and
# the tests whose threads share data under ThreadSanitizer.
check: all
	cd $(BUILD) && ctest --output-on-failure --timeout 900
	$(MAKE) --no-print-directory check-asan
	$(MAKE) --no-print-directory check-tsan

check-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVMHOST_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure --timeout 900 -L sanitize

# Its own build: TSan and ASan cannot share a process. A race report fails the test.
check-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVMHOST_SANITIZE_THREAD=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && ctest --output-on-failure --timeout 300 -L tsan

# The binary, man pages, bash completion, systemd units (not enabled), an example
# /etc/vmhost/ksm-tune.ini, docs, Prometheus rules and Grafana dashboard: packaging/CMakeLists.txt.
install: all
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

uninstall: all
	@packaging/uninstall.sh $(BUILD) "$(DESTDIR)"

# build/deb/vmhost_VERSION_ARCH.deb, by dpkg-buildpackage in a staging copy (packaging/deb.sh).
deb: deps
	@packaging/deb.sh $(BUILD)/deb

bench: all
	./$(BUILD)/vmhost bench accounting

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
