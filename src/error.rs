//! `ditto::Error`: what the engine's public API (`ditto::api`) returns. Its [`ErrorKind`]
//! says what failed, so a caller can tell a bad label set from a store failure or a bad
//! page without reading the message; the full cause chain stays in `source()`.

use std::fmt;

/// What part of the work failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The label set or a stop-chunk list could not be opened or is not usable.
    LabelSet,
    /// The store could not be opened, bound or written.
    Store,
    /// A file-system operation failed.
    Io,
    /// The input (a page, a URL, a setting) was refused.
    Input,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::LabelSet => "label set",
            ErrorKind::Store => "store",
            ErrorKind::Io => "i/o",
            ErrorKind::Input => "input",
        })
    }
}

/// An engine error: a kind and its cause chain.
pub struct Error {
    kind: ErrorKind,
    cause: anyhow::Error,
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, cause: impl Into<anyhow::Error>) -> Error {
        Error { kind, cause: cause.into() }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The outermost message; the causes follow through `source()` (`{:#}` in anyhow).
        write!(f, "{}", self.cause)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} error: {:?}", self.kind, self.cause)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.source()
    }
}

impl From<store::StoreError> for Error {
    fn from(e: store::StoreError) -> Error {
        Error::new(ErrorKind::Store, e)
    }
}

impl From<labelsets::Error> for Error {
    fn from(e: labelsets::Error) -> Error {
        Error::new(ErrorKind::LabelSet, e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, e)
    }
}

/// Give an `anyhow` result from the engine's internals its kind.
pub(crate) trait ResultExt<T> {
    fn kind(self, kind: ErrorKind) -> Result<T>;
}

impl<T> ResultExt<T> for anyhow::Result<T> {
    fn kind(self, kind: ErrorKind) -> Result<T> {
        self.map_err(|e| Error::new(kind, e))
    }
}
