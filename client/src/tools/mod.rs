//! The offline tools, each a function that returns its stdout lines so
//! the binary only parses and prints: [`report`] reads a whole game out of
//! its replay (re-simulating it for the verdict and the goals), [`verify`]
//! checks a replay against its recorded hashes, and [`desync_diff`]
//! compares two desync dumps field by field, [`trace_diff`] two runs'
//! sync traces value by value, and [`list`] prints the servers on the LAN.

pub mod desync_diff;
pub mod list;
pub mod report;
pub mod trace_diff;
pub mod verify;
