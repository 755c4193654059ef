//! Drawing, apart from the screens that decide what to draw: the game's
//! renderer with its overlays, the scene a game draws itself through,
//! text, the players' colours and pixel arithmetic every screen uses, the
//! strip charts, the net graph, the replay timeline, QR codes and
//! screenshots.
//!
//! Nothing here imports a screen, a game or the networked play: a game
//! draws itself through [`scene::Scene`], which the renderer calls, and a
//! screen hands every other drawing the plain figures it shows.

pub mod chart;
pub mod colour;
pub mod net_graph;
mod overlay;
pub(crate) mod pixels;
pub mod qr;
pub mod render;
pub mod scene;
pub mod screenshot;
pub mod text;
pub mod timeline;
