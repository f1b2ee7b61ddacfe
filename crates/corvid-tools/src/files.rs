//! Where the file tools read and write file contents: the disk by default, or an editor's
//! buffers (the Agent Client Protocol's `fs/read_text_file` and `fs/write_text_file`, so the
//! agent sees unsaved changes and its edits land where the user can review and undo them).
//!
//! Paths are always resolved and confined by the `Workspace` first; a `Files` only moves bytes.
//! Metadata (does it exist, is it a folder) is always asked of the disk.

use std::fmt::Debug;
use std::io::{self, Read};
use std::path::Path;

/// The contents of files, by absolute path. Called from blocking threads (never from async
/// code), so an implementation may block on a request to an editor.
pub trait Files: Send + Sync + Debug {
    /// The file's whole content.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The file as a stream (the disk streams; others read the whole content first).
    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(io::Cursor::new(self.read(path)?)))
    }
    /// Replaces the file's content, or creates it. `create` is true when the tool saw no file:
    /// then an existing file is an error (`AlreadyExists`).
    fn write(&self, path: &Path, content: &[u8], create: bool) -> io::Result<()>;
}

/// The disk: reads with `std::fs`, and `write_file`'s exclusive create or atomic replace.
#[derive(Debug, Default, Clone, Copy)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(std::fs::File::open(path)?))
    }

    fn write(&self, path: &Path, content: &[u8], create: bool) -> io::Result<()> {
        crate::write::write_to_disk(path, content, create)
    }
}
