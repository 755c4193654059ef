//! The impairment model: what a link does to each packet.
//!
//! Pure, in the manner of `quinn-proto`: no socket, no clock. The caller says
//! when a packet was sent and gets back when (and whether, and how often) it
//! arrives, both as [`Duration`]s since any epoch the caller likes. Every
//! random choice comes from a generator seeded by [`LinkConfig::seed`], so one
//! sequence of calls always yields the same decisions.
//!
//! Per packet, in this order:
//! 1. **Loss**: independent with probability [`LinkConfig::loss`], and, if
//!    [`LinkConfig::burst`] is set, by a Gilbert–Elliott chain as well.
//! 2. **Delay**: `latency` plus a uniform offset in `[-jitter, +jitter]`,
//!    never below zero.
//! 3. **FIFO**: a packet is delivered no earlier than the packet before it, as
//!    on a real link whose jitter comes from queues. Without this, jitter
//!    alone would reorder packets and QUIC would declare spurious losses.
//! 4. **Reordering**: with probability [`LinkConfig::reorder`] the packet is
//!    held back by up to [`REORDER_MAX_HOLD`] and leaves the FIFO, so later
//!    packets can overtake it.
//! 5. **Duplication**: with probability [`LinkConfig::duplicate`] a second
//!    copy follows with its own delay.

use std::time::Duration;

use crate::burst::{BurstChain, GilbertElliott};
use crate::rng::SplitMix64;

/// Longest extra delay of a reordered packet. It exceeds one 60 Hz tick
/// (16.7 ms), so at game traffic rates at least one later packet overtakes a
/// held-back one, and stays well below QUIC's idle and handshake timeouts.
pub const REORDER_MAX_HOLD: Duration = Duration::from_millis(20);

/// How one direction of a link treats packets. [`Default`] is a perfect link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkConfig {
    /// One-way delay added to every packet.
    pub latency: Duration,
    /// Largest deviation from `latency`, either way; the delay is uniform
    /// in `[latency - jitter, latency + jitter]`, clamped at zero.
    pub jitter: Duration,
    /// Probability in `[0, 1]` that a packet is lost, independently of every
    /// other packet.
    pub loss: f64,
    /// Bursty loss on top of `loss`: a packet survives only if it survives
    /// both.
    pub burst: Option<GilbertElliott>,
    /// Probability in `[0, 1]` that a delivered packet arrives twice.
    pub duplicate: f64,
    /// Probability in `[0, 1]` that a delivered packet is held back so later
    /// packets overtake it.
    pub reorder: f64,
    /// Seed of every random decision: the same seed and traffic give the same
    /// losses, run after run.
    pub seed: u64,
}

impl LinkConfig {
    /// Whether this link leaves every packet alone, so a socket may skip it
    /// entirely and add no latency of its own.
    pub fn is_clean(&self) -> bool {
        self.latency.is_zero()
            && self.jitter.is_zero()
            && !happens(self.loss)
            && self
                .burst
                .is_none_or(|ge| !happens(ge.loss_in_good) && !happens(ge.loss_in_bad))
            && !happens(self.duplicate)
            && !happens(self.reorder)
    }
}

/// Whether an event with probability `p` can ever happen; matches how
/// [`SplitMix64::chance`] treats out-of-range values.
fn happens(p: f64) -> bool {
    p > 0.0
}

/// What the link does with one packet. Times are in the caller's timeline,
/// the same one as the `now` given to [`Impairment::decide`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Never arrives.
    Lost,
    /// Arrives once.
    Delivered {
        /// When it arrives.
        at: Duration,
        /// Whether reordering held it back, so later packets may overtake it.
        held_back: bool,
    },
    /// Arrives twice.
    Duplicated {
        /// When the original arrives.
        at: Duration,
        /// When the copy arrives; it keeps FIFO order with other packets.
        copy_at: Duration,
        /// Whether reordering held the original back.
        held_back: bool,
    },
}

impl Fate {
    /// Arrival times of every copy, original first.
    pub fn arrivals(&self) -> impl Iterator<Item = Duration> {
        let (first, second) = match *self {
            Fate::Lost => (None, None),
            Fate::Delivered { at, .. } => (Some(at), None),
            Fate::Duplicated { at, copy_at, .. } => (Some(at), Some(copy_at)),
        };
        first.into_iter().chain(second)
    }
}

/// One direction of a link: a [`LinkConfig`] plus the state its decisions
/// carry from packet to packet.
#[derive(Clone, Debug)]
pub struct Impairment {
    config: LinkConfig,
    rng: SplitMix64,
    burst: Option<BurstChain>,
    /// Arrival of the latest in-order copy: FIFO keeps every later in-order
    /// copy at or after it.
    fifo_floor: Duration,
}

impl Impairment {
    /// A fresh link. `stream` picks an independent random sequence for the
    /// same seed, so the two directions of one socket, configured alike, do
    /// not lose the same packets.
    pub fn new(config: LinkConfig, stream: u64) -> Self {
        Impairment {
            config,
            rng: SplitMix64::new(config.seed, stream),
            burst: config.burst.map(BurstChain::new),
            fifo_floor: Duration::ZERO,
        }
    }

    /// Decides the fate of one packet sent at `now`. Calls must come in
    /// sending order (`now` never decreasing).
    pub fn decide(&mut self, now: Duration) -> Fate {
        let burst_lost = match &mut self.burst {
            Some(chain) => chain.lose(&mut self.rng),
            None => false,
        };
        if burst_lost || self.rng.chance(self.config.loss) {
            return Fate::Lost;
        }
        let held_back = self.rng.chance(self.config.reorder);
        let at = if held_back {
            let in_order = self.delayed(now).max(self.fifo_floor);
            in_order.saturating_add(self.rng.duration_up_to(REORDER_MAX_HOLD))
        } else {
            self.in_order(now)
        };
        if self.rng.chance(self.config.duplicate) {
            let copy_at = self.in_order(now);
            Fate::Duplicated {
                at,
                copy_at,
                held_back,
            }
        } else {
            Fate::Delivered { at, held_back }
        }
    }

    /// `now` plus latency and jitter, before any FIFO constraint.
    fn delayed(&mut self, now: Duration) -> Duration {
        let jitter = self.config.jitter;
        let offset = self.rng.duration_up_to(jitter.saturating_mul(2));
        let delay = self
            .config
            .latency
            .saturating_add(offset)
            .saturating_sub(jitter);
        now.saturating_add(delay)
    }

    /// An arrival that keeps FIFO order, and moves the FIFO floor to it.
    fn in_order(&mut self, now: Duration) -> Duration {
        let at = self.delayed(now).max(self.fifo_floor);
        self.fifo_floor = at;
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets per statistical test: enough that a rate is within about
    /// 0.3 percentage points of its target at 3 sigma.
    const PACKETS: u32 = 100_000;
    const MS: Duration = Duration::from_millis(1);

    /// Feeds `PACKETS` packets sent 1 ms apart and returns their fates.
    fn run(config: LinkConfig) -> Vec<Fate> {
        let mut link = Impairment::new(config, 0);
        (0..PACKETS).map(|i| link.decide(MS * i)).collect()
    }

    fn fraction(count: usize) -> f64 {
        count as f64 / f64::from(PACKETS)
    }

    fn lost(fates: &[Fate]) -> usize {
        fates.iter().filter(|f| **f == Fate::Lost).count()
    }

    #[test]
    fn default_config_is_clean_and_anything_else_is_not() {
        assert!(LinkConfig::default().is_clean());
        let seeded = LinkConfig {
            seed: 99,
            ..LinkConfig::default()
        };
        assert!(seeded.is_clean(), "a seed alone changes nothing");
        let impaired = [
            LinkConfig {
                latency: MS,
                ..LinkConfig::default()
            },
            LinkConfig {
                jitter: MS,
                ..LinkConfig::default()
            },
            LinkConfig {
                loss: 0.01,
                ..LinkConfig::default()
            },
            LinkConfig {
                burst: Some(GilbertElliott::from_average_loss(0.01, 2.0).unwrap()),
                ..LinkConfig::default()
            },
            LinkConfig {
                duplicate: 0.01,
                ..LinkConfig::default()
            },
            LinkConfig {
                reorder: 0.01,
                ..LinkConfig::default()
            },
        ];
        for config in impaired {
            assert!(!config.is_clean(), "{config:?}");
        }
    }

    #[test]
    fn clean_link_delivers_everything_immediately_and_in_order() {
        let fates = run(LinkConfig::default());
        for (i, fate) in (0..).zip(&fates) {
            assert_eq!(
                *fate,
                Fate::Delivered {
                    at: MS * i,
                    held_back: false
                }
            );
        }
    }

    #[test]
    fn independent_loss_matches_the_configured_rate() {
        let fates = run(LinkConfig {
            loss: 0.1,
            ..LinkConfig::default()
        });
        let rate = fraction(lost(&fates));
        assert!((rate - 0.1).abs() < 0.005, "loss rate {rate}");
    }

    #[test]
    fn gilbert_elliott_loss_comes_in_bursts_of_the_configured_mean_length() {
        let fates = run(LinkConfig {
            burst: Some(GilbertElliott::from_average_loss(0.1, 4.0).unwrap()),
            ..LinkConfig::default()
        });
        let rate = fraction(lost(&fates));
        // Bursts make losses correlated, so the rate wanders more than for
        // independent loss: about 2,500 bursts carry all the variance.
        assert!((rate - 0.1).abs() < 0.015, "loss rate {rate}");

        let mut runs = Vec::new();
        let mut current = 0;
        for fate in &fates {
            if *fate == Fate::Lost {
                current += 1;
            } else if current > 0 {
                runs.push(current);
                current = 0;
            }
        }
        let mean_run = f64::from(runs.iter().sum::<u32>()) / runs.len() as f64;
        assert!((mean_run - 4.0).abs() < 0.3, "mean burst {mean_run}");
        assert!(runs.iter().any(|&r| r >= 10), "long bursts happen too");
    }

    #[test]
    fn independent_loss_rarely_comes_in_runs() {
        let fates = run(LinkConfig {
            loss: 0.1,
            ..LinkConfig::default()
        });
        let pairs = fates
            .windows(2)
            .filter(|w| w[0] == Fate::Lost && w[1] == Fate::Lost)
            .count();
        // P(two in a row) = 1%, against 10% per packet.
        assert!(fraction(pairs) < 0.015, "{pairs} consecutive losses");
    }

    #[test]
    fn jitter_keeps_the_delay_within_latency_plus_or_minus_jitter() {
        let mut link = Impairment::new(
            LinkConfig {
                latency: 20 * MS,
                jitter: 5 * MS,
                ..LinkConfig::default()
            },
            0,
        );
        let mut delays = Vec::new();
        // Sent 10 ms apart, more than the jitter spread, so FIFO never
        // pushes a packet back and the raw delays show.
        for i in 0..10_000 {
            let now = 10 * MS * i;
            let Fate::Delivered { at, .. } = link.decide(now) else {
                panic!("nothing is lost");
            };
            delays.push(at - now);
        }
        let min = delays.iter().min().unwrap();
        let max = delays.iter().max().unwrap();
        assert!(*min >= 15 * MS && *max <= 25 * MS, "{min:?}..{max:?}");
        assert!(*min < 15 * MS + MS / 10 && *max > 25 * MS - MS / 10);
    }

    #[test]
    fn jitter_larger_than_latency_clamps_the_delay_at_zero() {
        let mut link = Impairment::new(
            LinkConfig {
                latency: 2 * MS,
                jitter: 5 * MS,
                ..LinkConfig::default()
            },
            0,
        );
        let mut zero = 0;
        for i in 0..10_000 {
            let now = 20 * MS * i;
            let Fate::Delivered { at, .. } = link.decide(now) else {
                panic!("nothing is lost");
            };
            assert!(at >= now && at <= now + 7 * MS);
            if at == now {
                zero += 1;
            }
        }
        // Offsets in [-5, -2] ms clamp to zero: 3/10 of the packets.
        assert!((2_500..3_500).contains(&zero), "{zero} undelayed packets");
    }

    #[test]
    fn jitter_without_reordering_keeps_packets_in_order() {
        let fates = run(LinkConfig {
            latency: 10 * MS,
            jitter: 10 * MS,
            ..LinkConfig::default()
        });
        let arrivals: Vec<Duration> = fates.iter().flat_map(Fate::arrivals).collect();
        assert_eq!(arrivals.len(), fates.len());
        assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn reordering_lets_later_packets_overtake_held_back_ones() {
        let fates = run(LinkConfig {
            latency: 10 * MS,
            reorder: 0.05,
            ..LinkConfig::default()
        });
        let held = fates
            .iter()
            .filter(|f| {
                matches!(
                    f,
                    Fate::Delivered {
                        held_back: true,
                        ..
                    }
                )
            })
            .count();
        assert!((fraction(held) - 0.05).abs() < 0.005, "{held} held back");

        let arrivals: Vec<Duration> = fates.iter().flat_map(Fate::arrivals).collect();
        let overtaken = arrivals.windows(2).filter(|w| w[0] > w[1]).count();
        assert!(overtaken > held / 2, "{overtaken} of {held} overtaken");

        // Held-back packets do not drag the others along: everything that
        // was not held back still arrives exactly after the latency.
        for (i, fate) in (0..).zip(&fates) {
            if let Fate::Delivered {
                at,
                held_back: false,
            } = fate
            {
                assert_eq!(*at, MS * i + 10 * MS);
            }
        }
    }

    #[test]
    fn held_back_packets_wait_at_most_the_maximum_hold() {
        for fate in run(LinkConfig {
            latency: 10 * MS,
            reorder: 0.5,
            ..LinkConfig::default()
        })
        .iter()
        .zip(0..)
        {
            if let (Fate::Delivered { at, .. }, i) = fate {
                assert!(*at >= MS * i + 10 * MS);
                assert!(*at <= MS * i + 10 * MS + REORDER_MAX_HOLD);
            }
        }
    }

    #[test]
    fn duplication_matches_the_configured_rate() {
        let fates = run(LinkConfig {
            latency: 5 * MS,
            jitter: 2 * MS,
            duplicate: 0.02,
            ..LinkConfig::default()
        });
        let duplicated = fates
            .iter()
            .filter(|f| matches!(f, Fate::Duplicated { .. }))
            .count();
        assert!((fraction(duplicated) - 0.02).abs() < 0.002);
        for fate in &fates {
            if let Fate::Duplicated { at, copy_at, .. } = fate {
                assert!(copy_at >= at, "the copy follows the original");
            }
        }
    }

    fn busy_config(seed: u64) -> LinkConfig {
        LinkConfig {
            latency: 10 * MS,
            jitter: 3 * MS,
            loss: 0.05,
            burst: Some(GilbertElliott::from_average_loss(0.02, 3.0).unwrap()),
            duplicate: 0.01,
            reorder: 0.02,
            seed,
        }
    }

    #[test]
    fn same_seed_gives_identical_decisions() {
        assert_eq!(run(busy_config(42)), run(busy_config(42)));
    }

    #[test]
    fn different_seeds_or_streams_give_different_decisions() {
        assert_ne!(run(busy_config(42)), run(busy_config(43)));
        let mut up = Impairment::new(busy_config(42), 0);
        let mut down = Impairment::new(busy_config(42), 1);
        let up: Vec<Fate> = (0..1000).map(|i| up.decide(MS * i)).collect();
        let down: Vec<Fate> = (0..1000).map(|i| down.decide(MS * i)).collect();
        assert_ne!(up, down);
    }
}
