# Entry points a PETSc/SLEPc user expects; the build itself is CMake's.
#
#   make            configure and build into $(BUILD)
#   make deps       install the Debian packages this project needs (when missing)
#   make demo       deps + build + run examples/thesis_demo (the thesis's dense problem and a 2-D Laplacian)
#   make test       build + every test: unit tests, PETSc/MPI tests (ctest) and SLEPc's own test suite
#   make install    install library, header, pkg-config and CMake files under PREFIX
#   make gpu-pack   gpucarry/ (stripped plugin and binaries) + .gpu-host/ (PETSc/SLEPc/MPI runtime) for the GPU host
#   make petsc-cuda       PETSc/SLEPc 3.26.1 with CUDA into $(PETSC_CUDA_PREFIX), once per machine (~16 min, 2 cores)
#   make test-petsc-cuda  the same tests as `make test`, built against that PETSc/SLEPc in $(BUILD_PETSC_CUDA)
BUILD   ?= build
PREFIX  ?= /usr/local
SLEPC_EXAMPLES ?= /usr/share/slepc/3.18/share/slepc/examples
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
# A current PETSc/SLEPc built with CUDA, as SLEPc users with GPUs run it: cached outside the clone.
PETSC_CUDA_PREFIX ?= $(or $(CUDALANCZOS_CACHE),$(HOME)/.cache/cudalanczos)/petsc-3.26.1-cuda
BUILD_PETSC_CUDA  ?= build-petsc-cuda

# libpetsc3.18-dev-examples carries PETSc's test harness (gmakefile.test, gmakegentest.py) that SLEPc's
# suite runs under; python3-slepc4py-real is what tests/python and examples/slepc4py_demo.py import.
DEBIAN_PACKAGES = build-essential cmake pkg-config libslepc-real3.18-dev libslepc3.18-dev-examples \
                  libpetsc-real3.18-dev libpetsc3.18-dev-examples openmpi-bin libopenmpi-dev liblapack-dev \
                  libgtest-dev python3 python3-venv python3-slepc4py-real valgrind

.PHONY: all deps configure build demo test check install gpu-pack clean petsc-cuda test-petsc-cuda

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

petsc-cuda: deps
	bash tools/petsc-cuda.sh $(PETSC_CUDA_PREFIX)

# ctest (GPU tests compiled and reported as skipped where there is no GPU) and SLEPc 3.26.1's own suite
test-petsc-cuda: petsc-cuda
	PKG_CONFIG_PATH=$(PETSC_CUDA_PREFIX)/slepc/lib/pkgconfig:$(PETSC_CUDA_PREFIX)/petsc/lib/pkgconfig \
	  cmake -S . -B $(BUILD_PETSC_CUDA) $(CMAKE_FLAGS)
	cmake --build $(BUILD_PETSC_CUDA) -j$(JOBS)
	ctest --test-dir $(BUILD_PETSC_CUDA) --output-on-failure -j$(JOBS)
	SLEPC_EXAMPLES=$(PETSC_CUDA_PREFIX)/slepc/share/slepc/examples \
	  bash tests/slepc/run_slepc_tests.sh $(CURDIR)/$(BUILD_PETSC_CUDA)/libslepccudalanczos.so

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# What the GPU host needs, small enough to travel: the plugin and the test/example/bench binaries in the
# build folder's layout (their RUNPATH is $ORIGIN-relative), stripped of debug info, plus the runtime.
# There:  . .gpu-host/env.sh && bash tests/gpu/run_all_on_gpu_host.sh gpucarry OUT
gpu-pack: build
	rm -rf gpucarry && mkdir -p gpucarry/tests/cuda gpucarry/tests/petsc gpucarry/examples gpucarry/bench/peers
	cp -L $(BUILD)/libslepccudalanczos.so.0 gpucarry/ && cp -L $(BUILD)/libslepccudalanczos.so.0 gpucarry/libslepccudalanczos.so
	-cp $(BUILD)/tests/cuda/test_cuda_backend $(BUILD)/tests/cuda/test_cuda_kernels gpucarry/tests/cuda/
	cp $$(find $(BUILD)/tests/petsc -maxdepth 1 -type f -name 'test_*' -executable) gpucarry/tests/petsc/
	cp $$(find $(BUILD)/examples -maxdepth 1 -type f -executable) gpucarry/examples/
	-cp $(BUILD)/bench/bench_cudalanczos $(BUILD)/bench/bench_multigpu gpucarry/bench/
	-cp $(BUILD)/bench/peers/bench_eps $(BUILD)/bench/peers/krylov_floor $(BUILD)/bench/peers/gen_matrices gpucarry/bench/peers/
	# A PETSc/SLEPc that is not the system's (BUILD=$(BUILD_PETSC_CUDA), against $(PETSC_CUDA_PREFIX)) travels
	# as gpucarry/petsc-libs.tar.xz (36 MB of libpetsc become 9: a carry stays under 64 MiB), unpacked by
	# run_all_on_gpu_host.sh onto LD_LIBRARY_PATH; pack.sh adds what they need from the system. ex1 is
	# built against the same SLEPc.
	libs=$$(ldd $(BUILD)/libslepccudalanczos.so.0 | awk '$$3 ~ /lib(petsc|slepc)\./ && $$3 !~ /^\/(usr|lib)\// {print $$3}'); \
	if [ -n "$$libs" ]; then d=$$(mktemp -d) && cp -L $$libs $$d/ && strip --strip-debug $$d/* && \
	  tar -C $$d -cf - . | xz -T0 -6 > gpucarry/petsc-libs.tar.xz && rm -rf $$d; fi
	slepc=$$(sed -n 's/^SLEPC_PREFIX:INTERNAL=//p' $(BUILD)/CMakeCache.txt); petsc=$$(sed -n 's/^PETSC_PREFIX:INTERNAL=//p' $(BUILD)/CMakeCache.txt); \
	examples=$(SLEPC_EXAMPLES); [ -d "$$slepc/share/slepc/examples" ] && examples=$$slepc/share/slepc/examples; \
	export PKG_CONFIG_PATH=$$slepc/lib/pkgconfig:$$petsc/lib/pkgconfig$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}; \
	mkdir -p gpucarry/slepc && mpicc -O2 -o gpucarry/slepc/ex1 $$examples/src/eps/tutorials/ex1.c $$(pkg-config --cflags --libs slepc)
	find gpucarry -type f ! -name '*.tar.xz' -exec strip --strip-debug {} +
	../shared/gpu-host/pack.sh .gpu-host gpucarry/libslepccudalanczos.so $$(find gpucarry -type f -executable) \
	  $$(ldd $(BUILD)/libslepccudalanczos.so.0 | awk '$$3 ~ /lib(petsc|slepc)\./ && $$3 !~ /^\/(usr|lib)\// {print $$3}')

clean:
	rm -rf $(BUILD)
