//! The threads around the [`Discovery`] table: they probe the LAN and
//! listen for announcements, for `list`, `--join NAME` and the server
//! browser alike.
//!
//! Two sockets: probes leave from a port of the finder's own, so the
//! answers (unicast, straight back) reach this process and no other; a
//! second socket shares the discovery port with every other listener on
//! this machine to hear the servers' unasked broadcasts. Where that port
//! cannot be shared, probes alone still find every server that hears them.

use std::collections::BTreeSet;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lockstep_protocol::lan::{self, Network, NetworksError};
use lockstep_protocol::{encode_beacon, MAX_BEACON_SIZE};
use tracing::{debug, warn};

use crate::discovery::{self, Discovery, Found, NameLookupError};
use crate::io::clock;

/// How long a socket read waits before the thread looks at the clock and
/// the stop flag again: probes go out within this of their time.
const READ_TIMEOUT: Duration = Duration::from_millis(50);

/// How long `--join NAME` keeps listening once the name answered, for a
/// second server of the same name: every server hears the same probe, so
/// their answers arrive within a round trip of each other.
pub const SETTLE: Duration = Duration::from_millis(300);

/// Where and how to look for servers.
#[derive(Debug, Clone)]
pub struct FinderOptions {
    /// Look only on this interface (a name or one of its IPv4 addresses);
    /// `None` is every IPv4 network of this machine.
    pub interface: Option<String>,
    /// The discovery port the servers listen on.
    pub port: u16,
}

/// Why the search could not start.
#[derive(Debug, thiserror::Error)]
pub enum FinderError {
    /// No network to look on.
    #[error("cannot look for servers on the LAN: {0}")]
    Networks(#[from] NetworksError),
    /// No socket to probe from.
    #[error("cannot open a UDP socket to look for servers: {0}")]
    Socket(std::io::Error),
}

/// A search of the LAN running in the background until dropped.
#[derive(Debug)]
pub struct Finder {
    table: Arc<Mutex<Discovery>>,
    start: Instant,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Finder {
    /// Starts probing the networks `options` names and listening.
    pub fn start(options: &FinderOptions) -> Result<Finder, FinderError> {
        let networks = lan::networks(options.interface.as_deref())?;
        let prober = blocking(lan::own_socket()).map_err(FinderError::Socket)?;
        let seed = u64::from(std::process::id()) << 32 ^ clock::unix_seconds();
        let table = Arc::new(Mutex::new(Discovery::new(seed)));
        let start = clock::now();
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let targets: Vec<SocketAddr> = networks
            .iter()
            .map(|n: &Network| SocketAddrV4::new(n.broadcast, options.port).into())
            .collect();
        {
            let (table, stop) = (table.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                probe(&prober, &targets, &table, start, &stop)
            }));
        }
        match blocking(lan::shared_socket(options.port)) {
            Ok(listener) => {
                let (table, stop) = (table.clone(), stop.clone());
                threads.push(std::thread::spawn(move || {
                    listen(&listener, &table, start, &stop)
                }));
            }
            Err(e) => {
                debug!(error = %e, port = options.port, "not hearing broadcasts; probing only")
            }
        }
        Ok(Finder {
            table,
            start,
            stop,
            threads,
        })
    }

    /// The servers found so far.
    pub fn servers(&self) -> Vec<Found> {
        let now = clock::since(self.start);
        lock(&self.table).servers(now)
    }

    /// How long the search has run.
    pub fn elapsed(&self) -> Duration {
        clock::since(self.start)
    }

    /// Waits for the one server called `name`, at most `timeout`, then a
    /// moment more ([`SETTLE`]) for another of the same name.
    pub fn find(&self, name: &str, timeout: Duration) -> Result<Found, NameLookupError> {
        let mut heard_at = None;
        loop {
            let servers = self.servers();
            let elapsed = self.elapsed();
            let heard = servers.iter().any(|s| s.name() == name);
            if heard && heard_at.is_none() {
                heard_at = Some(elapsed);
            }
            let settled = heard_at.is_some_and(|at| elapsed >= at + SETTLE);
            if settled || elapsed >= timeout {
                return discovery::by_name(&servers, name, elapsed);
            }
            std::thread::sleep(READ_TIMEOUT);
        }
    }
}

impl Drop for Finder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn lock(table: &Mutex<Discovery>) -> std::sync::MutexGuard<'_, Discovery> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The socket made blocking with [`READ_TIMEOUT`] (the `lan` sockets come
/// non-blocking, for tokio).
fn blocking(socket: std::io::Result<UdpSocket>) -> std::io::Result<UdpSocket> {
    let socket = socket?;
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(Some(READ_TIMEOUT))?;
    Ok(socket)
}

/// Sends the table's probes to every target and feeds it the answers.
fn probe(
    socket: &UdpSocket,
    targets: &[SocketAddr],
    table: &Mutex<Discovery>,
    start: Instant,
    stop: &AtomicBool,
) {
    let mut refused = BTreeSet::new();
    let mut buf = [0u8; MAX_BEACON_SIZE + 1];
    while !stop.load(Ordering::Relaxed) {
        let probe = lock(table).poll(clock::since(start));
        if let Some(bytes) = probe.and_then(|p| encode_beacon(&p).ok()) {
            for &to in targets {
                match socket.send_to(&bytes, to) {
                    Ok(_) => {
                        refused.remove(&to);
                    }
                    Err(e) if refused.insert(to) => warn!(
                        "cannot probe {to} for servers ({e}); servers on that network are found \
                         only by their own broadcasts, or join them with --connect HOST:PORT"
                    ),
                    Err(_) => {}
                }
            }
        }
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            lock(table).receive(&buf[..n], clock::since(start));
        }
    }
}

/// Feeds the table every announcement broadcast on the discovery port.
fn listen(socket: &UdpSocket, table: &Mutex<Discovery>, start: Instant, stop: &AtomicBool) {
    let mut buf = [0u8; MAX_BEACON_SIZE + 1];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            lock(table).receive(&buf[..n], clock::since(start));
        }
    }
}
