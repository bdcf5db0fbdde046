# The two commands of the README:
#   make demo   builds everything and places a real word list from C, Python and Node
#   make test   clippy, then every test suite (Rust, C under valgrind, Python, Node)
# Both install what they need: Debian packages (apt), Python tools (pip, into .venv)
# and Node tools (npm, into node_modules).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := demo

VENV := .venv
PY := $(VENV)/bin/python
# Every cargo and maturin call below builds PyO3 against the venv's
# interpreter, so switching a venv on or off in the calling shell does not
# rebuild pyo3. (Not pinned in .cargo/config.toml: a fresh clone has no venv,
# and a plain `cargo build` there must work with the python3 on PATH.)
export PYO3_PYTHON := $(CURDIR)/$(PY)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
DEB_PACKAGES := wamerican libjansson-dev valgrind pkg-config memcached fonts-dejavu-core etcd-server etcd-client protobuf-compiler libprotobuf-dev redis-server libmemcached-dev zlib1g-dev nutcracker haproxy nginx-light chromium chromium-driver
LIBDIR := $(CURDIR)/target/release
CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -Iinclude
# ring.hpp needs C++17 (docs/c-api.md, C++).
CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror -Iinclude
LDRING := -L$(LIBDIR) -lring -Wl,-rpath,$(LIBDIR)
VALGRIND := valgrind -q --error-exitcode=1 --suppressions=ffi-c/tests/valgrind.supp --leak-check=full --errors-for-leak-kinds=all --show-leak-kinds=all
# The crate version and the C library's SONAME: libring.so.MAJOR from 1.0 on,
# libring.so.0.MINOR before (a 0.y minor release may break the ABI; the same
# rule as ffi-c/build.rs, which links the SONAME in).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
SONAME := libring.so.$(if $(filter 0,$(VERSION_MAJOR)),0.$(VERSION_MINOR),$(VERSION_MAJOR))

.PHONY: test-platforms build-target dist-all check test-suites check-cxx-minimum test-fleet demo test fuzz bench bench-smoke install install-files uninstall check-install dist test-install check-versions system-deps build build-release wheel build-cli build-c build-py build-node clippy test-rust test-c test-py test-node check-generated check-licenses check-fresh-clone

demo: system-deps build
	bash examples/demo.sh

# Runs the suites three at a time on their own make (each suite's output is
# printed together when it ends), then the demo itself: the three languages
# must agree on the word list. Three on 2 cores, so that a suite waiting on
# servers or sleeping (etcd's keepalive test idles 60 s) does not hold one
# of two slots; cargo in these recipes uses both cores by itself (make does
# not hand it the jobserver). Measured from clone to demo: 20 min 55 s at
# -j2, 20 min 29 s and 21 min 36 s at -j3; with today's suites 22 min 3 s
# at -j3 (2026-12-07), both cores busy from start to end (37 min user,
# 5 min system): what shortens it is less work, not another order.
test: system-deps
	$(MAKE) -j3 --output-sync=target test-suites
	bash examples/demo.sh > build/demo.txt
	grep '^OK: C, Python and Node placed every key identically' build/demo.txt
	@echo "make test: all suites passed"

# The release builds first: most suites wait for them, and test-rust (debug)
# runs beside them. Then the longest chain (build-node, dist's second wheel,
# the install test) takes a slot as soon as it can, ahead of the suites that
# wait on nothing else.
test-suites: build-release test-rust build-py clippy test-c test-install test-py test-node test-fleet check-versions check-licenses check-generated check-fresh-clone bench-smoke

# The inner loop (CONTRIBUTING.md): clippy, the core's tests, and the C
# binding's vectors against a debug libring (no release build, no LTO).
# Under 3 minutes after a change to the core; `make test` before a push.
DEBUG_LIBDIR := $(CURDIR)/target/debug
check: $(VENV)/.ready
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test -q -p shardring
	cargo build -q -p shardring-ffi
	ln -sf libring.so $(DEBUG_LIBDIR)/$(SONAME)
	mkdir -p build
	cc $(TEST_CFLAGS) ffi-c/tests/vectors.c -L$(DEBUG_LIBDIR) -lring -Wl,-rpath,$(DEBUG_LIBDIR) -ljansson -lm -o build/check-vectors
	build/check-vectors testdata/vectors.json
	@echo "make check: clippy, the core and the C vectors passed"

# Benchmarks (not part of `make test`): criterion on the core and against
# the peer crates, the cost of removals, the curves of how cost grows (SVG
# in docs/), then the C boundary against the same loop in Rust, and the
# Python and Node peers; report.py prints one table with every goal's status
# and writes it into docs/performance.md.
bench: build
	cargo bench -p shardring
	cargo bench -p shardring-bench --bench peers
	mkdir -p build
	cargo bench -p shardring-bench --bench removals | tee build/bench-removals.txt
	cargo bench -p shardring-bench --bench curves | tee build/bench-curves.txt
	cc -O2 -Iinclude ffi-c/bench/get_node.c $(LDRING) -o build/bench-c
	build/bench-c | tee build/bench-c.txt
	cargo run -q --release -p shardring-ffi --example rust_get | tee build/bench-rust.txt
	$(PY) py/bench/bench_vs_uhashring.py | tee build/bench-python.txt
	cd node && node bench/bench_vs_hashring.mjs | tee ../build/bench-node.txt
	$(PY) py/bench/rebalance_latency.py --backend memcached | tee build/bench-rebalance-memcached.txt
	$(PY) py/bench/rebalance_latency.py --backend redis | tee build/bench-rebalance-redis.txt
	$(PY) py/bench/rebalance_speed.py --keys 1000000 | tee build/bench-rebalance-speed.txt
	$(PY) py/bench/tls_cost.py --keys 200000 --changes 200 | tee build/bench-tls.txt
	$(PY) py/bench/hot_keys.py --json build/bench-hot-keys.json | tee build/bench-hot-keys.txt
	$(PY) py/bench/hot_keys_cost.py | tee -a build/bench-hot-keys.txt
	cd node && node bench/hot_keys_cost.mjs | tee -a ../build/bench-hot-keys.txt
	@echo; echo "shardring against its peers ($$(nproc) cores, $$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')):"
	@python3 bench/report.py --c build/bench-c.txt --rust build/bench-rust.txt --python build/bench-python.txt --node build/bench-node.txt --removals build/bench-removals.txt --write docs/performance.md

# Every cargo-fuzz target for FUZZ_SECONDS (default 60) after replaying the
# saved inputs in fuzz/regressions/ (nightly toolchain; installs cargo-fuzz).
# CI runs it after `make test`.
fuzz:
	bash fuzz/run.sh

# One iteration of every benchmark, so they cannot rot (part of `make test`).
# The Rust ones build in the test profile, whose dependencies test-rust
# compiled: a smoke run measures nothing, and `make bench` builds optimised.
bench-smoke: build
	cargo test -q --bench '*'
	$(PY) py/bench/bench_vs_uhashring.py --quick
	cd node && node bench/bench_vs_hashring.mjs --quick
	$(PY) py/bench/rebalance_latency.py --quick --backend memcached
	$(PY) py/bench/rebalance_latency.py --quick --backend redis
	$(PY) py/bench/rebalance_speed.py --keys 20000
	$(PY) py/bench/tls_cost.py --keys 5000 --changes 20
	$(PY) py/bench/hot_keys_cost.py --quick
	cd node && node bench/hot_keys_cost.mjs --quick

# Debian packages the demo and tests use, installed only when missing.
# (dpkg -s also answers for a package removed but not purged: its status
# must say installed.)
system-deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q ' installed$$' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

# pylibmc builds from source against Debian's libmemcached-dev (system-deps).
$(VENV)/.ready: py/requirements-dev.txt | system-deps
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r py/requirements-dev.txt
	touch $@

node/node_modules/.package-lock.json: node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund

build: build-c build-py build-node build-cli

# The one release build of libring, the Node binary and the CLI: the
# artefacts `make dist` packs, which the in-tree tests and the demo use too.
# zig links them against glibc 2.17 (manylinux2014); one cargo invocation,
# so their dependencies compile once. target/release links to them, where
# the tests, the docs and the examples look. The `header` feature
# regenerates include/ring.h on the way (check-generated). No strip: zig's
# linker turns rustc's --strip-debug into a full strip, and valgrind's
# suppressions (ffi-c/tests/valgrind.supp) match function names; dist strips
# the debug sections alone from the copies it packs.
ZIG_TARGET := x86_64-unknown-linux-gnu.2.17
# dist.sh reads it from the environment.
export ZIG_RELEASE := $(CURDIR)/target/zig/x86_64-unknown-linux-gnu/release
# cargo-zigbuild's and maturin's compiler wrappers live in this cache, and
# cargo rebuilds everything when CC's path changes: pinned here, a caller
# with another HOME or XDG_CACHE_HOME (ffi-c/tests/readme.sh) finds the
# release build up to date instead of replacing files other suites run.
export CARGO_ZIGBUILD_CACHE_DIR := $(CURDIR)/target/zig-cache
# Release binaries name no path of the machine that built them (dist
# checks each): sources from the registry as <index>/<crate>-<version>/...,
# generated ones relative to the workspace. A cfg table given by --config
# joins .cargo/config.toml's musl flags, where RUSTFLAGS would replace them.
# On macOS the linker (ld64's -S) also leaves out the debug map, which
# names every object file and C source by its path; a strip afterwards
# would void zig's code signature. maturin sets the flags of a macOS
# build itself, from RUSTFLAGS and not from cargo's --config, so a macOS
# wheel (MACOSX_DEPLOYMENT_TARGET set, as dist sets it) gets the same
# flags there.
CARGO_HOME ?= $(HOME)/.cargo
REMAP_FLAGS := --remap-path-prefix=$(CARGO_HOME)/registry/src/= --remap-path-prefix=$(CURDIR)/=
MACOS_FLAGS := -C link-arg=-Wl,-S
REMAP := --config "target.'cfg(all())'.rustflags=[$(foreach f,$(REMAP_FLAGS),\"$(f)\",)]" \
	--config "target.'cfg(target_vendor = \"apple\")'.rustflags=[$(foreach f,$(MACOS_FLAGS),\"$(f)\",)]"
# The release build command build-release and build-target share: one
# profile, cache and target dir, so the host-side build scripts and proc
# macros compile once for every target.
ZIGBUILD := PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CARGO_TARGET_DIR=$(CURDIR)/target/zig \
	cargo zigbuild --release --config 'profile.release.strip="none"' $(REMAP)
# napi-derive writes the Node binding's type definitions into
# NAPI_TYPE_DEFS as it compiles (napi-build reruns the crate's build when
# the variable changes), and build-node renders index.d.ts and index.js
# from them: no second, debug build of the binding for its generated files.
NAPI_TYPE_DEFS := $(CURDIR)/target/zig/napi-type-defs
build-release: $(VENV)/.ready
	mkdir -p $(NAPI_TYPE_DEFS)
	NAPI_TYPE_DEF_TMP_FOLDER=$(NAPI_TYPE_DEFS) $(ZIGBUILD) -p shardring-ffi -p shardring-node -p shardring-cli --features shardring-ffi/header --target $(ZIG_TARGET)
	mkdir -p $(LIBDIR)
	for f in libring.so libring.a shardring; do ln -sfn $(ZIG_RELEASE)/$$f $(LIBDIR)/$$f; done

build-cli: build-release

# libring and (TARGET_PACKAGES) the Node binding for another Rust target
# (RUST_TARGET, one of release/platforms.json's), linked by LINKER (the
# platform's `linker`): zig with build-release's command (ZIGBUILD), into
# target/zig/$(RUST_TARGET)/release, against glibc GLIBC (empty: musl or
# not Linux) and for macOS MACOSX_DEPLOYMENT_TARGET (dist sets it); or
# mingw, Debian's mingw-w64 gcc (cargo's linker for the GNU Windows
# target), into target/mingw/: zig's lld exports every Rust symbol from
# ring.dll (6,709 besides the 88 ring_* functions). make dist-all and
# test-platforms build with it. For the GNU Windows target napi's build
# script insists on a libnode.dll (MSYS2's Node has one) on LIBNODE_PATH
# and links it; the Node binding looks Node-API up in node.exe at load
# instead (napi-sys's dyn-symbols, node/Cargo.toml), so an empty DLL
# built here satisfies the script and nothing is imported from it
# (dist's check_windows fails the module if anything were).
LIBNODE_PLACEHOLDER := $(CURDIR)/target/mingw/libnode
RUST_TARGET :=
LINKER := zig
GLIBC := 2.17
TARGET_PACKAGES := -p shardring-ffi -p shardring-node
MINGWBUILD := CARGO_TARGET_DIR=$(CURDIR)/target/mingw cargo build --release --config 'profile.release.strip="none"' $(REMAP)
build-target: $(VENV)/.ready
	@test -n "$(RUST_TARGET)" || { echo "build-target: set RUST_TARGET (release/platforms.json)"; exit 1; }
	rustup target add $(RUST_TARGET)
	$(if $(filter mingw,$(LINKER)),mkdir -p $(LIBNODE_PLACEHOLDER) && echo 'void shardring_no_node_here(void) {}' \
	  | x86_64-w64-mingw32-gcc -shared -x c - -o $(LIBNODE_PLACEHOLDER)/libnode.dll)
	$(if $(filter mingw,$(LINKER)),LIBNODE_PATH=$(LIBNODE_PLACEHOLDER) $(MINGWBUILD),$(ZIGBUILD)) $(TARGET_PACKAGES) \
	  --target $(RUST_TARGET)$(if $(GLIBC),.$(GLIBC))

# Programs linked in-tree (-L$(LIBDIR) -Wl,-rpath,$(LIBDIR)) record the SONAME,
# so it sits beside libring.so as a symlink.
build-c: build-release
	ln -sf libring.so $(LIBDIR)/$(SONAME)
	mkdir -p build
	cc $(CFLAGS) examples/c/place_words.c $(LDRING) -o build/place_words
	cc $(CFLAGS) -pthread examples/c/follow.c $(LDRING) -o build/follow

# An abi3 wheel for Python ABI and up (abi3-py310: 3.10 and newer) into
# WHEEL_OUT for the Rust target WHEEL_TARGET (default: this machine's) and
# the platform tag WHEEL_POLICY (manylinux2014: glibc 2.17; musllinux_1_2
# for a musl target; empty for Windows and macOS, where the tag comes from
# the target and MACOSX_DEPLOYMENT_TARGET), linked by WHEEL_LINKER (the
# platform's `linker`): zig, or mingw, where pyo3 writes the import library
# of python3.dll itself (maturin 1.16's zig path exports
# PyInit_shardring._shardring, a name no module has, and the link fails;
# PyO3/maturin#3274). The one wheel command: build-py, dist
# (release/dist.sh) and the other platforms' legs all run it, so dist
# finds build-py's wheel built.
ABI := abi3-py310
comma := ,
WHEEL_OUT := $(CURDIR)/build/wheels
WHEEL_TARGET :=
WHEEL_POLICY := manylinux2014
WHEEL_LINKER := zig
wheel: $(VENV)/.ready
	cd py && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CARGO_TARGET_DIR=$(CURDIR)/target/zig-py \
	  $(if $(MACOSX_DEPLOYMENT_TARGET),RUSTFLAGS="$(REMAP_FLAGS) $(MACOS_FLAGS)") maturin build --release -q $(if $(filter zig,$(WHEEL_LINKER)),--zig) $(REMAP) \
	    $(if $(WHEEL_POLICY),--compatibility $(WHEEL_POLICY)) \
	    --features pyo3/$(ABI)$(if $(filter mingw,$(WHEEL_LINKER)),$(comma)pyo3/generate-import-lib) \
	    $(if $(WHEEL_TARGET),--target $(WHEEL_TARGET)) --out $(WHEEL_OUT)

# The abi3 wheel for Python 3.10+ that `make dist` ships, installed into the venv.
build-py: $(VENV)/.ready
	rm -rf $(WHEEL_OUT)
	$(MAKE) -s wheel ABI=abi3-py310
	$(PY) -m pip install -q --force-reinstall --no-deps $(WHEEL_OUT)/shardring-*.whl

# Regenerates node/index.js and node/index.d.ts (committed; see
# check-generated) from build-release's type definitions, and puts the
# release binary beside them: Node's tests load what npm ships.
build-node: node/node_modules/.package-lock.json build-release
	cd node && node write-index.mjs $(NAPI_TYPE_DEFS)
	cp $(ZIG_RELEASE)/libshardring_node.so node/shardring.linux-x64-gnu.node
	cd examples/node && npm install --no-audit --no-fund --silent

# Every release artefact into build/dist (RELEASING.md): abi3 manylinux2014
# wheels and the sdist, the npm package and its linux-x64-gnu binary package,
# the libring tarball, the crates; binaries linked against glibc 2.17 by zig.
# After build-node, which rewrites node/index.js and index.d.ts that dist packs.
dist: $(VENV)/.ready node/node_modules/.package-lock.json | build-node
	bash release/dist.sh

# make dist for the platforms of release/platforms.json named in PLATFORMS
# (npm names; default: all, every one; cross: all but this machine's): the
# others than this machine's are cross-built here (build-target, make wheel
# WHEEL_TARGET=...).
PLATFORMS := all
dist-all: $(VENV)/.ready node/node_modules/.package-lock.json | build-node
	@$(MAKE) -s system-deps DEB_PACKAGES="$(PLATFORM_PACKAGES)"
	DIST_PLATFORMS="$(PLATFORMS)" bash release/dist.sh

# Cargo.toml's version is the one in every other file (RELEASING.md).
check-versions: build-cli
	python3 release/check_versions.py

# Each artefact installed and used as a user would, without cargo or rustc
# on PATH (release/install-test.sh).
test-install: dist build-c
	bash release/install-test.sh

# LICENSE-MIT and LICENSE-APACHE ship in every artefact: the publishable
# crates (core/ links them), the wheels above and an sdist (py/ links them),
# and the npm tarball (node/ holds copies: npm packs no symlinks; the check
# fails when a copy differs from the root's).
check-licenses: dist
	bash .ci/licenses.sh build/dist

# The artefacts of the other platforms, run here where an emulator can
# (RELEASING.md, "Platforms"). Not part of `make test`: CI runs it after.
# They are packed without this machine's (make test packed those already;
# dist's DIST_PLATFORMS=cross: every platform of release/platforms.json but
# this one), so build/dist/ then lacks them; publish from a plain `make dist-all`.
#   Linux arm64 (glibc), under qemu-user: the libring tarball (C), the
#   wheels and the npm packages (release/test-arm64.sh);
#   Linux musl, x86_64 natively and arm64 under qemu-user: C against the
#   libring tarball; the wheels and the .node checked (release/test-musl.sh).
#   macOS arm64 and x86_64, which nothing here runs: every Mach-O file
#   checked, C linked against the tarball (release/test-macos.sh).
#   Windows x86_64, under Wine: C against ring.dll; the wheels checked
#   (release/test-windows.sh).
PLATFORM_PACKAGES := qemu-user-static binutils-aarch64-linux-gnu wine64 gcc-mingw-w64-x86-64 llvm
test-platforms: build-c | build-node
	$(MAKE) dist-all PLATFORMS=cross
	bash release/test-arm64.sh
	bash release/test-musl.sh
	bash release/test-macos.sh
	bash release/test-windows.sh

# (The fuzz crate is outside the workspace: `make fuzz`, which CI runs after
# `make test`, builds it against today's API.)
clippy: $(VENV)/.ready
	cargo clippy --workspace --all-targets -- -D warnings

# test-rust, test-fleet and bench-smoke each select cargo's default members
# (plain `cargo test`, `--examples`, `--bench '*'`), so cargo resolves the same
# dependency features for all three and compiles the dependencies once; a
# `-p` list of its own made each rebuild 56 to 89 crates (83 s here).
test-rust:
	cargo test

# The C suites, each under valgrind memcheck and again built with
# AddressSanitizer + UndefinedBehaviorSanitizer against libring.a (LeakSanitizer
# on): zero errors, zero leaks either way. Then the C++ wrapper's test, and the
# example built from a staged install via pkg-config and statically.
C_TESTS := vectors errors api threads bounded bad_inputs version follower transition hot
TEST_CFLAGS := $(CFLAGS) -DRING_CRATE_VERSION='"$(VERSION)"'
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-c: build-c
	for t in $(C_TESTS); do cc $(TEST_CFLAGS) -pthread ffi-c/tests/$$t.c $(LDRING) -ljansson -lm -o build/c-$$t; done
	for t in $(C_TESTS); do cc $(TEST_CFLAGS) $(SANITIZE) -pthread ffi-c/tests/$$t.c $(LIBDIR)/libring.a -ljansson -lm -ldl -o build/asan-$$t; done
	c++ $(CXXFLAGS) ffi-c/tests/wrapper.cpp $(LDRING) -ljansson -o build/cpp-wrapper
	c++ $(CXXFLAGS) $(SANITIZE) ffi-c/tests/wrapper.cpp $(LIBDIR)/libring.a -ljansson -lm -ldl -pthread -o build/asan-cpp-wrapper
	for t in $(C_TESTS); do $(VALGRIND) build/c-$$t testdata/vectors.json || exit 1; done
	for t in $(C_TESTS); do ASAN_OPTIONS=detect_leaks=1 build/asan-$$t testdata/vectors.json || exit 1; done
	$(VALGRIND) build/cpp-wrapper testdata/vectors.json
	ASAN_OPTIONS=detect_leaks=1 build/asan-cpp-wrapper testdata/vectors.json
	@# Every exported function (each a set of unsafe blocks) is exercised by a C
	@# test, and wrapped by the C++ header.
	@for f in $$(grep -oE 'ring_[a-z_]+\(' include/ring.h | tr -d '(' | sort -u); do \
	  grep -q "$$f(" ffi-c/tests/*.c ffi-c/tests/*.cpp || { echo "no C test calls $$f"; exit 1; }; \
	  grep -qE "$$f\(|, $$f>" include/ring.hpp || { echo "include/ring.hpp does not wrap $$f"; exit 1; }; done
	@# So is every function the library exports, including those no longer
	@# declared in ring.h that programs built against earlier headers call.
	@for f in $$(nm -D --defined-only $(LIBDIR)/libring.so | awk '$$3 ~ /^ring_/ {print $$3}'); do \
	  grep -qw "$$f" ffi-c/tests/*.c ffi-c/tests/*.cpp || { echo "libring.so exports $$f, which no C test calls"; exit 1; }; done
	@# Every call to a function returning a ring_result goes through check.h's
	@# no-RING_PANIC assertion.
	@for f in $$(grep -oE '^ring_result ring_[a-z_]+\(' include/ring.h | sed 's/^ring_result //; s/($$//'); do \
	  grep -qF "#define $$f(...) RING_NO_PANIC($$f, __VA_ARGS__)" ffi-c/tests/check.h \
	    || { echo "ffi-c/tests/check.h does not assert that $$f never returns RING_PANIC"; exit 1; }; done
	$(MAKE) -s check-cxx-minimum
	$(MAKE) -s check-install
	bash ffi-c/tests/readme.sh

# The C++ minimum stated in ring.hpp and docs/c-api.md is enforced by the header:
# compiled as C++14 it must fail with the header's own `#error` (a failure for
# any other reason, e.g. a guard that no longer fires, does not count).
check-cxx-minimum:
	@guard=$$(sed -n 's/^#error "\(.*\)"$$/\1/p' include/ring.hpp); \
	test -n "$$guard" || { echo "include/ring.hpp has no #error guard"; exit 1; }; \
	if out=$$(c++ -std=c++14 -Iinclude -fsyntax-only -x c++ include/ring.hpp 2>&1); then \
	  echo "include/ring.hpp compiled as C++14: its C++17 guard did not fire"; exit 1; fi; \
	grep -qF "error: #error \"$$guard\"" <<<"$$out" || { \
	  echo "include/ring.hpp failed as C++14, but not with its own #error:"; echo "$$out" | head -20; exit 1; }

# Installs into a staging prefix, builds the example from it with pkg-config
# (shared, and static with `pkg-config --static` alone), checks the SONAME, the
# versioned file and its symlinks, and that uninstall leaves the prefix empty.
STAGE := $(CURDIR)/build/stage
check-install: build-c
	readelf -d $(LIBDIR)/libring.so | grep -F 'Library soname: [$(SONAME)]'
	rm -rf $(STAGE)
	$(MAKE) -s install PREFIX=$(STAGE)
	test -f $(STAGE)/lib/libring.so.$(VERSION) && ! test -L $(STAGE)/lib/libring.so.$(VERSION)
	test "$$(readlink $(STAGE)/lib/$(SONAME))" = libring.so.$(VERSION)
	test "$$(readlink $(STAGE)/lib/libring.so)" = $(SONAME)
	readelf -d $(STAGE)/lib/libring.so.$(VERSION) | grep -F 'Library soname: [$(SONAME)]'
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig; export PKG_CONFIG_PATH; \
	  cc -O2 examples/c/place_words.c $$(pkg-config --cflags --libs ring) -Wl,-rpath,$(STAGE)/lib -o build/place_words_pc; \
	  cc -static -O2 examples/c/place_words.c $$(pkg-config --cflags --libs --static ring) -o build/place_words_static 2>&1 \
	    | { grep -v -e 'in statically linked applications requires at runtime' -e 'in function .std::' || true; }
	readelf -d build/place_words_pc | grep -F 'Shared library: [$(SONAME)]'
	! readelf -d build/place_words_static | grep -F NEEDED
	build/place_words_pc examples/cluster.json testdata/vectors.json | tail -1
	build/place_words_static examples/cluster.json testdata/vectors.json | tail -1
	$(MAKE) -s uninstall PREFIX=$(STAGE)
	test -z "$$(find $(STAGE) -mindepth 1)" || { echo "uninstall left:"; find $(STAGE) -mindepth 1; exit 1; }
	rmdir $(STAGE)

# Installs under DESTDIR + PREFIX: lib/libring.so.X.Y.Z with the symlinks
# $(SONAME) (what programs load) and libring.so (what -lring finds),
# libring.a, include/ring.h and ring.hpp, lib/pkgconfig/ring.pc.
PREFIX ?= /usr/local
DEST = $(DESTDIR)$(PREFIX)
INSTALLED := lib/libring.so.$(VERSION) lib/$(SONAME) lib/libring.so lib/libring.a \
  include/ring.h include/ring.hpp lib/pkgconfig/ring.pc
install: build-c
	$(MAKE) -s install-files

# install without building: LIBDIR names the build whose libraries go in
# (release/dist.sh stages the zig-linked one), PC_PREFIX the prefix ring.pc
# gives (default PREFIX; the tarball's is relative to ring.pc itself).
PC_PREFIX ?= $(PREFIX)
install-files:
	install -d $(DEST)/lib/pkgconfig $(DEST)/include
	install -m 644 $(LIBDIR)/libring.so $(DEST)/lib/libring.so.$(VERSION)
	ln -sfn libring.so.$(VERSION) $(DEST)/lib/$(SONAME)
	ln -sfn $(SONAME) $(DEST)/lib/libring.so
	install -m 644 $(LIBDIR)/libring.a $(DEST)/lib/
	install -m 644 include/ring.h include/ring.hpp $(DEST)/include/
	sed -e 's|@PREFIX@|$(PC_PREFIX)|' -e 's|@VERSION@|$(VERSION)|' ffi-c/ring.pc.in > $(DEST)/lib/pkgconfig/ring.pc

# Removes exactly the files install writes, then those of its directories
# that are left empty (never a directory holding anything else).
uninstall:
	rm -f $(addprefix $(DEST)/,$(INSTALLED))
	for d in lib/pkgconfig lib include; do \
	  if [ -d $(DEST)/$$d ]; then rmdir --ignore-fail-on-non-empty $(DEST)/$$d; fi; done

# Two workers, each taking whole test files (a module's servers start once):
# most tests wait on servers, so two overlap well even beside another suite.
test-py: build-py build-cli build-node build-c
	$(PY) -m pytest -q -n 2 --dist loadfile py/tests

# 3 member agents and 12 followers (3 each in Rust, C, Python, Node) on a
# real etcd through 200 membership changes: one fingerprint after each.
test-fleet: build
	cargo build -q --examples
	$(PY) membership/tests/fleet.py

# build-cli: fingerprint.test.mjs compares fingerprints with the CLI's text.
test-node: build-node build-cli
	cd node && npm test

# Generated files are committed; regenerate them and fail when they changed.
# (testdata/vectors.json is checked by `cargo test`: core/tests/vectors.rs;
# docs/bad-inputs.md is rendered from testdata/bad-inputs.json; cbindgen runs
# in ffi-c's build script under the `header` feature, which build-release
# turns on; the script reruns when ffi-c/src or cbindgen.toml change, so a
# hand edit of ring.h alone needs `cargo check -p shardring-ffi --features header`.)
check-generated: build-node build-release
	git diff --exit-code -- include/ring.h node/index.d.ts node/index.js \
	  || { echo "generated files are stale: commit the regenerated versions above"; exit 1; }
	python3 testdata/bad_inputs.py --check

# A fresh clone of HEAD builds, and checks every crate and its tests,
# with plain cargo and no venv (a Rust developer's first commands, and
# rust-analyzer's), in target/ beside the other debug builds, whose
# dependencies it reuses. After every other suite that builds there: the
# clone's crates have the same file names as the checkout's (cargo hashes
# their path relative to the workspace), so rebuilding them removes the
# rlib a running `cargo test`'s doc-tests link (make test's -j2 hit this).
check-fresh-clone: | clippy test-rust test-fleet check-generated bench-smoke
	bash .ci/fresh-clone.sh
