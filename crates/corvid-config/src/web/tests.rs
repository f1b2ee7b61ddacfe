use std::net::IpAddr;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

fn read(text: &str) -> Result<WebConfig, ConfigError> {
    let table: toml::Table = text.parse().unwrap();
    read_web(table.get("web"), "config.toml")
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn without_a_table_fetch_is_on_search_off_and_private_addresses_refused() {
    let web = read("").unwrap();
    assert_eq!(web, WebConfig::default());
    assert!(web.fetch);
    assert_eq!(web.search, SearchBackend::Off);
    assert!(!web.allow_private);
    assert!(web.allow_hosts.is_empty());
}

#[test]
fn every_key_is_read() {
    let web = read(
        r#"
[web]
fetch = false
search = "SearXNG"
search_url = "http://127.0.0.1:8888/"
search_results = 8
allow_private = true
allow_hosts = ["Wiki.LAN.", "10.0.0.5", "192.168.1.77/24", "[::1]", "fd00::/8"]
max_page_kb = 1024
max_text_kb = 64
timeout_s = 12
max_redirects = 2
"#,
    )
    .unwrap();
    assert_eq!(
        web,
        WebConfig {
            fetch: false,
            search: SearchBackend::Searxng,
            search_url: Some("http://127.0.0.1:8888".to_owned()),
            search_results: 8,
            allow_private: true,
            allow_hosts: vec![
                HostRule::Name("wiki.lan".to_owned()),
                HostRule::Network {
                    address: ip("10.0.0.5"),
                    prefix: 32
                },
                HostRule::Network {
                    address: ip("192.168.1.0"),
                    prefix: 24
                },
                HostRule::Network {
                    address: ip("::1"),
                    prefix: 128
                },
                HostRule::Network {
                    address: ip("fd00::"),
                    prefix: 8
                },
            ],
            max_page_bytes: 1024 * 1024,
            max_text_bytes: 64 * 1024,
            timeout: Duration::from_secs(12),
            max_redirects: 2,
        }
    );
}

#[test]
fn rules_match_names_and_networks() {
    let name = HostRule::parse("wiki.lan").unwrap();
    assert!(name.names("WIKI.lan."));
    assert!(!name.names("wiki.lan.evil.example"));
    assert!(!name.contains(ip("10.0.0.1")));
    let network = HostRule::parse("192.168.1.0/24").unwrap();
    assert!(network.contains(ip("192.168.1.200")));
    assert!(!network.contains(ip("192.168.2.1")));
    assert!(
        !network.contains(ip("::ffff:192.168.1.1")),
        "families differ"
    );
    let everything = HostRule::parse("0.0.0.0/0").unwrap();
    assert!(everything.contains(ip("8.8.8.8")));
    let one = HostRule::parse("::1").unwrap();
    assert!(one.contains(ip("::1")));
    assert!(!one.contains(ip("::2")));
    for bad in [
        "",
        "10.0.0.0/33",
        "::/129",
        "wiki.lan/24",
        "http://wiki.lan",
        "a..b",
        "has space",
    ] {
        assert_eq!(HostRule::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    for (text, key, hint) in [
        (
            "[web]\nsearch = \"bing\"",
            "web.search",
            "searxng, brave, tavily",
        ),
        ("[web]\nsearch = \"searxng\"", "web.search_url", "required"),
        (
            "[web]\nsearch_url = \"ftp://x\"",
            "web.search_url",
            "http://",
        ),
        ("[web]\nsearch_results = 0", "web.search_results", "1 to 20"),
        (
            "[web]\nallow_hosts = \"10.0.0.1\"",
            "web.allow_hosts",
            "list",
        ),
        (
            "[web]\nallow_hosts = [\"10.0.0.0/40\"]",
            "web.allow_hosts",
            "network",
        ),
        (
            "[web]\nallow_private = \"yes\"",
            "web.allow_private",
            "true or false",
        ),
        ("[web]\nmax_redirects = 11", "web.max_redirects", "0 to 10"),
        (
            "[web]\nallow_host = [\"x\"]",
            "web.allow_host",
            "allow_hosts",
        ),
        ("web = 1", "web", "[web]"),
    ] {
        let error = read(text).unwrap_err().to_string();
        assert!(error.contains(key), "{text}: {error}");
        assert!(error.contains(hint), "{text}: {error}");
    }
}

#[test]
fn keys_are_needed_only_by_brave_and_tavily() {
    assert_eq!(SearchBackend::Brave.key_variable(), Some("BRAVE_API_KEY"));
    assert_eq!(SearchBackend::Tavily.key_variable(), Some("TAVILY_API_KEY"));
    assert_eq!(SearchBackend::Searxng.key_variable(), None);
    let web = read("[web]\nsearch = \"brave\"").unwrap();
    assert_eq!(web.search, SearchBackend::Brave);
    assert_eq!(web.search_url, None);
}

/// Every `[web]` key is in the README's settings reference.
#[test]
fn every_web_key_is_in_the_readme() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let section = readme
        .split_once("[web]")
        .map(|(_, rest)| rest)
        .expect("a [web] table in README.md");
    let section = section.split("```").next().unwrap_or_default();
    for key in WEB_KEYS {
        assert!(
            section.contains(&format!("\n{key} =")),
            "[web] key `{key}` is not in README.md's settings reference"
        );
    }
    for variable in ["BRAVE_API_KEY", "TAVILY_API_KEY"] {
        assert!(readme.contains(variable), "{variable} is not in README.md");
    }
}
