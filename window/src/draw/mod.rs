//! Drawing, apart from the screens that decide what to draw: the game's
//! renderer with its overlays, the text helpers every screen uses, the
//! strip charts, the net graph, the replay timeline and screenshots.

pub mod chart;
pub mod colour;
pub mod net_graph;
mod overlay;
pub(crate) mod pixels;
pub mod render;
pub mod screenshot;
pub mod text;
pub mod timeline;
