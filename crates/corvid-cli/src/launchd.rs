//! macOS launchd agents: the property list that starts a program at login (`corvid service`
//! for `corvid serve`, corvid-desktop's "Start at login"). Pure text generation, so it is
//! tested on any platform; only macOS loads it.

use std::path::{Path, PathBuf};

/// A launchd agent: its label, the command it runs, and how launchd looks after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchAgent {
    /// Reverse-DNS name, also the file's name (`<label>.plist`).
    pub label: String,
    /// The program and its arguments.
    pub program_arguments: Vec<String>,
    /// Start it again when it exits (a service), or only once at login (an app).
    pub keep_alive: bool,
    /// Where its stdout and stderr go, if anywhere.
    pub log_file: Option<PathBuf>,
}

impl LaunchAgent {
    /// `~/Library/LaunchAgents/<label>.plist` under `home`.
    pub fn path(&self, home: &Path) -> PathBuf {
        home.join("Library/LaunchAgents")
            .join(format!("{}.plist", self.label))
    }

    /// The property list, XML.
    pub fn plist(&self) -> String {
        let mut text = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
             \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
             <plist version=\"1.0\">\n<dict>\n",
        );
        text.push_str(&format!(
            "  <key>Label</key>\n  <string>{}</string>\n",
            escape(&self.label)
        ));
        text.push_str("  <key>ProgramArguments</key>\n  <array>\n");
        for argument in &self.program_arguments {
            text.push_str(&format!("    <string>{}</string>\n", escape(argument)));
        }
        text.push_str("  </array>\n  <key>RunAtLoad</key>\n  <true/>\n");
        let keep_alive = if self.keep_alive {
            "<true/>"
        } else {
            "<false/>"
        };
        text.push_str(&format!("  <key>KeepAlive</key>\n  {keep_alive}\n"));
        // A program started by launchd has no login shell: interactive processes only.
        text.push_str("  <key>ProcessType</key>\n  <string>Interactive</string>\n");
        if let Some(log) = &self.log_file {
            let log = escape(&log.to_string_lossy());
            text.push_str(&format!(
                "  <key>StandardOutPath</key>\n  <string>{log}</string>\n  \
                 <key>StandardErrorPath</key>\n  <string>{log}</string>\n"
            ));
        }
        text.push_str("</dict>\n</plist>\n");
        text
    }
}

/// XML character data: `&`, `<`, `>` (and quotes, harmless in text) escaped.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> LaunchAgent {
        LaunchAgent {
            label: "dev.corvid.serve".to_owned(),
            program_arguments: vec![
                "/Applications/My <corvid> & co/corvid".to_owned(),
                "serve".to_owned(),
            ],
            keep_alive: true,
            log_file: Some(PathBuf::from("/Users/me/Library/Logs/corvid.log")),
        }
    }

    #[test]
    fn the_plist_runs_the_program_at_load_with_its_arguments_escaped() {
        let plist = agent().plist();
        assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist"));
        assert!(plist.contains("<key>Label</key>\n  <string>dev.corvid.serve</string>"));
        assert!(plist.contains(
            "<array>\n    <string>/Applications/My &lt;corvid&gt; &amp; co/corvid</string>\n    \
             <string>serve</string>\n  </array>"
        ));
        assert!(plist.contains("<key>RunAtLoad</key>\n  <true/>"));
        assert!(plist.contains("<key>KeepAlive</key>\n  <true/>"));
        assert!(plist.contains(
            "<key>StandardErrorPath</key>\n  <string>/Users/me/Library/Logs/corvid.log</string>"
        ));
        assert!(plist.ends_with("</dict>\n</plist>\n"));
        // Every element opened is closed: as many <string> as </string>.
        assert_eq!(
            plist.matches("<string>").count(),
            plist.matches("</string>").count()
        );
    }

    #[test]
    fn an_app_started_at_login_is_not_kept_alive_and_logs_nowhere() {
        let mut agent = agent();
        agent.keep_alive = false;
        agent.log_file = None;
        let plist = agent.plist();
        assert!(plist.contains("<key>KeepAlive</key>\n  <false/>"));
        assert!(!plist.contains("StandardOutPath"));
        assert_eq!(
            agent.path(Path::new("/Users/me")),
            Path::new("/Users/me/Library/LaunchAgents/dev.corvid.serve.plist")
        );
    }
}
