//! What tests and measurements turn on to make this client behave as
//! real play never does, gathered here so that the options a player sets
//! hold none of it: every field is off by default, and the command line
//! sets them only through hidden flags.

use std::time::Duration;

use lockstep_protocol::Tick;

/// Departures from real play in joining and in the link, for tests and
/// measurements only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestHooks {
    /// Announce this protocol version instead of the real one (to test
    /// the server's refusal).
    pub protocol_version: Option<u16>,
    /// Announce a wrong self-test hash (to test the server's refusal).
    pub perturb_self_test: bool,
    /// The link's own: inputs over the control stream, a send delay.
    pub link: lockstep_link::connection::Hooks,
}

/// Departures from real play in a game's loop, for tests and measurements
/// only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlayHooks {
    /// Send inputs only as frames sample them, never from the network
    /// thread when they fall due (`--inputs-on-frames`, to measure the
    /// difference).
    pub inputs_on_frames: bool,
    /// Make every tick cost extra real time (`--tick-cost-ms`).
    pub tick_cost: Option<TickCost>,
    /// Send the server snapshots one ulp off what this client simulated
    /// (`--corrupt-snapshot`: the server must refuse them).
    pub corrupt_snapshot: bool,
}

/// Real time added to every simulated tick: a machine too slow for the
/// tick rate, played on a fast one, for tests and benchmarks of speed
/// control. Slept rather than spun, like the loop lab's knob: on one
/// machine a busy wait would take a core from the other players, which a
/// slow machine elsewhere would not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickCost {
    /// Extra real time per tick.
    pub per_tick: Duration,
    /// Only the steps up to this tick cost it, later ones nothing (a
    /// machine that recovers); `None`: every step.
    pub until: Option<Tick>,
}

impl TickCost {
    /// Whether the step that reached tick `reached` costs extra.
    pub(crate) fn applies(&self, reached: Tick) -> bool {
        self.until.is_none_or(|until| reached <= until)
    }
}
