use super::*;

fn in_a_temporary_root(path: &Path) -> bool {
    temporary_roots()
        .iter()
        .any(|root| canonical(path).starts_with(canonical(root)))
}

#[test]
fn a_target_dir_outside_the_temporary_roots_is_used_as_is() {
    let target = "/var/tmp";
    if in_a_temporary_root(Path::new(target)) {
        return; // $TMPDIR is /var/tmp: nothing here is outside the temporary roots
    }
    let dir = outside_temp(target).unwrap();
    assert_eq!(dir.path().parent(), Some(Path::new(target)));
}

#[test]
fn a_target_dir_under_tmp_is_moved_out_of_it() {
    let dir = outside_temp("/tmp/some-checkout/target/tmp").unwrap();
    assert!(dir.path().is_dir());
    assert!(!in_a_temporary_root(dir.path()), "{}", dir.path().display());
    assert!(dir.path().starts_with("/var/tmp/corvid-sandbox-tests"));
}
