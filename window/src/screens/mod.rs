//! One file (or folder) per screen, each with its own SDL2 loop in the
//! window they all open ([`screen`]): the networked game window, solo
//! play, the lobby between games, the server browser, the replay window,
//! the game loop lab, and the report picture (a screen drawn into a PNG,
//! no display needed).

pub mod browser;
pub mod game;
pub mod lab;
pub mod lobby;
pub mod replay;
pub mod report;
pub mod screen;
pub mod solo;
