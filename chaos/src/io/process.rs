//! The processes the run starts: each one's stdout and stderr go to files
//! in the run's directory (kept with `--keep`), read back line by line as
//! they grow, and the run signals only processes it started, by their
//! PID, and only while it has not reaped them (a reaped PID may be
//! another process's).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use super::tail::LineTail;
use crate::said::Stream;

/// The signals the run sends besides SIGKILL (which [`Proc::kill`]
/// sends through the standard library).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Freeze.
    Stop,
    /// Thaw.
    Cont,
    /// Ask to end.
    Term,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Signal::Stop => "STOP",
            Signal::Cont => "CONT",
            Signal::Term => "TERM",
        }
    }
}

/// Why a process could not be started or signalled.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// Its output files could not be created.
    #[error("cannot create {}: {source}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The binary did not start.
    #[error("cannot start {name}: {source}")]
    Spawn {
        /// Who.
        name: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// `kill` did not deliver the signal.
    #[error("cannot send SIG{signal} to {name} (pid {pid})")]
    Signal {
        /// Who.
        name: String,
        /// Its PID.
        pid: u32,
        /// The signal's name.
        signal: &'static str,
    },
}

/// A process the run started; SIGKILLed when dropped if still running.
#[derive(Debug)]
pub struct Proc {
    /// Who it is in the timeline: `server`, `bot3`, `watcher`, ...
    pub name: String,
    child: Child,
    out: LineTail,
    err: LineTail,
    status: Option<ExitStatus>,
}

impl Proc {
    /// Starts `command` as `name`, its output in `logs/FILE.out` and
    /// `logs/FILE.err`.
    pub fn spawn(
        name: &str,
        file: &str,
        mut command: Command,
        logs: &Path,
    ) -> Result<Proc, ProcError> {
        let open = |ext: &str| {
            let path = logs.join(format!("{file}.{ext}"));
            File::create(&path)
                .map(|f| (f, path.clone()))
                .map_err(|source| ProcError::Log { path, source })
        };
        let (out_file, out_path) = open("out")?;
        let (err_file, err_path) = open("err")?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out_file)
            .stderr(err_file)
            .spawn()
            .map_err(|source| ProcError::Spawn {
                name: name.to_string(),
                source,
            })?;
        Ok(Proc {
            name: name.to_string(),
            child,
            out: LineTail::new(&out_path),
            err: LineTail::new(&err_path),
            status: None,
        })
    }

    /// Its PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The lines it printed since the last call, stdout's first.
    pub fn poll(&mut self) -> Vec<(Stream, String)> {
        let out = self.out.poll().into_iter().map(|l| (Stream::Out, l));
        let err = self.err.poll().into_iter().map(|l| (Stream::Err, l));
        out.chain(err).collect()
    }

    /// How it exited, once it has (reaped then).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Whether it had exited when [`Proc::exited`] last looked.
    pub fn exited_now(&self) -> bool {
        self.status.is_some()
    }

    /// How it exited, if [`Proc::exited`] has seen it go.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// Sends `signal`, unless it has exited.
    pub fn signal(&mut self, signal: Signal) -> Result<(), ProcError> {
        if self.exited().is_some() {
            return Ok(());
        }
        let pid = self.pid();
        let sent = Command::new("kill")
            .args(["-s", signal.name(), &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        if sent {
            Ok(())
        } else {
            Err(ProcError::Signal {
                name: self.name.clone(),
                pid,
                signal: signal.name(),
            })
        }
    }

    /// SIGKILLs it, unless it has exited, and reaps it.
    pub fn kill(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}
