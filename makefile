# Entry points a PETSc/SLEPc user expects; the build itself is CMake's.
#
# Every test runs for both of PETSc's scalar types: real (Debian's default PETSc/SLEPc 3.18, in $(BUILD))
# and complex (Debian's complex 3.18, co-installed, in $(BUILD_COMPLEX); the plugin is named
# libslepccudalanczos_complex.so there). The PETSc-facing tests also run against Debian's PETSc/SLEPc 3.18
# with 64-bit indices (petsc64, co-installed, in $(BUILD_INT64)), what runs past 2^31 entries a rank.
#
#   make            configure and build into $(BUILD) (real scalars)
#   make deps       install the Debian packages this project needs (when missing), real and complex PETSc/SLEPc
#   make demo       deps + build + run examples/thesis_demo (the thesis's dense problem and a 2-D Laplacian)
#   make test       test-real + test-complex + test-int64, each to its end, then a summary line per part (tests/run_parts.sh):
#     make test-real      build $(BUILD) + every test: unit tests, PETSc/MPI tests (ctest) and SLEPc's own test suite
#     make test-complex   the same against the complex PETSc/SLEPc 3.18, in $(BUILD_COMPLEX)
#     make test-int64     build $(BUILD_INT64) against the 64-bit-index PETSc/SLEPc 3.18 + its PETSc-facing tests on
#                         1 and 2 ranks (not SLEPc's suite, whose harness programs are built against the 32-bit PETSc)
#   make build-complex    configure and build $(BUILD_COMPLEX) (PKG_CONFIG_PATH: $(COMPLEX_PKG_CONFIG_PATH))
#   make install    install library, header, pkg-config and CMake files under PREFIX
#   make gpu-pack   gpucarry/ (stripped plugin and binaries) + .gpu-host/ (PETSc/SLEPc/MPI runtime) for the GPU host;
#                   BUILD=$(BUILD_COMPLEX) or BUILD=$(BUILD_PETSC_CUDA_COMPLEX) packs a complex build
#   make petsc-cuda       PETSc/SLEPc 3.26.1 with CUDA into $(PETSC_CUDA_PREFIX), once per machine (~16 min, 2 cores)
#   make petsc-cuda-complex   the same with complex scalars into $(PETSC_CUDA_COMPLEX_PREFIX)
#   make petsc-cuda-int64     the same with 64-bit indices into $(PETSC_CUDA_INT64_PREFIX) (nev 5000 at 10^6 rows on one GPU)
#   make test-petsc-cuda  the PETSc-facing tests of `make test` (ctest -LE core) and SLEPc's suite, against those two 3.26.1:
#     real in $(BUILD_PETSC_CUDA) (test-petsc-cuda-real), complex in $(BUILD_PETSC_CUDA_COMPLEX) (test-petsc-cuda-complex)
BUILD   ?= build
PREFIX  ?= /usr/local
SLEPC_EXAMPLES ?= /usr/share/slepc/3.18/share/slepc/examples
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
# A current PETSc/SLEPc built with CUDA, as SLEPc users with GPUs run it: cached outside the clone.
PETSC_CUDA_PREFIX ?= $(or $(CUDALANCZOS_CACHE),$(HOME)/.cache/cudalanczos)/petsc-3.26.1-cuda
BUILD_PETSC_CUDA  ?= build-petsc-cuda
PETSC_CUDA_COMPLEX_PREFIX ?= $(PETSC_CUDA_PREFIX)-complex
PETSC_CUDA_INT64_PREFIX ?= $(PETSC_CUDA_PREFIX)-int64
BUILD_PETSC_CUDA_COMPLEX  ?= build-petsc-cuda-complex
# Debian's complex PETSc/SLEPc 3.18 (libpetsc-complex3.18-dev, libslepc-complex3.18-dev): installed next to
# the real ones, which stay pkg-config's default; a build against them puts these first.
BUILD_COMPLEX ?= build-complex
COMPLEX_PKG_CONFIG_PATH ?= /usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-complex/lib/pkgconfig:/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-complex/lib/pkgconfig
# Debian's PETSc/SLEPc 3.18 configured --with-64-bit-indices (libpetsc64-real3.18-dev, libslepc64-real3.18-dev).
BUILD_INT64 ?= build-int64
INT64_PKG_CONFIG_PATH ?= /usr/lib/slepcdir/slepc64-3.18/x86_64-linux-gnu-real/lib/pkgconfig:/usr/lib/petscdir/petsc64-3.18/x86_64-linux-gnu-real/lib/pkgconfig
# The environment of a build folder's cmake calls (configure and build, since a build may re-run the
# configure step): the complex or 64-bit pkg-config folders for $(BUILD_COMPLEX) and $(BUILD_INT64), nothing otherwise.
pkg_path_of = $(if $(filter $(BUILD_COMPLEX),$(1)),$(COMPLEX_PKG_CONFIG_PATH),$(if $(filter $(BUILD_INT64),$(1)),$(INT64_PKG_CONFIG_PATH)))
pkg_env = $(if $(call pkg_path_of,$(1)),PKG_CONFIG_PATH=$(call pkg_path_of,$(1))$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH})
# pkg-config folders of a 3.26.1 prefix
prefix_pkg_env = PKG_CONFIG_PATH=$(1)/slepc/lib/pkgconfig:$(1)/petsc/lib/pkgconfig
# The plugin's base name in a build folder: a complex PETSc's build names it libslepccudalanczos_complex
# (expanded when a recipe starts, after its prerequisites built the folder).
plugin_in = $(shell test -e $(1)/libslepccudalanczos_complex.so && echo libslepccudalanczos_complex || echo libslepccudalanczos)

# libpetsc3.18-dev-examples carries PETSc's test harness (gmakefile.test, gmakegentest.py) that SLEPc's
# suite runs under; python3-slepc4py-real is what tests/python and examples/slepc4py_demo.py import.
# libslepc-complex3.18-dev and libpetsc-complex3.18-dev are the complex scalar builds (test-complex), the
# *64-real3.18-dev ones the 64-bit-index builds (test-int64).
DEBIAN_PACKAGES = build-essential cmake pkg-config libslepc-real3.18-dev libslepc3.18-dev-examples \
                  libpetsc-real3.18-dev libpetsc3.18-dev-examples openmpi-bin libopenmpi-dev liblapack-dev \
                  libslepc-complex3.18-dev libpetsc-complex3.18-dev libslepc64-real3.18-dev libpetsc64-real3.18-dev \
                  libgtest-dev python3 python3-venv python3-slepc4py-real valgrind

.PHONY: all deps configure build build-complex build-int64 demo test test-real test-complex test-int64 check install gpu-pack clean \
        petsc-cuda petsc-cuda-complex petsc-cuda-int64 test-petsc-cuda test-petsc-cuda-real test-petsc-cuda-complex

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	else echo "Debian packages: all present"; fi

$(BUILD)/CMakeCache.txt:
	$(call pkg_env,$(BUILD)) cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	$(call pkg_env,$(BUILD)) cmake --build $(BUILD) -j$(JOBS)

build-complex:
	@$(MAKE) --no-print-directory build BUILD=$(BUILD_COMPLEX)

build-int64:
	@$(MAKE) --no-print-directory build BUILD=$(BUILD_INT64)

export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

demo: deps build
	$(BUILD)/examples/thesis_demo -eps_type cudalanczos
	@echo; echo "Unmodified SLEPc programs: -dll_append $(CURDIR)/$(BUILD)/libslepccudalanczos.so -eps_type cudalanczos"

# real, then complex (one after the other, also under make -j: each uses $(JOBS) cores), each part to its
# end even when the other failed, then one summary line per part: ctest and SLEPc 3.18's own suite
# (run_slepc_tests.sh runs it with complex scalars for a plugin named *_complex.so)
test:
	@bash tests/run_parts.sh test-real test-complex test-int64

test-real: build
	bash tests/run_part.sh real $(BUILD)

test-complex: build-complex
	bash tests/run_part.sh complex $(BUILD_COMPLEX)

# What the index width changes is the PETSc boundary (PetscInt arrays handed to the device, BV sizes): the
# tests that go through PETSc, on 1 and 2 ranks (3 and 4, valgrind and the slepc4py tests, which import
# the 32-bit PETSc, run in test-real).
test-int64: build-int64
	CUDALANCZOS_SLEPC_SUITE=skip bash tests/run_part.sh int64 $(BUILD_INT64) -LE 'core|valgrind' -E 'python|\.np[34]$$'

check: test

petsc-cuda: deps
	bash tools/petsc-cuda.sh $(PETSC_CUDA_PREFIX)

petsc-cuda-complex: deps
	bash tools/petsc-cuda.sh $(PETSC_CUDA_COMPLEX_PREFIX) complex

petsc-cuda-int64: deps
	bash tools/petsc-cuda.sh $(PETSC_CUDA_INT64_PREFIX) real 64

# The same against PETSc/SLEPc 3.26.1 (each built the first time it is needed): every test that goes
# through PETSc (ctest -LE core: the core tests use no PETSc and ran in `make test` for both scalar types)
# and SLEPc 3.26.1's own suite; real, then complex, each to its end, then a summary line per part.
test-petsc-cuda:
	@bash tests/run_parts.sh test-petsc-cuda-real test-petsc-cuda-complex

test-petsc-cuda-real: petsc-cuda
	$(call prefix_pkg_env,$(PETSC_CUDA_PREFIX)) cmake -S . -B $(BUILD_PETSC_CUDA) $(CMAKE_FLAGS)
	$(call prefix_pkg_env,$(PETSC_CUDA_PREFIX)) cmake --build $(BUILD_PETSC_CUDA) -j$(JOBS)
	SLEPC_EXAMPLES=$(PETSC_CUDA_PREFIX)/slepc/share/slepc/examples \
	  bash tests/run_part.sh petsc-cuda-real $(BUILD_PETSC_CUDA) -LE core

test-petsc-cuda-complex: petsc-cuda-complex
	$(call prefix_pkg_env,$(PETSC_CUDA_COMPLEX_PREFIX)) cmake -S . -B $(BUILD_PETSC_CUDA_COMPLEX) $(CMAKE_FLAGS)
	$(call prefix_pkg_env,$(PETSC_CUDA_COMPLEX_PREFIX)) cmake --build $(BUILD_PETSC_CUDA_COMPLEX) -j$(JOBS)
	SLEPC_EXAMPLES=$(PETSC_CUDA_COMPLEX_PREFIX)/slepc/share/slepc/examples \
	  bash tests/run_part.sh petsc-cuda-complex $(BUILD_PETSC_CUDA_COMPLEX) -LE core

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# What the GPU host needs, small enough to travel: the plugin and the test/example/bench binaries in the
# build folder's layout (their RUNPATH is $ORIGIN-relative), stripped of debug info, plus the runtime.
# There:  . .gpu-host/env.sh && bash tests/gpu/run_all_on_gpu_host.sh gpucarry OUT
# A complex build's plugin keeps its name (libslepccudalanczos_complex.so.0 is what its binaries need,
# and PETSc's -dll_append derives the registration function from the name).
gpu-pack: PLUGIN = $(call plugin_in,$(BUILD))
gpu-pack: build
	rm -rf gpucarry && mkdir -p gpucarry/tests/cuda gpucarry/tests/petsc gpucarry/examples gpucarry/bench/peers
	cp -L $(BUILD)/$(PLUGIN).so.0 gpucarry/ && cp -L $(BUILD)/$(PLUGIN).so.0 gpucarry/$(PLUGIN).so
	-cp $(BUILD)/tests/cuda/test_cuda_backend $(BUILD)/tests/cuda/test_cuda_kernels gpucarry/tests/cuda/
	cp $$(find $(BUILD)/tests/petsc -maxdepth 1 -type f -name 'test_*' -executable) gpucarry/tests/petsc/
	cp $$(find $(BUILD)/examples -maxdepth 1 -type f -executable) gpucarry/examples/
	-cp $(BUILD)/bench/bench_cudalanczos $(BUILD)/bench/bench_step $(BUILD)/bench/bench_multigpu gpucarry/bench/
	-cp $(BUILD)/bench/peers/bench_eps $(BUILD)/bench/peers/krylov_floor $(BUILD)/bench/peers/gen_matrices gpucarry/bench/peers/
	# A PETSc/SLEPc that is not the system's (BUILD=$(BUILD_PETSC_CUDA), against $(PETSC_CUDA_PREFIX)) travels
	# as gpucarry/petsc-libs.tar.xz (36 MB of libpetsc become 9: a carry stays under 64 MiB), unpacked by
	# run_all_on_gpu_host.sh onto LD_LIBRARY_PATH; pack.sh adds what they need from the system. ex1 is
	# built against the same SLEPc.
	libs=$$(ldd $(BUILD)/$(PLUGIN).so.0 | awk '$$3 ~ /lib(petsc|slepc)\./ && $$3 !~ /^\/(usr|lib)\// {print $$3}'); \
	if [ -n "$$libs" ]; then d=$$(mktemp -d) && cp -L $$libs $$d/ && strip --strip-debug $$d/* && \
	  tar -C $$d -cf - . | xz -T0 -6 > gpucarry/petsc-libs.tar.xz && rm -rf $$d; fi
	slepc=$$(sed -n 's/^SLEPC_PREFIX:INTERNAL=//p' $(BUILD)/CMakeCache.txt); petsc=$$(sed -n 's/^PETSC_PREFIX:INTERNAL=//p' $(BUILD)/CMakeCache.txt); \
	examples=$(SLEPC_EXAMPLES); [ -d "$$slepc/share/slepc/examples" ] && examples=$$slepc/share/slepc/examples; \
	export PKG_CONFIG_PATH=$$slepc/lib/pkgconfig:$$petsc/lib/pkgconfig$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}; \
	mkdir -p gpucarry/slepc && mpicc -O2 -o gpucarry/slepc/ex1 $$examples/src/eps/tutorials/ex1.c $$(pkg-config --cflags --libs slepc)
	find gpucarry -type f ! -name '*.tar.xz' -exec strip --strip-debug {} +
	../shared/gpu-host/pack.sh .gpu-host gpucarry/$(PLUGIN).so $$(find gpucarry -type f -executable) \
	  $$(ldd $(BUILD)/$(PLUGIN).so.0 | awk '$$3 ~ /lib(petsc|slepc)\./ && $$3 !~ /^\/(usr|lib)\// {print $$3}')

clean:
	rm -rf $(BUILD)
