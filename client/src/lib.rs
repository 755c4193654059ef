//! lockstep client library.
#![forbid(unsafe_code)]

pub mod bot;
pub mod sim;
