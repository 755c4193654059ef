# The two commands a newcomer runs: `make demo` and `make test`.
# Both install what they need first (see scripts/install-deps.sh).

CARGO ?= cargo

.PHONY: all deps build web demo test determinism cross probe fuzz clean clean-cache

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@scripts/deps-cache.sh restore target/release
	$(CARGO) build --release --bins
	@scripts/deps-cache.sh save target/release

# The browser peer: the games and the engine compiled to wasm32, and the
# page the server serves to any browser on its LAN, in target/web.
web: deps
	@scripts/install-wasm-bindgen.sh
	@scripts/build-web.sh

# A server and three client windows on this machine: one you play, two bots.
# Its page is served too: open the address it prints in a browser to join.
demo: build web
	@scripts/demo.sh

# Every test: unit, QUIC integration on loopback, rendering under Xvfb, and
# the browser peer in headless Chromium, headless Firefox and WebKitGTK
# (scripts/browser/drive.mjs). The binaries and the page are
# built first because the end-to-end tests run them as separate processes.
# The flock of examples/flock/, a game written outside the workspace, is
# built and tested from its own manifest, into the same target directory
# (its client, flock-client, plays on the stock server in
# server/tests/your_game.rs), and so is its page, after lockstep's, in
# target/flock-wasm (not lockstep's target/wasm: building lockstep-web
# without lockstep's games there overwrote the module lockstep's page
# copies), into target/flock-web (a browser plays it beside
# flock-client in server/tests/your_game_page.rs). Then the crate layout's promises: the game and the engine need no SDL2,
# tokio, quinn or TLS, and the client builds headless; and every Markdown
# file reads as CommonMark should (fences closed, no heading in a code
# block, relative links and anchors that resolve). The compiled
# dependencies come from this machine's cache when another clone built
# them (CONTRIBUTING.md, "Caches"); the page and the binaries build side by
# side, each on the core the other leaves idle. Ends with each stage's
# time.
test:
	@scripts/stage.sh test begin
	@scripts/stage.sh test packages scripts/install-deps.sh
	@scripts/stage.sh test tools scripts/install-wasm-bindgen.sh
	@scripts/stage.sh test "cache restore" scripts/deps-cache.sh restore target/debug
	@scripts/stage.sh test "page and build" scripts/side-by-side.sh \
		page sh -c 'scripts/build-web.sh && LOCKSTEP_WASM_DIR=target/flock-wasm \
		LOCKSTEP_WEB_OUT=target/flock-web scripts/build-web.sh --manifest-path examples/flock/Cargo.toml' \
		-- build $(CARGO) build --bins
	@scripts/stage.sh test "your game" sh -c '$(CARGO) test --manifest-path examples/flock/Cargo.toml \
		--target-dir target && $(CARGO) build --manifest-path examples/flock/Cargo.toml \
		--target-dir target --bins'
	@scripts/stage.sh test "test build" $(CARGO) test --workspace --no-run
	@scripts/stage.sh test "cache save" scripts/deps-cache.sh save target/debug
	@scripts/stage.sh test tests env CARGO=$(CARGO) scripts/run-tests.sh
	@scripts/stage.sh test layout scripts/check-layout.sh
	@scripts/stage.sh test end

# Builds the client under eight compiler configurations (debug, release,
# opt-level 1 and s, fat LTO, target-cpu x86-64, x86-64-v3 and native) and
# checks they all end the golden games on the same, pinned hashes. The
# flock of examples/flock/, a game outside the workspace, is in the same
# matrix: its client is built from its own manifest in every configuration
# and runs its golden table (scripts/determinism.sh --manifest-path names
# other such games). Takes minutes, so it is not part of `make test`; see
# DETERMINISM.md.
determinism: deps
	@scripts/determinism.sh

# Determinism across architectures: builds the headless client for aarch64,
# i686 and Windows and both games' offline programs for wasm32 with
# Debian's compiler, and the flock's (examples/flock/, a game outside the
# workspace, from its own manifest) the same way; runs every golden game of
# the ball game, Topple and the flock and the ball game's long one on each
# (under qemu, the i686 loader, wine and node) and natively, plays a live
# game of the ball game and Topple with native, aarch64, i686, Windows and
# browser bots (a page in Chromium, Firefox and WebKitGTK), verifies each
# replay on every target, and plays every golden row in the page in each
# browser engine under each of its wasm compiler tiers
# (scripts/engine-matrix.sh). Installs what it
# needs (about 2 GB of packages). See DETERMINISM.md. Ends with each
# stage's time (each target's in the checks among them), after make
# test's.
cross:
	@scripts/stage.sh cross begin
	@scripts/stage.sh cross packages sh -c 'scripts/install-deps.sh && scripts/install-deps.sh cross'
	@scripts/stage.sh cross tools scripts/install-wasm-bindgen.sh
	@scripts/stage.sh cross page scripts/build-web.sh
	@scripts/stage.sh cross "cache restore" scripts/deps-cache.sh restore target/debug
	@scripts/stage.sh cross build sh -c '$(CARGO) build --bins && $(CARGO) build \
		--manifest-path examples/flock/Cargo.toml --target-dir target --bins'
	@scripts/stage.sh cross "cross build" scripts/cross-build.sh
	@scripts/stage.sh cross "cross check" scripts/cross-check.sh
	@scripts/stage.sh cross "engine matrix" scripts/engine-matrix.sh
	@scripts/stage.sh cross end

# The rapier probe: builds the physics game's offline program in the eight
# configurations of `make determinism` and for aarch64, i686, Windows and
# wasm32, and runs scenarios that use the parts of rapier the game keeps
# away from (joint limits, a custom shape's continuous collision detection,
# multibodies, parry's BVH log2) beside the game itself. A split in those
# is reported, not failed; the game and limits centred on 0 must agree.
# Installs what `make cross` installs. Rerun after upgrading rapier; see
# DETERMINISM.md.
probe: deps
	@scripts/install-deps.sh cross
	@scripts/probe-physics.sh

# Runs every fuzz target (protocol decoding, stream framing, replay files)
# for FUZZ_SECONDS each, default 60, under cargo-fuzz and nightly Rust, both
# installed if missing. Not part of `make test`; see FUZZING.md.
fuzz:
	@scripts/fuzz.sh

clean:
	$(CARGO) clean

# Forgets this machine's caches (CONTRIBUTING.md, "Caches"): the pinned tools
# and the compiled dependencies every clone shares. The next build makes
# them again.
clean-cache:
	@scripts/clean-cache.sh
