use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

#[test]
fn mentions_name_images_by_extension_after_white_space() {
    assert_eq!(
        mention_paths("see @shot.png, and @docs/a.JPEG. not a@b.png nor @notes.txt"),
        ["shot.png", "docs/a.JPEG"]
    );
}

#[test]
fn a_mentioned_image_is_read_once_with_its_sniffed_media_type() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("shot.png"), PNG).unwrap();
    let images = mentioned(project.path(), "@shot.png twice: @./shot.png").unwrap();
    assert_eq!(
        images,
        [ImageInput::Base64 {
            media_type: "image/png".into(),
            data: base64::engine::general_purpose::STANDARD.encode(PNG),
        }]
    );
}

#[test]
fn images_outside_the_project_too_large_or_not_images_are_refused_and_missing_ones_are_words() {
    let outer = tempfile::tempdir().unwrap();
    let project = outer.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(outer.path().join("secret.png"), PNG).unwrap();
    std::fs::write(project.join("fake.png"), b"not an image").unwrap();
    std::fs::write(project.join("huge.png"), vec![0_u8; IMAGE_CAP + 1]).unwrap();
    let refused = |text: &str| mentioned(&project, text).unwrap_err().message;
    assert!(refused("@../secret.png").contains("not a file inside the project"));
    assert_eq!(mentioned(&project, "create @gone.png").unwrap(), []);
    assert!(refused("@fake.png").contains("not a PNG, JPEG, GIF or WebP image"));
    assert!(refused("@huge.png").contains("over the 5.0 MB an image may be"));
}

#[test]
fn attached_images_must_be_a_known_kind_within_the_cap() {
    let image = |media_type: &str, data: String| ImageInput::Base64 {
        media_type: media_type.into(),
        data,
    };
    assert!(check_attached(&[image("image/png", "iVBORw0K".into())]).is_ok());
    assert!(
        check_attached(&[image("image/tiff", "AAAA".into())])
            .unwrap_err()
            .message
            .contains("image/tiff")
    );
    let big = "A".repeat(IMAGE_CAP / 3 * 4 + 8);
    assert!(check_attached(&[image("image/png", big)]).is_err());
}

#[test]
fn a_model_without_image_input_is_refused_with_examples_and_unknown_ones_may_try() {
    let refusal = check_model("grok-3", Some(false)).unwrap_err();
    assert!(
        refusal
            .message
            .starts_with("grok-3 does not take images; pick one that does, e.g. grok-"),
        "{}",
        refusal.message
    );
    assert!(check_model("grok-4.6", Some(true)).is_ok());
    assert!(check_model("someone-elses-model", None).is_ok());
}

#[test]
fn media_types_are_sniffed_from_the_bytes() {
    assert_eq!(sniff_media_type(PNG), Some("image/png"));
    assert_eq!(sniff_media_type(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
    assert_eq!(sniff_media_type(b"GIF89a.."), Some("image/gif"));
    assert_eq!(
        sniff_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
        Some("image/webp")
    );
    assert_eq!(sniff_media_type(b"hello"), None);
}
