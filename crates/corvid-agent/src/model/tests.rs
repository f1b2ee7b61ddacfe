use super::*;

/// Every class the engine can report.
const CLASSES: [ErrorClass; 11] = [
    ErrorClass::NotConfigured,
    ErrorClass::AuthenticationRejected,
    ErrorClass::RateLimited,
    ErrorClass::ServerError,
    ErrorClass::Network,
    ErrorClass::UnexpectedResponse,
    ErrorClass::Tool,
    ErrorClass::Cancelled,
    ErrorClass::StepLimit,
    ErrorClass::InvalidRequest,
    ErrorClass::Internal,
];

#[test]
fn the_advice_fits_every_front_end() {
    for class in CLASSES {
        for wait in [None, Some(Duration::from_secs(7))] {
            let advice = next_action(class, wait);
            assert!(!advice.is_empty(), "{class:?}");
            // A chat command (`/model`), a flag of `corvid exec` (`--model`) or a restart only
            // a running `corvid serve` needs would be wrong in the other front ends.
            for word in advice.split_whitespace() {
                let word =
                    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '-');
                assert!(
                    !word.starts_with('/') && !word.starts_with("--"),
                    "{class:?}: `{advice}` names one front end's `{word}`"
                );
            }
            assert!(!advice.contains("restart"), "{class:?}: {advice}");
        }
    }
}

#[test]
fn a_missing_model_says_what_to_do_in_words() {
    let advice = next_action(ErrorClass::NotConfigured, None);
    assert!(advice.contains("another model"), "{advice}");
    assert!(advice.contains("`corvid models`"), "{advice}");
}

/// The string literals of a Rust source file (comments skipped; raw strings read as plain).
fn literals(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        match chars[index] {
            '/' if chars.get(index + 1) == Some(&'/') => {
                while index < chars.len() && chars[index] != '\n' {
                    index += 1;
                }
            }
            '/' if chars.get(index + 1) == Some(&'*') => {
                while index + 1 < chars.len() && !(chars[index] == '*' && chars[index + 1] == '/') {
                    index += 1;
                }
                index += 1;
            }
            // A char literal ('"', '\'', 'x'); a lifetime has no closing quote two or three on.
            '\'' if chars.get(index + 2) == Some(&'\'') => index += 2,
            '\'' if chars.get(index + 1) == Some(&'\\') && chars.get(index + 3) == Some(&'\'') => {
                index += 3
            }
            '"' => {
                let mut text = String::new();
                index += 1;
                while index < chars.len() && chars[index] != '"' {
                    if chars[index] == '\\' {
                        index += 1;
                    }
                    if let Some(c) = chars.get(index) {
                        text.push(*c);
                    }
                    index += 1;
                }
                found.push(text);
            }
            _ => {}
        }
        index += 1;
    }
    found
}

fn sources(folder: &std::path::Path, into: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|extension| extension == "rs")
            && path.file_name().is_some_and(|name| name != "tests.rs")
        {
            into.push(path);
        }
    }
}

/// What only one front end understands: the chat's slash commands, `corvid exec`'s flags, and
/// a restart that only a running `corvid serve` needs.
fn front_end_word(text: &str) -> Option<String> {
    const COMMANDS: [&str; 15] = [
        "help", "new", "list", "switch", "resume", "clear", "model", "approval", "status", "cost",
        "init", "diff", "undo", "compact", "quit",
    ];
    for (at, _) in text.match_indices('/') {
        // A path (`src/lib.rs`, `/v1/models`) has a letter, a digit or a slash before it.
        let before = text[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '.' || c == '_') {
            continue;
        }
        let word: String = text[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase())
            .collect();
        let after = text[at + 1 + word.len()..].chars().next();
        if COMMANDS.contains(&word.as_str()) && !after.is_some_and(|c| c == '/' || c == '_') {
            return Some(format!("/{word}"));
        }
    }
    for phrase in [
        "--model",
        "--approval",
        "restart corvid",
        "corvid chat keeps",
    ] {
        if text.contains(phrase) {
            return Some(phrase.to_owned());
        }
    }
    None
}

#[test]
fn no_engine_text_names_one_front_ends_command() {
    let mut files = Vec::new();
    sources(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 10, "{files:?}");
    let mut wrong = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        for text in literals(&source) {
            if let Some(word) = front_end_word(&text) {
                wrong.push(format!("{}: `{word}` in {text:?}", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_front_end_word_check_sees_commands_and_not_paths() {
    assert_eq!(
        front_end_word("pick another model with /model."),
        Some("/model".to_owned())
    );
    assert_eq!(
        front_end_word("Try /compact again"),
        Some("/compact".to_owned())
    );
    assert_eq!(front_end_word("(/diff shows it)"), Some("/diff".to_owned()));
    assert_eq!(
        front_end_word("then restart corvid"),
        Some("restart corvid".to_owned())
    );
    assert_eq!(front_end_word("src/model.rs and /v1/models"), None);
    assert_eq!(front_end_word("/status/x or ./init.sh or /model_x"), None);
    assert_eq!(
        literals("let a = \"x \\\"q\\\" y\"; // \"not\"\nlet c = '\"'; \"b\""),
        vec!["x \"q\" y".to_owned(), "b".to_owned()]
    );
}
