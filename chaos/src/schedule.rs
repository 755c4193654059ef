//! The fault schedule: which faults a run injects, when, into whom and
//! with what parameters, as a pure function of the seed and the game's
//! length, so that a seed names a run.
//!
//! Rules it keeps (each has a test below):
//! - The same seed and length give the same schedule: every choice comes
//!   from one [`SplitMix64`] seeded with the run's seed.
//! - Times are game time: a fault fires once the game has reached its
//!   tick, not at a moment of the wall clock, so a loaded machine that
//!   runs the game slowly meets the same faults at the same points of the
//!   game.
//! - Nothing happens in the first [`QUIET_START_SECS`] (the game starts
//!   and the first snapshots are verified) nor in the last
//!   [`QUIET_END_SECS`] (every answer is in before the bots end).
//! - Every kind of fault is in every run, the desync exactly once, and the
//!   server is restarted once more every five minutes.
//! - Each fault has the game to itself for its span (its own length plus
//!   the time its answer takes), so no two overlap and every answer is
//!   unambiguous: nothing else happens while a bot is frozen, a link is
//!   bad, or the server is down and its players coming back.

use std::fmt;

use lockstep_conditioner::{GilbertElliott, LinkConfig, SplitMix64};

/// Ticks per second of game time (the server's default tick rate, which
/// the run keeps).
pub const TICK_RATE: u32 = 60;

/// Bots in the game, `bot1` to `bot6`.
pub const BOTS: u8 = 6;

/// The bots whose packets pass through the run's UDP proxy, so that a
/// `link` fault can impair their links; the others connect directly.
pub const PROXIED: [Bot; 2] = [Bot(5), Bot(6)];

/// Game seconds at the start with no fault: the game starts and its first
/// snapshots are verified, so a bot killed after it rejoins from one.
pub const QUIET_START_SECS: u32 = 10;

/// Game seconds at the end with no fault and no answer still awaited: the
/// bots end the game with every fault behind them.
pub const QUIET_END_SECS: u32 = 15;

/// The shortest run: six faults and their answers fit in two minutes of
/// game, not in one.
pub const MIN_MINUTES: u32 = 2;

/// Game time a restarted bot needs to be back in the game: the process
/// starts, connects, fast-forwards from the latest snapshot and takes
/// its slot again, with room for a loaded machine.
const REJOIN_MS: u32 = 6_000;

/// Extra faults fill at most this share of the time between the quiet
/// ends; the rest is gaps, so the game also plays undisturbed.
const FILL_PERCENT: u32 = 50;

/// Why a schedule cannot be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The game is too short for every kind of fault.
    #[error("a chaos run needs at least {MIN_MINUTES} minutes of game, not {0}")]
    TooShort(u32),
    /// The game is too long for the replay's tick numbers.
    #[error("{0} minutes of game are more ticks than a run can count")]
    TooLong(u32),
}

/// A bot, by number: `Bot(3)` plays as `bot3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bot(pub u8);

impl Bot {
    /// Every bot of the game, in order.
    pub fn all() -> impl Iterator<Item = Bot> {
        (1..=BOTS).map(Bot)
    }

    /// Whether its link passes through the proxy.
    pub fn is_proxied(self) -> bool {
        PROXIED.contains(&self)
    }
}

impl fmt::Display for Bot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bot{}", self.0)
    }
}

/// The kinds of fault, in the order the summary counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A bot SIGKILLed and started again.
    Kill,
    /// A bot SIGSTOPped, then SIGCONTed.
    Stop,
    /// Loss bursts and latency on a proxied bot's link.
    Link,
    /// A second spectator comes and goes.
    Spectator,
    /// The server SIGKILLed and resumed from its replay.
    Server,
    /// A bot restarted with a desync injected, then restarted clean.
    Desync,
}

impl Kind {
    /// Every kind, in summary order.
    pub const ALL: [Kind; 6] = [
        Kind::Kill,
        Kind::Stop,
        Kind::Link,
        Kind::Spectator,
        Kind::Server,
        Kind::Desync,
    ];

    /// The kind's word in the history and the summary.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Kill => "kill",
            Kind::Stop => "stop",
            Kind::Link => "link",
            Kind::Spectator => "spectator",
            Kind::Server => "server",
            Kind::Desync => "desync",
        }
    }
}

/// How a spectator leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leave {
    /// SIGTERM.
    Term,
    /// SIGKILL.
    Kill,
}

/// What a bad link does while its window lasts, in each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkPlan {
    /// One-way latency added.
    pub latency_ms: u32,
    /// Largest deviation from it, either way.
    pub jitter_ms: u32,
    /// Average loss, in bursts.
    pub loss_pct: u32,
    /// Mean length of a burst, in packets.
    pub burst_len: u32,
    /// Seed of the link's losses.
    pub seed: u64,
}

impl LinkPlan {
    /// The conditioner's model of this link.
    pub fn config(&self) -> LinkConfig {
        let loss = f64::from(self.loss_pct) / 100.0;
        LinkConfig {
            latency: std::time::Duration::from_millis(u64::from(self.latency_ms)),
            jitter: std::time::Duration::from_millis(u64::from(self.jitter_ms)),
            // Every plan the schedule draws is reachable: bursts of two
            // or more packets reach any loss below two thirds.
            burst: GilbertElliott::from_average_loss(loss, f64::from(self.burst_len)).ok(),
            seed: self.seed,
            ..LinkConfig::default()
        }
    }
}

/// One fault and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL `bot`, start it again at once with the same name.
    Kill {
        /// Who.
        bot: Bot,
    },
    /// SIGSTOP `bot` for `ms`, then SIGCONT.
    Stop {
        /// Who.
        bot: Bot,
        /// How long it stays frozen.
        ms: u32,
    },
    /// Impair a proxied bot's link for `ms`.
    Link {
        /// Whose link.
        bot: Bot,
        /// How long the window lasts.
        ms: u32,
        /// What the link does meanwhile.
        plan: LinkPlan,
    },
    /// A second spectator joins, watches for `ms`, and leaves by `leave`.
    Spectator {
        /// How long it watches, from its start.
        ms: u32,
        /// How it goes.
        leave: Leave,
    },
    /// SIGKILL the server; `down_ms` later start it again with `--resume`
    /// on its replay, on the same port with the same identity.
    Server {
        /// How long it stays dead.
        down_ms: u32,
    },
    /// Restart `bot` with `--inject-desync-at` the game's tick plus
    /// `lead`; once the server names the desync, restart it clean.
    Desync {
        /// Who.
        bot: Bot,
        /// Ticks between the restart and the first nudged tick: time to
        /// rejoin first.
        lead: u32,
    },
}

impl Fault {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        match self {
            Fault::Kill { .. } => Kind::Kill,
            Fault::Stop { .. } => Kind::Stop,
            Fault::Link { .. } => Kind::Link,
            Fault::Spectator { .. } => Kind::Spectator,
            Fault::Server { .. } => Kind::Server,
            Fault::Desync { .. } => Kind::Desync,
        }
    }

    /// The bot it is done to, if any.
    pub fn bot(&self) -> Option<Bot> {
        match *self {
            Fault::Kill { bot }
            | Fault::Stop { bot, .. }
            | Fault::Link { bot, .. }
            | Fault::Desync { bot, .. } => Some(bot),
            Fault::Spectator { .. } | Fault::Server { .. } => None,
        }
    }

    /// Game time, in milliseconds, the fault keeps to itself: its own
    /// length and its answer's.
    pub fn span_ms(&self) -> u32 {
        match *self {
            Fault::Kill { .. } => REJOIN_MS,
            // Stand-ins end, or the bot reconnects after QUIC's 5 s of
            // silence and rejoins.
            Fault::Stop { ms, .. } => ms + REJOIN_MS,
            Fault::Link { ms, .. } => ms + 4_000,
            // Its catch-up is part of its stay; its leaving is noticed
            // within QUIC's 5 s of silence.
            Fault::Spectator { ms, .. } => ms + 5_000,
            // The game stands still while the server is down, so only
            // what follows its return counts: the players' catch-up.
            Fault::Server { .. } => 5_000,
            // The injected bot rejoins, the desync is found within a hash
            // interval and pinpointed within 3 s, the bot rejoins clean.
            Fault::Desync { lead, .. } => ticks_to_ms(lead) + 4_000 + REJOIN_MS + 2_000,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::Kill { bot } => write!(f, "kill {bot}"),
            Fault::Stop { bot, ms } => write!(f, "stop {bot} for {}", Secs(ms)),
            Fault::Link { bot, ms, plan } => write!(
                f,
                "link {bot} for {}: {} ms +-{} ms, {}% lost in bursts of {}",
                Secs(ms),
                plan.latency_ms,
                plan.jitter_ms,
                plan.loss_pct,
                plan.burst_len
            ),
            Fault::Spectator { ms, leave } => write!(
                f,
                "spectator for {}, then {}",
                Secs(ms),
                match leave {
                    Leave::Term => "SIGTERM",
                    Leave::Kill => "SIGKILL",
                }
            ),
            Fault::Server { down_ms } => {
                write!(f, "server down for {}, then --resume", Secs(down_ms))
            }
            Fault::Desync { bot, lead } => {
                write!(f, "desync {bot} {lead} ticks after its restart")
            }
        }
    }
}

/// Milliseconds shown as seconds with one decimal, cut (not rounded), as
/// the schedule shows them.
pub struct Secs(pub u32);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{} s", self.0 / 1000, self.0 % 1000 / 100)
    }
}

/// Game milliseconds as ticks.
fn ms_to_ticks(ms: u32) -> u32 {
    ms * TICK_RATE / 1000
}

/// Ticks as game milliseconds.
fn ticks_to_ms(ticks: u32) -> u32 {
    ticks * 1000 / TICK_RATE
}

/// A fault and the game tick it fires at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    /// It fires once the game has bundled this many ticks.
    pub tick: u32,
    /// What it does.
    pub fault: Fault,
}

/// Every fault of a run, in firing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The run's seed.
    pub seed: u64,
    /// Minutes of game.
    pub minutes: u32,
    /// The faults, by tick.
    pub faults: Vec<Planned>,
}

impl Schedule {
    /// The schedule of the run `seed` over `minutes` of game.
    pub fn plan(seed: u64, minutes: u32) -> Result<Schedule, ScheduleError> {
        if minutes < MIN_MINUTES {
            return Err(ScheduleError::TooShort(minutes));
        }
        // The game's length in milliseconds must fit a u32.
        if minutes > 1_000 {
            return Err(ScheduleError::TooLong(minutes));
        }
        let mut draw = Draw(SplitMix64::new(seed, 0));
        let window_ms = (minutes * 60 - QUIET_START_SECS - QUIET_END_SECS) * 1000;
        let mut faults: Vec<Fault> = Kind::ALL.iter().map(|&k| draw.fault(k)).collect();
        for _ in 0..minutes / 5 {
            faults.push(draw.fault(Kind::Server));
        }
        let budget = window_ms * FILL_PERCENT / 100;
        let extras = [
            Kind::Kill,
            Kind::Stop,
            Kind::Link,
            Kind::Spectator,
            Kind::Server,
        ];
        loop {
            let kind = extras[draw.below(extras.len() as u32) as usize];
            let fault = draw.fault(kind);
            if span_of(&faults) + fault.span_ms() > budget {
                break;
            }
            faults.push(fault);
        }
        draw.shuffle(&mut faults);
        // What the spans leave free is spread over the gaps before,
        // between and after the faults, in random shares.
        let free = u64::from(window_ms.saturating_sub(span_of(&faults)));
        let weights: Vec<u64> = (0..=faults.len())
            .map(|_| u64::from(draw.between(1, 1000)))
            .collect();
        let total: u64 = weights.iter().sum();
        let mut at = QUIET_START_SECS * 1000;
        let mut planned = Vec::with_capacity(faults.len());
        for (fault, weight) in faults.into_iter().zip(&weights) {
            at += u32::try_from(free * weight / total).unwrap_or(0);
            planned.push(Planned {
                tick: ms_to_ticks(at),
                fault,
            });
            at += fault.span_ms();
        }
        Ok(Schedule {
            seed,
            minutes,
            faults: planned,
        })
    }

    /// Ticks in the game: every bot plays this many.
    pub fn ticks(&self) -> u32 {
        self.minutes * 60 * TICK_RATE
    }

    /// The last tick a fault may fire at or wait for its answer until.
    pub fn last_fault_tick(&self) -> u32 {
        self.ticks() - QUIET_END_SECS * TICK_RATE
    }

    /// How many faults of `kind` it holds.
    pub fn count(&self, kind: Kind) -> usize {
        self.faults
            .iter()
            .filter(|p| p.fault.kind() == kind)
            .count()
    }
}

impl fmt::Display for Schedule {
    /// One line per fault: `planned N at tick T: FAULT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, planned) in self.faults.iter().enumerate() {
            writeln!(
                f,
                "planned {} at tick {}: {}",
                i + 1,
                planned.tick,
                planned.fault
            )?;
        }
        Ok(())
    }
}

/// The spans of `faults` together.
fn span_of(faults: &[Fault]) -> u32 {
    faults.iter().map(Fault::span_ms).sum()
}

/// The schedule's random choices.
struct Draw(SplitMix64);

impl Draw {
    /// Uniform in `0..n` (`n > 0`); the modulo's bias is far below
    /// anything a schedule shows.
    fn below(&mut self, n: u32) -> u32 {
        (self.0.next_u64() % u64::from(n)) as u32
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(hi - lo + 1)
    }

    fn bot(&mut self) -> Bot {
        Bot(self.between(1, u32::from(BOTS)) as u8)
    }

    /// A fault of `kind` with its parameters drawn.
    fn fault(&mut self, kind: Kind) -> Fault {
        match kind {
            Kind::Kill => Fault::Kill { bot: self.bot() },
            Kind::Stop => Fault::Stop {
                bot: self.bot(),
                ms: self.between(1_000, 10_000),
            },
            Kind::Link => {
                let bot = PROXIED[self.below(PROXIED.len() as u32) as usize];
                let ms = self.between(3_000, 8_000);
                let latency_ms = self.between(20, 120);
                let plan = LinkPlan {
                    latency_ms,
                    jitter_ms: self.between(0, latency_ms / 4),
                    loss_pct: self.between(10, 35),
                    burst_len: self.between(2, 12),
                    seed: self.0.next_u64(),
                };
                Fault::Link { bot, ms, plan }
            }
            Kind::Spectator => Fault::Spectator {
                ms: self.between(4_000, 10_000),
                leave: if self.below(2) == 0 {
                    Leave::Term
                } else {
                    Leave::Kill
                },
            },
            Kind::Server => Fault::Server {
                down_ms: self.between(0, 2_000),
            },
            Kind::Desync => Fault::Desync {
                bot: self.bot(),
                lead: self.between(6 * TICK_RATE, 10 * TICK_RATE),
            },
        }
    }

    /// Fisher-Yates.
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(seed: u64, minutes: u32) -> Schedule {
        Schedule::plan(seed, minutes).unwrap()
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        assert_eq!(plan(7, 2), plan(7, 2));
        assert_eq!(plan(7, 10), plan(7, 10));
        assert_ne!(plan(7, 2), plan(8, 2));
    }

    #[test]
    fn every_kind_is_in_every_two_minute_run_and_the_desync_once() {
        for seed in 0..500 {
            let schedule = plan(seed, 2);
            for kind in Kind::ALL {
                assert!(schedule.count(kind) >= 1, "seed {seed}: no {kind:?}");
            }
            assert_eq!(schedule.count(Kind::Desync), 1, "seed {seed}");
        }
    }

    #[test]
    fn a_ten_minute_run_restarts_the_server_at_least_twice() {
        for seed in 0..200 {
            let schedule = plan(seed, 10);
            assert!(schedule.count(Kind::Server) >= 2, "seed {seed}");
            assert_eq!(schedule.count(Kind::Desync), 1, "seed {seed}");
        }
    }

    #[test]
    fn faults_keep_out_of_the_quiet_ends_and_out_of_each_others_spans() {
        for minutes in [2, 3, 10, 30] {
            for seed in 0..100 {
                let schedule = plan(seed, minutes);
                let faults = &schedule.faults;
                assert!(faults[0].tick >= QUIET_START_SECS * TICK_RATE);
                for pair in faults.windows(2) {
                    let end = pair[0].tick + ms_to_ticks(pair[0].fault.span_ms());
                    assert!(end <= pair[1].tick, "seed {seed}: {pair:?} overlap");
                }
                let last = faults[faults.len() - 1];
                let end = last.tick + ms_to_ticks(last.fault.span_ms());
                assert!(end <= schedule.last_fault_tick(), "seed {seed}: {last:?}");
            }
        }
    }

    #[test]
    fn nothing_is_done_while_the_server_is_down_and_its_players_come_back() {
        for seed in 0..200 {
            let schedule = plan(seed, 10);
            for pair in schedule.faults.windows(2) {
                if let Fault::Server { .. } = pair[0].fault {
                    assert!(pair[1].tick >= pair[0].tick + 5 * TICK_RATE, "{pair:?}");
                }
            }
        }
    }

    #[test]
    fn parameters_stay_in_their_ranges() {
        for seed in 0..300 {
            for planned in plan(seed, 10).faults {
                match planned.fault {
                    Fault::Stop { ms, .. } => assert!((1_000..=10_000).contains(&ms)),
                    Fault::Link { bot, plan, .. } => {
                        assert!(bot.is_proxied(), "{bot}");
                        let config = plan.config();
                        assert!(config.burst.is_some(), "{plan:?} is unreachable");
                        assert!(config.jitter <= config.latency);
                    }
                    Fault::Desync { lead, .. } => {
                        assert!((6 * TICK_RATE..=10 * TICK_RATE).contains(&lead));
                    }
                    Fault::Kill { bot } => assert!((1..=BOTS).contains(&bot.0)),
                    Fault::Spectator { ms, .. } => assert!(ms >= 4_000),
                    Fault::Server { down_ms } => assert!(down_ms <= 2_000),
                }
            }
        }
    }

    #[test]
    fn a_run_shorter_than_two_minutes_is_refused() {
        assert_eq!(Schedule::plan(1, 1), Err(ScheduleError::TooShort(1)));
        assert!(Schedule::plan(1, MIN_MINUTES).is_ok());
    }

    #[test]
    fn a_longer_run_has_more_faults() {
        assert!(plan(3, 10).faults.len() > plan(3, 2).faults.len() + 10);
    }
}
