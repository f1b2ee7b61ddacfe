use super::*;

#[test]
fn absolute_paths_inside_the_project_become_relative() {
    let project = Path::new("/home/ada/project");
    assert_eq!(
        shown(project, "/home/ada/project/src/main.rs"),
        "src/main.rs"
    );
    assert_eq!(shown(project, "/home/ada/project"), ".");
    assert_eq!(shown(project, "src/lib.rs"), "src/lib.rs");
    assert_eq!(shown(project, "/etc/passwd"), "/etc/passwd");
    assert_eq!(
        shown(project, "/home/ada/project-2/x"),
        "/home/ada/project-2/x"
    );
}
