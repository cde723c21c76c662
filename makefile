# Entry points a PETSc/SLEPc user expects; the build itself is CMake's.
#
#   make            configure and build into $(BUILD)
#   make deps       install the Debian packages this project needs (when missing)
#   make demo       deps + build + run examples/thesis_demo (the thesis's dense problem and a 2-D Laplacian)
#   make test       build + every test: unit tests, PETSc/MPI tests (ctest) and SLEPc's own test suite
#   make install    install library, header, pkg-config and CMake files under PREFIX
#   make gpu-pack   pack the runtime for the GPU host (see tests/gpu/README.md)
BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=

DEBIAN_PACKAGES = build-essential cmake pkg-config libslepc-real3.18-dev libslepc3.18-dev-examples \
                  libpetsc-real3.18-dev openmpi-bin libopenmpi-dev liblapack-dev libgtest-dev python3 valgrind

.PHONY: all deps configure build demo test check install gpu-pack clean

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	else echo "Debian packages: all present"; fi

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)

export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

demo: deps build
	$(BUILD)/examples/thesis_demo -eps_type cudalanczos
	@echo; echo "Unmodified SLEPc programs: -dll_append $(CURDIR)/$(BUILD)/libslepccudalanczos.so -eps_type cudalanczos"

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)
	bash tests/slepc/run_slepc_tests.sh $(CURDIR)/$(BUILD)/libslepccudalanczos.so

check: test

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

gpu-pack: build
	../shared/gpu-host/pack.sh .gpu-host $(BUILD)/libslepccudalanczos.so $$(find $(BUILD)/tests $(BUILD)/examples $(BUILD)/bench -maxdepth 2 -type f -executable 2>/dev/null)

clean:
	rm -rf $(BUILD)
