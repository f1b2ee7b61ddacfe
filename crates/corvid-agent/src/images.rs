//! Images in a user's message. A face attaches them (a paste, a drop, a path), or the message
//! names a project image as `@shot.png` and the engine attaches it (the text keeps the mention).
//! The engine never reads outside the project, checks each image's kind and size, and refuses
//! images for a model that does not take them before anything is sent upstream.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use corvid_protocol::{ErrorNotification, ImageInput};

/// The most bytes one image may have (Anthropic's limit per image; the others allow more).
pub const IMAGE_CAP: usize = 5 * 1024 * 1024;

/// The image kinds every provider takes, by media type.
const MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The file extensions a `@mention` must end with to be read as an image.
const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// Whether `path` names an image by its extension (`shot.PNG`, `a/b.jpeg`).
pub fn is_image_path(path: &str) -> bool {
    Path::new(path)
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str()))
}

/// The media type `bytes` start like (PNG, JPEG, GIF or WebP), whatever the file is called.
pub fn sniff_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// `bytes` as an attachment when they are a PNG, JPEG, GIF or WebP image (by their first
/// bytes) within [`IMAGE_CAP`]; `None` otherwise.
pub fn encode(bytes: &[u8]) -> Option<ImageInput> {
    if bytes.len() > IMAGE_CAP {
        return None;
    }
    sniff_media_type(bytes).map(|media_type| ImageInput::Base64 {
        media_type: media_type.to_owned(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// The images `text` mentions as `@path` (an `@` at the start or after white space, up to the
/// next white space, less trailing punctuation) whose path ends in an image extension, read from
/// the project, in order and each once. A mention of a file that does not exist stays words.
pub(crate) fn mentioned(project: &Path, text: &str) -> Result<Vec<ImageInput>, ErrorNotification> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut images = Vec::new();
    for path in mention_paths(text) {
        // A file that is not there yet ("create @logo.png") is only words.
        let Some(file) = inside_project(project, path)? else {
            continue;
        };
        if seen.contains(&file) {
            continue;
        }
        images.push(read_image(&file, path)?);
        seen.push(file);
    }
    Ok(images)
}

/// The `@paths` in `text` that name images by their extension.
fn mention_paths(text: &str) -> Vec<&str> {
    let mut paths = Vec::new();
    let mut after_space = true;
    for (at, c) in text.char_indices() {
        if c == '@' && after_space {
            let rest = &text[at + 1..];
            let token = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
            let path = token.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
            if is_image_path(path) {
                paths.push(path);
            }
        }
        after_space = c.is_whitespace();
    }
    paths
}

/// `path` (relative to the project) resolved; `None` when there is no such file, refused when
/// it leads outside the project.
fn inside_project(project: &Path, path: &str) -> Result<Option<PathBuf>, ErrorNotification> {
    let root = project.canonicalize().map_err(|error| {
        ErrorNotification::invalid(format!(
            "cannot read the project folder {} to attach @{path}: {error}",
            project.display()
        ))
    })?;
    let Ok(file) = root.join(path).canonicalize() else {
        return Ok(None);
    };
    if !file.starts_with(&root) || !file.is_file() {
        return Err(ErrorNotification::invalid(format!(
            "@{path} is not a file inside the project; the agent attaches only the project's images"
        ))
        .with_next_action("Copy the image into the project, or paste or drop it instead."));
    }
    Ok(Some(file))
}

/// The image at `file` (mentioned as `@shown`), checked for its size and kind.
fn read_image(file: &Path, shown: &str) -> Result<ImageInput, ErrorNotification> {
    let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    if size > IMAGE_CAP as u64 {
        return Err(too_large(&format!("@{shown}"), size));
    }
    let bytes = std::fs::read(file).map_err(|error| {
        ErrorNotification::invalid(format!("cannot read the image @{shown}: {error}"))
    })?;
    encode(&bytes).ok_or_else(|| {
        ErrorNotification::invalid(format!("@{shown} is not a PNG, JPEG, GIF or WebP image"))
    })
}

fn too_large(shown: &str, size: u64) -> ErrorNotification {
    ErrorNotification::invalid(format!(
        "{shown} is {}, over the {} an image may be",
        megabytes(size),
        megabytes(IMAGE_CAP as u64)
    ))
    .with_next_action("Shrink or crop the image, then attach it again.")
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

/// Checks the images a face attached: a kind every provider takes, within the size cap.
pub(crate) fn check_attached(images: &[ImageInput]) -> Result<(), ErrorNotification> {
    for (index, image) in images.iter().enumerate() {
        let ImageInput::Base64 { media_type, data } = image else {
            continue;
        };
        let shown = format!("image {}", index + 1);
        if !MEDIA_TYPES.contains(&media_type.as_str()) {
            return Err(ErrorNotification::invalid(format!(
                "{shown} is {media_type}; the agent takes PNG, JPEG, GIF and WebP images"
            )));
        }
        // Four base64 characters carry three bytes.
        let size = (data.len() as u64 / 4) * 3;
        if size > IMAGE_CAP as u64 {
            return Err(too_large(&shown, size));
        }
    }
    Ok(())
}

/// Refuses images for `model` when what is known of it (`takes_images`: its provider's list,
/// else the catalog) says it has no image input; an unknown model may try.
pub(crate) fn check_model(
    model: &str,
    takes_images: Option<bool>,
) -> Result<(), ErrorNotification> {
    if takes_images != Some(false) {
        return Ok(());
    }
    let catalog = corvid_config::catalog();
    let provider = catalog.model(model).map(|facts| facts.provider.clone());
    let mut examples: Vec<&str> = catalog
        .models()
        .iter()
        .filter(|facts| facts.images && Some(&facts.provider) == provider.as_ref())
        .map(|facts| facts.id.as_str())
        .take(3)
        .collect();
    if examples.is_empty() {
        examples = catalog
            .models()
            .iter()
            .filter(|facts| facts.images)
            .map(|facts| facts.id.as_str())
            .take(3)
            .collect();
    }
    let mut message = format!("{model} does not take images; pick one that does");
    if !examples.is_empty() {
        message.push_str(&format!(", e.g. {}", examples.join(", ")));
    }
    Err(ErrorNotification::invalid(message)
        .with_next_action("Switch to a model that takes images, or send the message without them."))
}

#[cfg(test)]
mod tests;
