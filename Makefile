# The two commands a newcomer runs: `make demo` and `make test`.
# Both install what they need first (see scripts/install-deps.sh).

CARGO ?= cargo

.PHONY: all deps build demo test clean

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
# separate processes.
test: deps
	$(CARGO) build --bins
	$(CARGO) test --workspace

clean:
	$(CARGO) clean
