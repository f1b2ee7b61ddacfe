//! File contents through the editor: `fs/read_text_file` (unsaved buffers) and
//! `fs/write_text_file` (edits land in the editor, reviewable and undoable there), for clients
//! that offer them. A read the editor cannot answer (a binary file, no buffer) falls back to the
//! disk; so does a write of bytes that are not UTF-8 text.

use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use corvid_tools::{Disk, Files};

/// How long the editor may take to answer one file request.
const FILE_TIMEOUT: Duration = Duration::from_secs(30);

/// [`Files`] through the ACP client.
#[derive(Clone)]
pub(crate) struct EditorFiles {
    pub(crate) connection: ConnectionTo<Client>,
    /// The session id, known once the session is open.
    pub(crate) session: Arc<OnceLock<String>>,
    pub(crate) runtime: tokio::runtime::Handle,
    pub(crate) read: bool,
    pub(crate) write: bool,
}

impl std::fmt::Debug for EditorFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorFiles")
            .field("read", &self.read)
            .field("write", &self.write)
            .finish()
    }
}

impl EditorFiles {
    fn session(&self) -> io::Result<String> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| io::Error::other("the session is not open yet"))
    }

    fn ask<T>(
        &self,
        request: impl Future<Output = Result<T, agent_client_protocol::Error>>,
    ) -> io::Result<T> {
        self.runtime.block_on(async {
            match tokio::time::timeout(FILE_TIMEOUT, request).await {
                Ok(Ok(answer)) => Ok(answer),
                Ok(Err(error)) => Err(io::Error::other(error.to_string())),
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the editor did not answer",
                )),
            }
        })
    }
}

impl Files for EditorFiles {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if !self.read {
            return Disk.read(path);
        }
        let request = ReadTextFileRequest::new(self.session()?, path);
        let sent = self.connection.send_request(request);
        match self.ask(sent.block_task()) {
            Ok(answer) => Ok(answer.content.into_bytes()),
            Err(error) => {
                tracing::debug!(%error, path = %path.display(), "fs/read_text_file failed; reading the disk");
                Disk.read(path)
            }
        }
    }

    fn write(&self, path: &Path, content: &[u8], create: bool) -> io::Result<()> {
        let text = match std::str::from_utf8(content) {
            Ok(text) if self.write => text.to_owned(),
            _ => return Disk.write(path, content, create),
        };
        if create && path.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "the file exists",
            ));
        }
        let request = WriteTextFileRequest::new(self.session()?, path, text);
        let sent = self.connection.send_request(request);
        self.ask(sent.block_task()).map(|_| ())
    }
}
