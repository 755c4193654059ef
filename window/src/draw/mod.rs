//! Drawing, apart from the screens that decide what to draw: the game's
//! renderer with its overlays, the one drawing of every game's picture
//! and the layout it is drawn through, text, the players' colours and
//! pixel arithmetic every screen uses, the strip charts, the net graph,
//! the replay timeline, QR codes and screenshots.
//!
//! Nothing here imports a screen, a game or the networked play: a game
//! shows itself as a [`Picture`](lockstep_engine::Picture) of plain
//! shapes, which [`picture`] draws, and a screen hands every other
//! drawing the plain figures it shows.

pub mod chart;
pub mod colour;
pub mod layout;
pub mod net_graph;
mod overlay;
pub mod picture;
pub(crate) mod pixels;
pub mod qr;
pub mod render;
pub mod screenshot;
pub mod text;
pub mod timeline;
