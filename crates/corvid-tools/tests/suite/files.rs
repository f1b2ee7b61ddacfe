//! The `Files` seam: with an editor's `Files`, `read`, `edit` and `write` see its buffer (not
//! the disk) and write through it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use corvid_tools::{Cancellation, Files, ToolContext, ToolRegistry, Workspace};
use serde_json::json;

/// An editor: buffers by path; writes are recorded and kept in the buffer only.
#[derive(Debug, Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    writes: Mutex<Vec<PathBuf>>,
}

impl Files for Editor {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        match self.buffers.lock().unwrap().get(path) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => std::fs::read(path),
        }
    }

    fn write(&self, path: &Path, content: &[u8], _create: bool) -> std::io::Result<()> {
        self.writes.lock().unwrap().push(path.to_path_buf());
        self.buffers.lock().unwrap().insert(
            path.to_path_buf(),
            String::from_utf8(content.to_vec()).unwrap(),
        );
        Ok(())
    }
}

#[tokio::test]
async fn read_edit_and_write_go_through_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("a.txt");
    std::fs::write(&file, "on disk\n").unwrap();
    let editor = Arc::new(Editor::default());
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(file.clone(), "unsaved one\n".to_owned());
    let context = ToolContext::new(Workspace::new(&root).unwrap(), root.join(".out"))
        .with_files(editor.clone());
    let tools = ToolRegistry::new(context);

    let read = tools
        .execute("read", json!({"path": "a.txt"}), Cancellation::never())
        .await
        .unwrap();
    assert!(read.text.contains("unsaved one"), "{}", read.text);

    let edit = tools
        .execute(
            "edit",
            json!({"path": "a.txt", "old_string": "unsaved one", "new_string": "edited one"}),
            Cancellation::never(),
        )
        .await
        .unwrap();
    assert!(!edit.is_error, "{}", edit.text);
    assert_eq!(editor.buffers.lock().unwrap()[&file], "edited one\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "on disk\n");

    tools
        .execute(
            "write",
            json!({"path": "b.txt", "content": "new\n"}),
            Cancellation::never(),
        )
        .await
        .unwrap();
    assert_eq!(editor.writes.lock().unwrap().len(), 2);
    assert!(!root.join("b.txt").exists());
}
