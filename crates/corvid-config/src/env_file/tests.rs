use pretty_assertions::assert_eq;

use super::*;

#[test]
fn parses_comments_export_and_quotes() {
    let file = EnvFile::parse(
        "# secrets\n\
         \n\
         XAI_API_KEY=plain-value\n\
         export XAI_ACCESS_TOKEN='single quoted # not a comment'\n\
         XAI_REFRESH_TOKEN=\"double \\\"quoted\\\" \\$HOME\"\n\
         BARE=value # trailing comment\n\
         EMPTY=\n\
         not a valid line\n\
         1BAD=x\n",
    );
    assert_eq!(file.get("XAI_API_KEY"), Some("plain-value"));
    assert_eq!(
        file.get("XAI_ACCESS_TOKEN"),
        Some("single quoted # not a comment")
    );
    assert_eq!(
        file.get("XAI_REFRESH_TOKEN"),
        Some("double \"quoted\" $HOME")
    );
    assert_eq!(file.get("BARE"), Some("value"));
    assert_eq!(file.get("EMPTY"), Some(""));
    assert_eq!(file.get("1BAD"), None);
    assert_eq!(
        file.keys().collect::<Vec<_>>(),
        [
            "XAI_API_KEY",
            "XAI_ACCESS_TOKEN",
            "XAI_REFRESH_TOKEN",
            "BARE",
            "EMPTY"
        ]
    );
}

#[test]
fn last_assignment_wins() {
    let file = EnvFile::parse("A=1\nA=2\n");
    assert_eq!(file.get("A"), Some("2"));
}

#[test]
fn set_replaces_in_place_and_keeps_comments() {
    let mut file = EnvFile::parse("# keep me\nA=1\nB=2\nA=3\n");
    file.set("A", "new");
    file.set("C", "added");
    assert_eq!(file.render(), "# keep me\nA=new\nB=2\nC=added\n");
    assert!(file.remove("B"));
    assert!(!file.remove("B"));
    assert_eq!(file.render(), "# keep me\nA=new\nC=added\n");
}

#[test]
fn quoting_round_trips_awkward_values() {
    let values = [
        "simple",
        "",
        "with space",
        "it's",
        "'leading and trailing'",
        "$HOME and `cmd` and \\backslash",
        "double \"quotes\"",
        "semi;colon&amp|pipe",
        "# hash",
        "ünïcødé",
        "eyJhbGciOi.JIUzI1NiJ9-_=",
    ];
    let mut file = EnvFile::default();
    for (index, value) in values.iter().enumerate() {
        file.set(&format!("KEY_{index}"), value);
    }
    let reparsed = EnvFile::parse(&file.render());
    for (index, value) in values.iter().enumerate() {
        assert_eq!(
            reparsed.get(&format!("KEY_{index}")),
            Some(*value),
            "value {value:?}"
        );
    }
}

/// The rendered file must mean the same thing to bash as to our parser.
#[test]
fn bash_reads_written_values_back_unchanged() {
    let Ok(bash) = which_bash() else {
        return; // no bash on this machine: the round trip above still covers our parser
    };
    let values = ["it's", "$HOME `x` \\y", "a b\tc", "'q'", "plain"];
    let mut file = EnvFile::default();
    for (index, value) in values.iter().enumerate() {
        file.set(&format!("K{index}"), value);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("env");
    file.write(&path).unwrap();
    let script = format!(
        "set -e; source '{}'; printf '%s\\0' \"$K0\" \"$K1\" \"$K2\" \"$K3\" \"$K4\"",
        path.display()
    );
    let output = std::process::Command::new(bash)
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    assert!(output.status.success());
    let printed: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    assert_eq!(printed, values);
}

fn which_bash() -> Result<&'static str, ()> {
    ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .ok_or(())
}

#[cfg(unix)]
#[test]
fn write_is_private_and_atomic() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("env");
    let mut file = EnvFile::default();
    file.set("XAI_API_KEY", "secret value");
    file.write(&path).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    // Rewriting leaves no temporary files behind.
    file.set("XAI_API_KEY", "another");
    file.write(&path).unwrap();
    let names: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from("env")]);
    assert_eq!(
        EnvFile::read(&path).unwrap().get("XAI_API_KEY"),
        Some("another")
    );
}

#[test]
fn missing_file_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        EnvFile::read(&dir.path().join("absent")).unwrap(),
        EnvFile::default()
    );
}

#[test]
fn debug_never_shows_values() {
    let file = EnvFile::parse("XAI_API_KEY=super-secret\n");
    let shown = format!("{file:?}");
    assert!(shown.contains("XAI_API_KEY"));
    assert!(!shown.contains("super-secret"));
}
