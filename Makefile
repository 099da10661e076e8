# The two commands that do everything on a fresh machine: `make demo` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test test-sanitize demo bench fuzz clean

all: build

deps:
	scripts/install-deps

# ccache, when present, lets the build without optional parts (make test) share these objects.
configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  $$(command -v ccache > /dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The suite, then the build without MPI and AWS (build-minimal) and its suites.
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 900
	scripts/test-without-optional

# The demo runs the nimbus binary alone: build that, not every test, before its first line.
demo: configure
	cmake --build $(BUILD_DIR) --target nimbus -j$(JOBS)
	scripts/demo $(BUILD_DIR)/apps/nimbus

bench: build
	scripts/install-deps --bench
	bench/foundation.sh $(BUILD_DIR)/apps/nimbus
	$(BUILD_DIR)/bench/runtime_overhead $(BUILD_DIR)/apps/nimbus 200000 40 10
	bench/evaluation.sh $(BUILD_DIR)/apps/nimbus
	$(BUILD_DIR)/bench/consensus_scaling $(BUILD_DIR)/apps/nimbus 200000 40 6 16
	$(BUILD_DIR)/bench/load $(BUILD_DIR)/apps/nimbus 256 10 200
	bench/solvers.sh $(BUILD_DIR)/apps/nimbus
	bench/link.sh $(BUILD_DIR)/apps/nimbus $(BUILD_DIR)/tests/nimbus-fault-proxy
	bench/relays.sh $(BUILD_DIR)/apps/nimbus
	bench/glmnet.sh $(BUILD_DIR)/apps/nimbus
	SET=fashion bench/glmnet_cv.sh $(BUILD_DIR)/apps/nimbus
	bench/auto_columns.sh $(BUILD_DIR)/apps/nimbus
	PYTHONPATH=$(BUILD_DIR)/python /usr/bin/python3 bench/dask_fit.py
	if [ -x $(BUILD_DIR)/bench/channel ]; then $(BUILD_DIR)/bench/channel; fi
	if tests/support/netns.sh check > /dev/null; then bench/relays_netns.sh $(BUILD_DIR)/apps/nimbus; \
	else echo "bench/relays_netns.sh: skipped: $$(tests/support/netns.sh check)"; fi

# The suite under ASan + UBSan, and the threaded parts under TSan (build-asan, build-tsan).
test-sanitize: deps
	scripts/test-sanitize

# Fuzz the parsers of untrusted input, FUZZ_SECONDS each (clang, in build-fuzz).
FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR)
