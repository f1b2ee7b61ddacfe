//! A session's skills as they are on disk now: a skill the agent (or the user) writes during a
//! session is offered from the next turn on, as the built-in `authoring-skills` skill promises.
//!
//! Each turn asks for the current set ([`LiveSkills::refresh`], through the skill tool
//! source's listing). The project's skills folder is fingerprinted — every entry's name, and
//! each `SKILL.md`'s size and modification time — and loaded again only when that changed, so
//! an idle turn costs one directory listing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::SystemTime;

use super::{SKILL_FILE, SKILLS_DIR, SkillSet, load_skills};

/// What a reload is decided on: per entry of the skills folder, its name and its `SKILL.md`'s
/// size and modification time (none when it has none).
type Fingerprint = Vec<(String, Option<(u64, Option<SystemTime>)>)>;

/// The skills of one project, loaded again when their files change.
pub(crate) struct LiveSkills {
    root: PathBuf,
    state: Mutex<State>,
}

struct State {
    fingerprint: Option<Fingerprint>,
    skills: Arc<SkillSet>,
}

impl LiveSkills {
    /// Loads the project's skills now; `refresh` later finds whether they changed since.
    pub(crate) fn load(root: &Path) -> Self {
        let fingerprint = fingerprint(root);
        Self {
            root: root.to_path_buf(),
            state: Mutex::new(State {
                fingerprint,
                skills: Arc::new(load_skills(root)),
            }),
        }
    }

    /// The skills as last loaded.
    pub(crate) fn current(&self) -> Arc<SkillSet> {
        Arc::clone(&self.state.lock().skills)
    }

    /// The skills as they are on disk now, and the warnings a reload found that the previous
    /// load had not (so a broken skill is reported once, when it appears).
    pub(crate) fn refresh(&self) -> (Arc<SkillSet>, Vec<String>) {
        let now = fingerprint(&self.root);
        let mut state = self.state.lock();
        if now == state.fingerprint {
            return (Arc::clone(&state.skills), Vec::new());
        }
        let skills = load_skills(&self.root);
        let fresh: Vec<String> = skills
            .warnings
            .iter()
            .filter(|warning| !state.skills.warnings.contains(warning))
            .cloned()
            .collect();
        state.fingerprint = now;
        state.skills = Arc::new(skills);
        (Arc::clone(&state.skills), fresh)
    }
}

/// The skills folder's fingerprint; `None` when there is no folder to read.
fn fingerprint(root: &Path) -> Option<Fingerprint> {
    let entries = std::fs::read_dir(root.join(SKILLS_DIR)).ok()?;
    let mut seen: Fingerprint = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let file = std::fs::metadata(entry.path().join(SKILL_FILE))
                .ok()
                .map(|meta| (meta.len(), meta.modified().ok()));
            (entry.file_name().to_string_lossy().into_owned(), file)
        })
        .collect();
    seen.sort();
    Some(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, name: &str, description: &str) {
        let dir = root.join(SKILLS_DIR).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(SKILL_FILE),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_skill_written_later_is_seen_on_refresh() {
        let dir = tempfile::tempdir().unwrap();
        let live = LiveSkills::load(dir.path());
        assert!(live.current().get("release-notes").is_none());

        write(
            dir.path(),
            "release-notes",
            "Draft release notes. Use when tagging.",
        );
        let (skills, warnings) = live.refresh();

        assert!(skills.get("release-notes").is_some());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(live.current().get("release-notes").is_some());
    }

    #[test]
    fn an_edited_or_removed_skill_is_seen_and_a_broken_one_warned_once() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "one", "First. Use when one.");
        let live = LiveSkills::load(dir.path());

        // A different length is a different fingerprint whatever the clock's resolution.
        write(dir.path(), "one", "First, edited. Use when one.");
        let (skills, _) = live.refresh();
        assert_eq!(
            skills.get("one").map(|skill| skill.description.as_str()),
            Some("First, edited. Use when one.")
        );

        let broken = dir.path().join(SKILLS_DIR).join("two");
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(broken.join(SKILL_FILE), "no frontmatter").unwrap();
        let (_, warnings) = live.refresh();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("two"), "{warnings:?}");
        // Nothing changed: no reload, no repeated warning.
        assert!(live.refresh().1.is_empty());

        std::fs::remove_dir_all(dir.path().join(SKILLS_DIR).join("one")).unwrap();
        assert!(live.refresh().0.get("one").is_none());
    }
}
