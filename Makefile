# The two commands a newcomer runs: `make demo` and `make test`.
# Both install what they need first (see scripts/install-deps.sh).

CARGO ?= cargo

.PHONY: all deps build demo test determinism cross web fuzz clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release --bins

# A server and three client windows on this machine: one you play, two bots.
demo: build
	@scripts/demo.sh

# Every test: unit, QUIC integration on loopback, and rendering under Xvfb.
# The binaries are built first because the end-to-end tests run them as
# separate processes. Then the crate layout's promises: the game and the
# engine need no SDL2, tokio, quinn or TLS, and the client builds headless.
test: deps
	$(CARGO) build --bins
	$(CARGO) test --workspace
	@scripts/check-layout.sh

# Builds the client under eight compiler configurations (debug, release,
# opt-level 1 and s, fat LTO, target-cpu x86-64, x86-64-v3 and native) and
# checks they all end the golden games on the same, pinned hashes. Takes
# minutes, so it is not part of `make test`; see DETERMINISM.md.
determinism: deps
	@scripts/determinism.sh

# Determinism across architectures: builds the headless client for aarch64,
# i686 and Windows and the simulation for wasm32 with Debian's compiler,
# runs every golden game and a long one on each (under qemu, the i686
# loader, wine and node), plays a live game of native, aarch64, i686 and
# Windows bots, and verifies its replay on every target. Installs what it
# needs (about 2 GB of packages). See DETERMINISM.md.
cross:
	@scripts/install-deps.sh cross
	$(CARGO) build --bins
	@scripts/cross-build.sh
	@scripts/cross-check.sh

# The browser's page in target/web, which lockstep-server serves at
# http://HOST:PORT/: the peer (web/) compiled to wasm32 with Debian's
# compiler, its wasm-bindgen binding (the CLI, exactly 0.2.130, is installed
# into target/tools the first time, in a few minutes) and web/static/.
web:
	@scripts/install-deps.sh web
	@test -x target/tools/bin/wasm-bindgen || \
		$(CARGO) install wasm-bindgen-cli --version =0.2.130 --locked --root target/tools
	@scripts/build-web.sh

# Runs every fuzz target (protocol decoding, stream framing, replay files)
# for FUZZ_SECONDS each, default 60, under cargo-fuzz and nightly Rust, both
# installed if missing. Not part of `make test`; see FUZZING.md.
fuzz:
	@scripts/fuzz.sh

clean:
	$(CARGO) clean
