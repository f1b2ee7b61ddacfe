use std::net::IpAddr;

use corvid_config::{HostRule, WebConfig};
use pretty_assertions::assert_eq;
use url::Url;

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn guard(allow_private: bool, hosts: &[&str]) -> Guard {
    Guard::new(&WebConfig {
        allow_private,
        allow_hosts: hosts
            .iter()
            .map(|host| HostRule::parse(host).unwrap())
            .collect(),
        ..WebConfig::default()
    })
}

fn check(guard: &Guard, url: &str) -> Result<Target, Refusal> {
    guard.check_url(&Url::parse(url).unwrap())
}

#[test]
fn every_non_public_range_is_classified() {
    use AddressClass::*;
    for (address, class) in [
        ("127.0.0.1", Loopback),
        ("127.255.0.9", Loopback),
        ("10.1.2.3", Private),
        ("172.16.0.1", Private),
        ("172.31.255.255", Private),
        ("192.168.0.1", Private),
        ("100.64.0.1", SharedNat),
        ("100.127.255.254", SharedNat),
        ("100.100.100.200", Metadata),
        ("169.254.169.254", Metadata),
        ("169.254.170.2", Metadata),
        ("169.254.1.1", LinkLocal),
        ("0.0.0.0", Unspecified),
        ("0.1.2.3", Unspecified),
        ("224.0.0.1", Multicast),
        ("239.255.255.250", Multicast),
        ("255.255.255.255", Broadcast),
        ("240.0.0.1", Reserved),
        ("192.0.2.1", Reserved),
        ("198.18.0.1", Reserved),
        ("::", Unspecified),
        ("::1", Loopback),
        ("fc00::1", UniqueLocal),
        ("fdff::1", UniqueLocal),
        ("fec0::1", UniqueLocal),
        ("fd00:ec2::254", Metadata),
        ("fe80::1", LinkLocal),
        ("ff02::1", Multicast),
        ("2001:db8::1", Reserved),
        ("64:ff9b:1::a00:1", Private),
        // IPv6 forms of IPv4 addresses are judged by the IPv4 address.
        ("::ffff:127.0.0.1", Loopback),
        ("::ffff:10.0.0.1", Private),
        ("::ffff:169.254.169.254", Metadata),
        ("::127.0.0.1", Loopback),
        ("::10.0.0.1", Private),
        ("64:ff9b::7f00:1", Loopback),
        ("64:ff9b::a9fe:a9fe", Metadata),
        ("2002:7f00:1::", Loopback),
        ("2002:c0a8:101::1", Private),
    ] {
        assert_eq!(classify(ip(address)), Some(class), "{address}");
    }
    for public in [
        "1.1.1.1",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "169.255.0.1",
        "192.169.0.1",
        "2606:4700::1111",
        "2a00:1450:4001::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::",
    ] {
        assert_eq!(classify(ip(public)), None, "{public}");
    }
}

#[test]
fn address_literals_are_judged_before_any_lookup() {
    let guard = Guard::default();
    for url in [
        "http://127.0.0.1:8080/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://10.0.0.1/",
        "http://192.168.1.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://0.0.0.0:9000/",
        // The WHATWG parser turns these spellings into 127.0.0.1 / 10.0.0.1.
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://012.0.0.1/",
    ] {
        let refusal = check(&guard, url).unwrap_err();
        assert!(
            matches!(refusal, Refusal::Address { verb: "is", .. }),
            "{url}: {refusal:?}"
        );
    }
    assert_eq!(
        check(&guard, "https://93.184.215.14/").unwrap(),
        Target::Address(ip("93.184.215.14"))
    );
}

#[test]
fn names_of_this_machine_and_metadata_are_refused_without_a_lookup() {
    let guard = Guard::default();
    for (url, class) in [
        ("http://localhost:3000/", AddressClass::Loopback),
        ("http://LOCALHOST./", AddressClass::Loopback),
        ("http://app.localhost/", AddressClass::Loopback),
        ("http://metadata.google.internal/", AddressClass::Metadata),
        ("http://Metadata.Google.Internal./x", AddressClass::Metadata),
        ("http://metadata/", AddressClass::Metadata),
        ("http://instance-data/", AddressClass::Metadata),
    ] {
        match check(&guard, url) {
            Err(Refusal::Name { class: found, .. }) => assert_eq!(found, class, "{url}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    assert_eq!(
        check(&guard, "https://Example.COM./page").unwrap(),
        Target::Name("example.com".to_owned())
    );
}

#[test]
fn only_http_and_https_without_credentials() {
    let guard = Guard::default();
    for (url, expected) in [
        (
            "file:///etc/passwd",
            Refusal::Scheme {
                scheme: "file".to_owned(),
            },
        ),
        (
            "ftp://example.com/",
            Refusal::Scheme {
                scheme: "ftp".to_owned(),
            },
        ),
        (
            "gopher://example.com/",
            Refusal::Scheme {
                scheme: "gopher".to_owned(),
            },
        ),
        ("https://user:pass@example.com/", Refusal::Credentials),
        ("https://user@example.com/", Refusal::Credentials),
        ("https://:secret@example.com/", Refusal::Credentials),
    ] {
        assert_eq!(check(&guard, url).unwrap_err(), expected, "{url}");
    }
}

#[test]
fn every_resolved_address_must_pass() {
    let guard = Guard::default();
    assert_eq!(
        guard.check_resolved("example.com", &[ip("93.184.215.14"), ip("2606:2800::1")]),
        Ok(())
    );
    let refusal = guard
        .check_resolved("rebind.example", &[ip("93.184.215.14"), ip("10.0.0.1")])
        .unwrap_err();
    assert_eq!(
        refusal,
        Refusal::Address {
            host: "rebind.example".to_owned(),
            verb: "resolves to",
            address: ip("10.0.0.1"),
            class: AddressClass::Private,
        }
    );
    assert!(refusal.to_string().contains("allow_private"), "{refusal}");
    assert!(
        guard
            .check_resolved("mapped.example", &[ip("::ffff:192.168.0.10")])
            .is_err()
    );
}

#[test]
fn allow_private_lifts_private_ranges_but_not_metadata() {
    let guard = guard(true, &[]);
    for url in [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://10.0.0.1/",
        "http://[fe80::1]/",
        "http://100.64.0.1/",
    ] {
        assert!(check(&guard, url).is_ok(), "{url}");
    }
    for url in [
        "http://169.254.169.254/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
    ] {
        assert!(check(&guard, url).is_err(), "{url}");
    }
}

#[test]
fn allow_hosts_lifts_exactly_what_it_lists() {
    let guard = guard(false, &["wiki.lan", "127.0.0.1", "192.168.7.0/24"]);
    assert!(check(&guard, "http://127.0.0.1:9/").is_ok());
    assert!(
        check(&guard, "http://[::ffff:127.0.0.1]:9/").is_ok(),
        "the same address"
    );
    assert!(check(&guard, "http://127.0.0.2:9/").is_err());
    assert!(check(&guard, "http://[::1]:9/").is_err());
    assert!(check(&guard, "http://192.168.7.99/").is_ok());
    assert!(check(&guard, "http://192.168.8.1/").is_err());
    assert!(guard.check_resolved("wiki.lan", &[ip("10.9.9.9")]).is_ok());
    assert!(
        guard
            .check_resolved("other.lan", &[ip("10.9.9.9")])
            .is_err()
    );
    assert!(
        guard
            .check_resolved("other.lan", &[ip("192.168.7.1")])
            .is_ok()
    );
    assert!(check(&guard, "http://0.0.0.0/").is_err(), "never liftable");
    let metadata = super::Guard::new(&WebConfig {
        allow_hosts: vec![HostRule::parse("169.254.169.254").unwrap()],
        ..WebConfig::default()
    });
    assert!(check(&metadata, "http://169.254.169.254/").is_ok());
}

#[test]
fn a_trusting_guard_passes_everything_that_is_http() {
    let guard = Guard::trusting();
    assert!(check(&guard, "http://127.0.0.1:8888/search").is_ok());
    assert!(check(&guard, "http://localhost:8888/").is_ok());
    assert!(check(&guard, "file:///etc/passwd").is_err());
}

#[test]
fn refusals_read_well_for_the_model() {
    let guard = Guard::default();
    assert_eq!(
        check(&guard, "http://127.0.0.1:8080/")
            .unwrap_err()
            .to_string(),
        "127.0.0.1 is a loopback address (this machine); web_fetch only reaches public addresses unless `[web] allow_private` or `allow_hosts` in config.toml says otherwise"
    );
    assert_eq!(
        guard
            .check_resolved("intranet.example", &[ip("10.0.0.1")])
            .unwrap_err()
            .to_string(),
        "intranet.example resolves to 10.0.0.1, a private-network address; web_fetch only reaches public addresses unless `[web] allow_private` or `allow_hosts` in config.toml says otherwise"
    );
    assert_eq!(
        check(&guard, "http://metadata.google.internal/")
            .unwrap_err()
            .to_string(),
        "metadata.google.internal is a cloud metadata service; web_fetch does not reach it"
    );
}
