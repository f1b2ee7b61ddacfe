use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use corvid_tools::{
    Cancellation, Prepared, ToolContext, ToolError, ToolLimits, ToolOutput, ToolRegistry, Workspace,
};
use serde_json::Value;

/// `<tmp>/project` (the workspace), `<tmp>/outside` (with `secret.txt` and `dir/`) and
/// `<tmp>/logs` (command output).
pub(crate) struct Project {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) logs: PathBuf,
    pub(crate) tools: ToolRegistry,
}

pub(crate) fn project() -> Project {
    project_with(ToolLimits::default())
}

pub(crate) fn project_with(limits: ToolLimits) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    let outside = base.join("outside");
    let logs = base.join("logs");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
    let workspace = Workspace::new(&root).unwrap();
    let tools = ToolRegistry::new(ToolContext::new(workspace, &logs).with_limits(limits));
    Project {
        dir,
        root,
        outside,
        logs,
        tools,
    }
}

impl Project {
    pub(crate) fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative)).unwrap()
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub(crate) async fn prepare(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<Prepared, ToolError> {
        self.tools.prepare(tool, arguments).await
    }

    pub(crate) async fn apply(&self, prepared: Prepared) -> Result<ToolOutput, ToolError> {
        self.tools.apply(prepared.plan, Cancellation::never()).await
    }

    pub(crate) async fn run(&self, tool: &str, arguments: Value) -> Result<ToolOutput, ToolError> {
        self.tools
            .execute(tool, arguments, Cancellation::never())
            .await
    }

    /// The files in the command-output folder.
    pub(crate) fn logs(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(&self.logs) {
            Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// Polls `check` every 20 ms for up to `limit`.
pub(crate) async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn exists(path: &Path) -> bool {
    path.exists()
}
