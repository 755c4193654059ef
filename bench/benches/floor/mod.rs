//! The floor game: the relay benchmark's clients and pacing clock against a
//! bare quinn forwarder instead of the server (the crate doc says what it
//! measures and why).

pub mod forwarder;

use anyhow::Context;
use bytes::Bytes;
use lockstep_client::io::clock;
use lockstep_conditioner::LinkConfig;
use lockstep_protocol::{
    decode, encode, ClientDatagram, Input, InputDatagram, Tick, MAX_DATAGRAM_SIZE,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::player::{
    client_config, every_report, record_first, Join, Pace, Schedule, Subject, Timeline,
};
use crate::{pace, timelines, Outcome};
use forwarder::Forwarder;

/// A floor client: what it sent, and how many of the other clients'
/// inputs for each tick the forwarder has brought it.
struct Listener {
    /// The other clients of the game.
    peers: u32,
    /// First tick without a local input.
    next_local: Tick,
    /// Inputs received, by tick.
    heard: Vec<u32>,
    /// First tick not heard from every peer: what a relay client would
    /// acknowledge, so the datagram has the relay client's bytes.
    complete: Tick,
    epoch: Instant,
    timeline: Timeline,
}

impl Listener {
    fn new(peers: u32, epoch: Instant) -> Listener {
        Listener {
            peers,
            next_local: Tick(0),
            heard: Vec::new(),
            complete: Tick(0),
            epoch,
            timeline: Timeline::default(),
        }
    }

    /// Sends, in one datagram, the (neutral) inputs for every tick through
    /// `through` not sent yet. Each input leaves once: nobody acknowledges
    /// it, so nothing tells when a repeat would be needed.
    fn send_through(&mut self, through: Tick, conn: &quinn::Connection) -> anyhow::Result<()> {
        let now = clock::tokio_since(self.epoch);
        let first_tick = self.next_local;
        while self.next_local <= through {
            record_first(&mut self.timeline.sent, self.next_local, now);
            self.next_local = self.next_local.next();
        }
        let datagram = ClientDatagram::Inputs(InputDatagram {
            bundles_ack: self.complete,
            first_tick,
            inputs: vec![Input::default(); self.next_local.since(first_tick) as usize],
        });
        conn.send_datagram(Bytes::from(encode(&datagram, MAX_DATAGRAM_SIZE)?))?;
        Ok(())
    }

    /// Counts another client's inputs; a tick is complete once every peer's
    /// input for it is in.
    fn receive(&mut self, datagram: &InputDatagram) {
        let now = clock::tokio_since(self.epoch);
        for offset in 0..datagram.inputs.len() {
            let tick = datagram.first_tick.plus(offset as u32);
            let index = tick.0 as usize;
            if self.heard.len() <= index {
                self.heard.resize(index + 1, 0);
            }
            self.heard[index] += 1;
            if self.heard[index] == self.peers {
                record_first(&mut self.timeline.arrived, tick, now);
            }
        }
        while self.heard.get(self.complete.0 as usize) == Some(&self.peers) {
            self.complete = self.complete.next();
        }
    }
}

/// One floor client: connects, sends the neutral inputs of the first
/// `input_delay` ticks as a relay client does at Start, follows the pacing
/// clock until [`Pace::Done`], leaves, and returns its timeline.
async fn client(
    join: Join,
    schedule: Schedule,
    peers: u32,
    connected: mpsc::Sender<()>,
    mut pace: watch::Receiver<Pace>,
) -> anyhow::Result<Timeline> {
    let (endpoint, conn) = join.connect().await?;
    let mut listener = Listener::new(peers, join.epoch);
    let first_sampled = schedule.first_sampled();
    listener.send_through(Tick(first_sampled.0 - 1), &conn)?;
    connected.send(()).await?;
    loop {
        tokio::select! {
            changed = pace.changed() => {
                changed?;
                let current = *pace.borrow_and_update();
                match current {
                    Pace::Step(k) => listener.send_through(first_sampled.plus(k), &conn)?,
                    Pace::Done => break,
                    Pace::Lobby => {}
                }
            }
            datagram = conn.read_datagram() => {
                if let Ok(ClientDatagram::Inputs(d)) = decode(&datagram?, MAX_DATAGRAM_SIZE) {
                    listener.receive(&d);
                }
            }
        }
    }
    conn.close(quinn::VarInt::from_u32(0), b"benchmark over");
    endpoint.wait_idle().await;
    Ok(listener.timeline)
}

/// Plays one game of `clients` floor clients on a fresh forwarder, on the
/// relay game's `schedule`.
pub async fn game(
    clients: u32,
    schedule: Schedule,
    seconds: u32,
    link: LinkConfig,
) -> anyhow::Result<Outcome> {
    let forwarder = Forwarder::start(clients)?;
    let config = client_config(&forwarder.fingerprint)?;
    let epoch = clock::tokio_now();
    let (pace_tx, pace_rx) = watch::channel(Pace::Lobby);
    let (connected_tx, mut connected_rx) = mpsc::channel(clients as usize);
    let tasks: Vec<_> = (0..clients)
        .map(|index| {
            let join = Join::new(index, forwarder.addr, &config, link, epoch);
            let connected = connected_tx.clone();
            tokio::spawn(client(
                join,
                schedule,
                clients - 1,
                connected,
                pace_rx.clone(),
            ))
        })
        .collect();
    every_report(&mut connected_rx, clients)
        .await
        .context("the clients did not all connect to the forwarder")?;
    let measured = seconds * schedule.tick_rate;
    let window = pace(forwarder.pid(), schedule, measured, &pace_tx).await?;
    let timelines = timelines(tasks).await?;
    drop(forwarder);
    Ok(Outcome::new(
        clients,
        Subject::Floor,
        schedule,
        measured,
        &timelines,
        &window,
    ))
}
