//! Errors for everything a user hands to mats: instance files, solution files, tables.
//!
//! Every variant names the file it came from, and the line where a line makes sense, so that
//! one message is enough to find and fix the input.

use std::path::PathBuf;

/// An instance, solution or table that could not be read or does not make sense.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A syntax problem at a known line (1-based).
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The file parses but its content is not a valid instance or solution.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl InputError {
    pub fn syntax(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        InputError::Syntax {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        InputError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Reads a whole input file, turning I/O failures into an [`InputError`] naming the file.
pub fn read_to_string(path: &std::path::Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|source| InputError::Io {
        path: path.to_path_buf(),
        source,
    })
}
