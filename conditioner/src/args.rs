//! Command-line flags that describe a link, for the server and client
//! binaries to `#[command(flatten)]`.

use std::time::Duration;

use crate::burst::{BurstError, GilbertElliott};
use crate::impairment::LinkConfig;

/// Network simulation flags. Every flag applies to each direction on its
/// own: on a client, the path to the server gets the latency up *and* down,
/// so the round trip grows by twice `--sim-latency-ms`. Without any flag the
/// link is clean and the conditioner adds nothing.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
// `about = None`: this doc comment is for Rust readers; clap would
// otherwise show it as the description of any command without its own.
#[command(
    next_help_heading = "Network simulation (each direction)",
    about = None,
    long_about = None
)]
pub struct LinkArgs {
    /// One-way delay added in each direction, in milliseconds; the round
    /// trip grows by about twice this.
    #[arg(long = "sim-latency-ms", value_name = "MS", default_value_t = 0)]
    pub latency_ms: u64,
    /// Random variation of that delay, in milliseconds: uniform in
    /// [latency - jitter, latency + jitter]. Packets stay in order.
    #[arg(long = "sim-jitter-ms", value_name = "MS", default_value_t = 0)]
    pub jitter_ms: u64,
    /// Percentage of packets lost in each direction (0-100).
    #[arg(long = "sim-loss-pct", value_name = "PCT", default_value_t = 0.0)]
    pub loss_pct: f64,
    /// Lose packets in bursts of this many on average (>= 1) instead of
    /// independently, keeping --sim-loss-pct as the average loss
    /// (Gilbert-Elliott model).
    #[arg(long = "sim-burst-len", value_name = "PACKETS")]
    pub burst_len: Option<f64>,
    /// Percentage of packets delivered twice (0-100).
    #[arg(long = "sim-dup-pct", value_name = "PCT", default_value_t = 0.0)]
    pub duplicate_pct: f64,
    /// Percentage of packets held back up to 20 ms so later ones overtake
    /// them (0-100).
    #[arg(long = "sim-reorder-pct", value_name = "PCT", default_value_t = 0.0)]
    pub reorder_pct: f64,
    /// Seed of the simulated losses: the same seed and traffic give the same
    /// pattern. Use different seeds on different clients.
    #[arg(
        long = "sim-seed",
        id = "sim_seed",
        value_name = "SEED",
        default_value_t = 0
    )]
    pub seed: u64,
}

/// Why [`LinkArgs::to_config`] refused the flags.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum LinkArgsError {
    /// A percentage flag is outside 0-100 (or not a number).
    #[error("--{flag} must be between 0 and 100, not {value}")]
    PercentOutOfRange {
        /// The flag, without its dashes.
        flag: &'static str,
        /// The value given.
        value: f64,
    },
    /// `--sim-burst-len` cannot produce `--sim-loss-pct`.
    #[error("--sim-burst-len: {0}")]
    Burst(#[from] BurstError),
}

impl LinkArgs {
    /// The [`LinkConfig`] these flags describe; give it to both directions.
    pub fn to_config(&self) -> Result<LinkConfig, LinkArgsError> {
        let loss = probability("sim-loss-pct", self.loss_pct)?;
        let (loss, burst) = match self.burst_len {
            Some(mean_burst) => (
                0.0,
                Some(GilbertElliott::from_average_loss(loss, mean_burst)?),
            ),
            None => (loss, None),
        };
        Ok(LinkConfig {
            latency: Duration::from_millis(self.latency_ms),
            jitter: Duration::from_millis(self.jitter_ms),
            loss,
            burst,
            duplicate: probability("sim-dup-pct", self.duplicate_pct)?,
            reorder: probability("sim-reorder-pct", self.reorder_pct)?,
            seed: self.seed,
        })
    }
}

/// A percentage as a probability, refusing anything outside 0-100.
fn probability(flag: &'static str, percent: f64) -> Result<f64, LinkArgsError> {
    if (0.0..=100.0).contains(&percent) {
        Ok(percent / 100.0)
    } else {
        Err(LinkArgsError::PercentOutOfRange {
            flag,
            value: percent,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        link: LinkArgs,
    }

    fn parse(args: &[&str]) -> LinkArgs {
        Cli::try_parse_from(std::iter::once("test").chain(args.iter().copied()))
            .unwrap()
            .link
    }

    #[test]
    fn no_flags_give_a_clean_link() {
        let config = parse(&[]).to_config().unwrap();
        assert_eq!(config, LinkConfig::default());
        assert!(config.is_clean());
    }

    #[test]
    fn flags_map_onto_the_link_config() {
        let config = parse(&[
            "--sim-latency-ms",
            "40",
            "--sim-jitter-ms",
            "5",
            "--sim-loss-pct",
            "2.5",
            "--sim-dup-pct",
            "1",
            "--sim-reorder-pct",
            "10",
            "--sim-seed",
            "7",
        ])
        .to_config()
        .unwrap();
        assert_eq!(
            config,
            LinkConfig {
                latency: Duration::from_millis(40),
                jitter: Duration::from_millis(5),
                loss: 0.025,
                burst: None,
                duplicate: 0.01,
                reorder: 0.1,
                seed: 7,
            }
        );
    }

    #[test]
    fn burst_length_turns_the_loss_into_gilbert_elliott() {
        let config = parse(&["--sim-loss-pct", "10", "--sim-burst-len", "4"])
            .to_config()
            .unwrap();
        assert_eq!(config.loss, 0.0, "all loss comes from the bursts");
        let burst = config.burst.unwrap();
        assert!((burst.average_loss() - 0.1).abs() < 1e-12);
        assert!((burst.p_bad_to_good - 0.25).abs() < 1e-12);
    }

    #[test]
    fn impossible_values_are_refused_with_the_flag_named() {
        let err = parse(&["--sim-loss-pct", "150"]).to_config().unwrap_err();
        assert_eq!(
            err,
            LinkArgsError::PercentOutOfRange {
                flag: "sim-loss-pct",
                value: 150.0
            }
        );
        assert!(err.to_string().contains("--sim-loss-pct"));
        let err = parse(&["--sim-loss-pct", "80", "--sim-burst-len", "2"])
            .to_config()
            .unwrap_err();
        assert!(matches!(
            err,
            LinkArgsError::Burst(BurstError::Unreachable { .. })
        ));
        assert!(parse(&["--sim-dup-pct", "NaN"]).to_config().is_err());
    }
}
