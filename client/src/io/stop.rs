//! SIGTERM and SIGINT for a headless client: they no longer end the
//! process on the spot, they ask it to leave. The loop sees the request
//! ([`requested`]) on its next turn, leaves the game with a goodbye (so
//! the server frees the slot at once instead of after its drop timeout),
//! ends a recording cleanly, and exits with an error that names the
//! signal. A windowed client needs none of this: SDL turns both signals
//! into a quit event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

/// Set by the handlers once a signal arrived.
static REQUESTED: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handlers (once; later calls do nothing). A platform that
/// cannot install them keeps the default: the signal ends the process.
pub fn install() {
    REQUESTED.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        #[cfg(unix)]
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
        }
        flag
    });
}

/// Whether SIGTERM or SIGINT asked this process to leave.
pub fn requested() -> bool {
    REQUESTED
        .get()
        .is_some_and(|flag| flag.load(Ordering::Relaxed))
}
