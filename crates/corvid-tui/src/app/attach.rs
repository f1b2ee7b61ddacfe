//! Images attached to the next message: a pasted path to an image file, or the clipboard's
//! image (Ctrl-V). Each shows above the input as `[image: name.png]` until the message is
//! sent; Backspace in an empty input takes the last one off. (`@shot.png` in the text is the
//! engine's: it attaches project images itself.)

use std::path::{Path, PathBuf};

use corvid_protocol::ImageInput;
use ratatui::style::{Color, Style};
use ratatui::text::Line;

use super::App;
use crate::clipboard::{self, ClipboardEnv};

/// An image waiting to go with the next message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attachment {
    /// What its chip says: the file's name, or `clipboard-N.png`.
    pub(crate) name: String,
    pub(crate) image: ImageInput,
}

impl App {
    /// Attaches the image a pasted `text` names (one line: a path, quoted, shell-escaped or a
    /// `file://` URL, ending in an image extension, to a file that exists); false when `text`
    /// is not such a path, so it is pasted as text.
    pub(super) fn paste_image_path(&mut self, text: &str) -> bool {
        let Some(path) = pasted_path(text, &self.settings.project) else {
            return false;
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        match std::fs::read(&path) {
            Ok(bytes) => self.attach(name, &bytes),
            Err(error) => self.hint = Some(format!("cannot read {name}: {error}")),
        }
        true
    }

    /// Ctrl-V: the clipboard's image, through the platform's tool.
    pub(super) fn paste_clipboard_image(&mut self) {
        match clipboard::image(&ClipboardEnv::current()) {
            Ok(bytes) => {
                let name = format!("clipboard-{}.png", self.attachments.len() + 1);
                self.attach(name, &bytes);
            }
            Err(error) => self.hint = Some(error.to_string()),
        }
    }

    fn attach(&mut self, name: String, bytes: &[u8]) {
        let cap = corvid_agent::images::IMAGE_CAP;
        if bytes.len() > cap {
            self.hint = Some(format!(
                "{name} is {:.1} MB, over the {} MB an image may be",
                bytes.len() as f64 / 1048576.0,
                cap / 1048576
            ));
            return;
        }
        match corvid_agent::images::encode(bytes) {
            Some(image) => self.attachments.push(Attachment { name, image }),
            None => self.hint = Some(format!("{name} is not a PNG, JPEG, GIF or WebP image")),
        }
    }

    /// A refused message (a model without image input): its images go back above the input.
    pub(super) fn restore_sent_images(&mut self) {
        let mut images = std::mem::take(&mut self.sent_images);
        images.append(&mut self.attachments);
        self.attachments = images;
    }

    /// Backspace in an empty input: the last image comes off; false when there was none.
    pub(super) fn detach_last(&mut self) -> bool {
        self.attachments.pop().is_some()
    }

    /// The chips of the images waiting, as one line (none when there are none).
    pub(super) fn attachments_view(&self, lines: &mut Vec<Line<'static>>) {
        if !self.attachments.is_empty() {
            lines.push(Line::styled(
                chips(&self.attachments),
                Style::new().fg(Color::Magenta),
            ));
        }
    }
}

/// `[image: a.png] [image: b.png]`.
pub(crate) fn chips(attachments: &[Attachment]) -> String {
    attachments
        .iter()
        .map(|attachment| format!("[image: {}]", attachment.name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The image file a pasted `text` names, if it is one path to an existing image file
/// (relative paths from the project).
fn pasted_path(text: &str, project: &Path) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|quote| {
            text.strip_prefix(*quote)
                .and_then(|rest| rest.strip_suffix(*quote))
        })
        .map(str::to_owned)
        .unwrap_or_else(|| unescape(text));
    let path = match unquoted.strip_prefix("file://") {
        Some(rest) => rest.replace("%20", " "),
        None => unquoted,
    };
    if !corvid_agent::images::is_image_path(&path) {
        return None;
    }
    let path = match path.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => project.join(path),
    };
    path.is_file().then_some(path)
}

/// A shell-escaped path as the file manager pastes it (`My\ Shot.png`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}
