use pretty_assertions::assert_eq;

use super::{Platform, launchers};

fn programs(platform: Platform) -> Vec<&'static str> {
    launchers(platform)
        .into_iter()
        .map(|(program, _)| program)
        .collect()
}

#[test]
fn headless_linux_opens_nothing() {
    assert_eq!(programs(Platform::default()), Vec::<&str>::new());
}

#[test]
fn each_platform_has_its_launcher() {
    let display = Platform {
        display: true,
        ..Platform::default()
    };
    assert_eq!(programs(display), vec!["xdg-open"]);
    let wsl = Platform {
        wsl: true,
        ..Platform::default()
    };
    assert_eq!(programs(wsl), vec!["wslview"]);
    let macos = Platform {
        macos: true,
        ..Platform::default()
    };
    assert_eq!(programs(macos), vec!["open"]);
    let windows = Platform {
        windows: true,
        ..Platform::default()
    };
    assert_eq!(programs(windows), vec!["rundll32"]);
}
