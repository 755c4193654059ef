//! The system benchmarks of lockstep, in `benches/`: each one is a plain
//! binary (`harness = false`) that prints its figures, run with
//! `cargo bench -p lockstep-bench --bench NAME`; BENCHMARKS.md has the
//! commands, the options and the results. The library itself is empty.
//!
//! They live in a crate of their own because they use both ends: the relay
//! bench's floor runs on the server's endpoint and identity code, and its
//! in-process clients check the server's certificate like the client. The
//! client and the server then need not depend on each other, not even for
//! their tests.
