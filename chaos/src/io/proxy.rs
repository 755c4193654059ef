//! The UDP proxy in front of a bot whose link a `link` fault impairs: the
//! bot connects to the proxy's loopback port, and the proxy forwards
//! every datagram to the server and every answer back, through a
//! [`Shaper`] that does nothing until a window opens.
//!
//! The client's own conditioner (`--sim-*`) is fixed when the process
//! starts; a proxy can make a link bad for a while and good again. Each
//! address the bot sends from (a restarted bot has a new one) gets its
//! own socket towards the server, as a NAT would. Threads: one reads the
//! bot's side, one per such address reads the server's, and one sends
//! what the shaper held back once it is due.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use lockstep_conditioner::LinkConfig;

use super::clock::Clock;
use crate::shaper::{Direction, Shaper, WindowStats};

/// How often a blocked thread looks whether the proxy is stopping.
const POLL: Duration = Duration::from_millis(100);

/// Largest datagram forwarded: anything UDP carries.
const MAX_DATAGRAM: usize = 65_535;

/// A datagram and where it goes.
#[derive(Debug, Clone)]
struct Packet {
    to: Towards,
    bytes: Vec<u8>,
}

/// Where a packet goes: to the server through the socket of the bot's
/// address, or back to that address.
#[derive(Debug, Clone)]
enum Towards {
    Server(Arc<UdpSocket>),
    Bot(SocketAddr),
}

/// What the threads share.
struct Shared {
    clock: Clock,
    /// The socket the bot sends to.
    front: UdpSocket,
    server: SocketAddr,
    state: Mutex<State>,
    /// Wakes the sender when a packet is queued.
    queued: Condvar,
    stop: AtomicBool,
}

struct State {
    shaper: Shaper<Packet>,
    /// Each address the bot sent from, with its socket towards the server.
    flows: Vec<(SocketAddr, Arc<UdpSocket>)>,
    readers: Vec<JoinHandle<()>>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sends `packet` now, or leaves it to the shaper.
    fn route(&self, direction: Direction, packet: Packet) {
        let now = self.clock.now();
        let at_once = self.state().shaper.route(direction, now, packet);
        match at_once {
            Some(packet) => self.send(&packet),
            None => self.queued.notify_one(),
        }
    }

    fn send(&self, packet: &Packet) {
        // UDP: a datagram that cannot be sent is a lost one.
        let _ = match &packet.to {
            Towards::Server(socket) => socket.send(&packet.bytes),
            Towards::Bot(addr) => self.front.send_to(&packet.bytes, addr),
        };
    }
}

/// A running proxy; stopped when dropped.
pub struct LinkProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl LinkProxy {
    /// A proxy on a free loopback port forwarding to `server`.
    pub fn start(server: SocketAddr, clock: Clock) -> std::io::Result<LinkProxy> {
        let front = UdpSocket::bind("127.0.0.1:0")?;
        front.set_read_timeout(Some(POLL))?;
        let addr = front.local_addr()?;
        let shared = Arc::new(Shared {
            clock,
            front,
            server,
            state: Mutex::new(State {
                shaper: Shaper::default(),
                flows: Vec::new(),
                readers: Vec::new(),
            }),
            queued: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let reader = {
            let shared = shared.clone();
            std::thread::spawn(move || read_bot_side(&shared))
        };
        let sender = {
            let shared = shared.clone();
            std::thread::spawn(move || send_when_due(&shared))
        };
        Ok(LinkProxy {
            addr,
            shared,
            threads: vec![reader, sender],
        })
    }

    /// Where the bot connects.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Makes the link behave as `config` from now on.
    pub fn open(&self, config: LinkConfig) {
        self.shared.state().shaper.open(config);
    }

    /// Makes the link clean again; what the window did.
    pub fn close(&self) -> Option<WindowStats> {
        self.shared.state().shaper.close()
    }
}

impl Drop for LinkProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.queued.notify_all();
        // The bot side first: once it is joined, no reader is added.
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let readers = std::mem::take(&mut self.shared.state().readers);
        for thread in readers {
            let _ = thread.join();
        }
    }
}

/// Forwards what the bot sends towards the server.
fn read_bot_side(shared: &Arc<Shared>) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    while !shared.stopping() {
        let Ok((len, from)) = shared.front.recv_from(&mut buf) else {
            continue;
        };
        let Some(socket) = flow(shared, from) else {
            continue;
        };
        let packet = Packet {
            to: Towards::Server(socket),
            bytes: buf[..len].to_vec(),
        };
        shared.route(Direction::Up, packet);
    }
}

/// The socket towards the server for the bot's address `from`, opened
/// (with its reader) the first time.
fn flow(shared: &Arc<Shared>, from: SocketAddr) -> Option<Arc<UdpSocket>> {
    let mut state = shared.state();
    if let Some((_, socket)) = state.flows.iter().find(|(addr, _)| *addr == from) {
        return Some(socket.clone());
    }
    let socket = UdpSocket::bind("127.0.0.1:0").ok()?;
    socket.connect(shared.server).ok()?;
    socket.set_read_timeout(Some(POLL)).ok()?;
    let socket = Arc::new(socket);
    let reader = {
        let shared = shared.clone();
        let socket = socket.clone();
        std::thread::spawn(move || read_server_side(&shared, &socket, from))
    };
    state.flows.push((from, socket.clone()));
    state.readers.push(reader);
    Some(socket)
}

/// Forwards what the server sends through `socket` back to the bot's
/// address `bot`.
fn read_server_side(shared: &Shared, socket: &UdpSocket, bot: SocketAddr) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    while !shared.stopping() {
        let Ok(len) = socket.recv(&mut buf) else {
            continue;
        };
        let packet = Packet {
            to: Towards::Bot(bot),
            bytes: buf[..len].to_vec(),
        };
        shared.route(Direction::Down, packet);
    }
}

/// Sends each held-back packet once it is due.
fn send_when_due(shared: &Shared) {
    let mut state = shared.state();
    while !shared.stopping() {
        let now = shared.clock.now();
        let mut due = Vec::new();
        while let Some(packet) = state.shaper.due(now) {
            due.push(packet);
        }
        if !due.is_empty() {
            drop(state);
            for packet in &due {
                shared.send(packet);
            }
            state = shared.state();
            continue;
        }
        let wait = state
            .shaper
            .next_due()
            .map_or(POLL, |at| at.saturating_sub(now).min(POLL));
        state = shared
            .queued
            .wait_timeout(state, wait)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
