//! Which URLs and addresses `web_fetch` may reach. A model that reads a hostile page can be told
//! to fetch `http://169.254.169.254/` or a router's admin page; the guard is what says no.
//!
//! A URL passes when it is `http`/`https` with no user name or password and a host; a name is
//! refused outright when it is a cloud-metadata or `localhost` name, otherwise it is resolved and
//! **every** address it has must be public (or allowed by the configuration). The fetcher then
//! connects only to the addresses checked here, so a second DNS answer (rebinding) is never
//! asked for. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 addresses are judged by the IPv4
//! address inside them.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use corvid_config::{HostRule, WebConfig};
use url::{Host, Url};

/// Why an address may not be fetched by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`: a private network.
    Private,
    /// `100.64.0.0/10`: carrier-grade NAT (shared address space).
    SharedNat,
    /// `fc00::/7` (and the old site-local `fec0::/10`): a private IPv6 network.
    UniqueLocal,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// A cloud provider's instance metadata service: `169.254.169.254` (AWS, GCP, Azure, OCI),
    /// `169.254.170.2` (AWS ECS), `100.100.100.200` (Alibaba), `fd00:ec2::254` (AWS IPv6).
    Metadata,
    /// `0.0.0.0/8`, `::`: Linux connects these to this machine.
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Reserved, documentation, benchmarking or discard ranges: not a web server anywhere.
    Reserved,
}

impl AddressClass {
    /// Whether `allow_private = true` lifts this class. Metadata never (only an `allow_hosts`
    /// entry does); unspecified, multicast, broadcast and reserved addresses never at all.
    fn lifted_by_allow_private(self) -> bool {
        matches!(
            self,
            Self::Loopback | Self::Private | Self::SharedNat | Self::UniqueLocal | Self::LinkLocal
        )
    }

    /// Whether an `allow_hosts` entry can lift this class.
    fn liftable(self) -> bool {
        self.lifted_by_allow_private() || self == Self::Metadata
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Loopback => "a loopback address (this machine)",
            Self::Private => "a private-network address",
            Self::SharedNat => "a carrier-grade NAT address",
            Self::UniqueLocal => "a unique-local (private) IPv6 address",
            Self::LinkLocal => "a link-local address",
            Self::Metadata => "a cloud metadata service",
            Self::Unspecified => "the unspecified address (this machine)",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Reserved => "a reserved address",
        })
    }
}

/// Host names that always mean a metadata service or this machine; refused before any lookup.
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Why a URL or an address was refused. The text goes to the model, so it says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not `http` or `https`.
    #[error("only http:// and https:// URLs can be fetched, not {scheme}:")]
    Scheme {
        /// The URL's scheme.
        scheme: String,
    },
    /// A user name or password in the URL.
    #[error("URLs with a user name or password are refused; fetch public pages only")]
    Credentials,
    /// No host (`http:///x`).
    #[error("the URL has no host")]
    NoHost,
    /// A name that means a metadata service or this machine.
    #[error("{host} is {class}; web_fetch does not reach it")]
    Name {
        /// The host as written.
        host: String,
        /// What it names.
        class: AddressClass,
    },
    /// The host is, or resolves to, an address outside the public internet.
    #[error(
        "{subject} {class}; web_fetch only reaches public addresses unless `[web] allow_private` or `allow_hosts` in config.toml says otherwise",
        subject = subject(host, verb, address)
    )]
    Address {
        /// The host as written.
        host: String,
        /// "is" for an address literal, "resolves to" for a name.
        verb: &'static str,
        /// The refused address.
        address: IpAddr,
        /// Why.
        class: AddressClass,
    },
}

/// "10.0.0.1 is" for a literal, "intranet.example resolves to 10.0.0.1," for a name.
fn subject(host: &str, verb: &str, address: &IpAddr) -> String {
    if verb == "is" {
        format!("{host} is")
    } else {
        format!("{host} {verb} {address},")
    }
}

/// The guard built from `[web]`.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    allow_private: bool,
    allow_hosts: Vec<HostRule>,
    /// Every address passes (the configured search backend: the user chose it).
    trusted: bool,
}

/// A URL that passed the first checks, with what the fetcher must do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An address literal that passed: connect to it.
    Address(IpAddr),
    /// A name: resolve it, then pass every address to [`Guard::check_resolved`].
    Name(String),
}

impl Guard {
    /// The guard `[web]` describes.
    pub fn new(web: &WebConfig) -> Self {
        Self {
            allow_private: web.allow_private,
            allow_hosts: web.allow_hosts.clone(),
            trusted: false,
        }
    }

    /// A guard that lets every address through (for a backend the user configured).
    pub fn trusting() -> Self {
        Self {
            trusted: true,
            ..Self::default()
        }
    }

    /// Checks the URL itself: scheme, credentials, host; an address literal is judged now.
    pub fn check_url(&self, url: &Url) -> Result<Target, Refusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refusal::Credentials);
        }
        let host_text = url.host_str().unwrap_or_default().to_owned();
        match url.host() {
            None => Err(Refusal::NoHost),
            Some(Host::Ipv4(address)) => self
                .check_address(&host_text, "is", IpAddr::V4(address), false)
                .map(|()| Target::Address(IpAddr::V4(address))),
            Some(Host::Ipv6(address)) => self
                .check_address(&host_text, "is", IpAddr::V6(address), false)
                .map(|()| Target::Address(IpAddr::V6(address))),
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name.is_empty() {
                    return Err(Refusal::NoHost);
                }
                if !self.trusted && !self.names_allowed(&name) {
                    let class = if METADATA_NAMES.contains(&name.as_str()) {
                        Some(AddressClass::Metadata)
                    } else if name == "localhost" || name.ends_with(".localhost") {
                        Some(AddressClass::Loopback)
                    } else {
                        None
                    };
                    if let Some(class) = class
                        && !(self.allow_private && class.lifted_by_allow_private())
                    {
                        return Err(Refusal::Name {
                            host: host_text,
                            class,
                        });
                    }
                }
                Ok(Target::Name(name))
            }
        }
    }

    /// Checks every address a name resolved to; one refused address refuses the name (a host
    /// with a public and a private address is a rebinding setup, not a web site).
    pub fn check_resolved(&self, host: &str, addresses: &[IpAddr]) -> Result<(), Refusal> {
        let by_name = self.names_allowed(host);
        addresses
            .iter()
            .try_for_each(|address| self.check_address(host, "resolves to", *address, by_name))
    }

    fn names_allowed(&self, host: &str) -> bool {
        self.allow_hosts.iter().any(|rule| rule.names(host))
    }

    fn check_address(
        &self,
        host: &str,
        verb: &'static str,
        address: IpAddr,
        by_name: bool,
    ) -> Result<(), Refusal> {
        if self.trusted {
            return Ok(());
        }
        let Some(class) = classify(address) else {
            return Ok(());
        };
        let canonical = canonical(address);
        let listed = by_name
            || self
                .allow_hosts
                .iter()
                .any(|rule| rule.contains(canonical) || rule.contains(address));
        let lifted =
            (listed && class.liftable()) || (self.allow_private && class.lifted_by_allow_private());
        if lifted {
            return Ok(());
        }
        Err(Refusal::Address {
            host: host.to_owned(),
            verb,
            address,
            class,
        })
    }
}

/// What `address` is when it is not a public internet address; `None` for a public one.
pub fn classify(address: IpAddr) -> Option<AddressClass> {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

/// The address as the kernel will treat it: IPv4-mapped and -compatible IPv6 as IPv4.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) if v6.segments()[..5] == [0; 5] => match embedded_v4(v6) {
            Some(v4) => IpAddr::V4(v4),
            None => address,
        },
        _ => address,
    }
}

fn classify_v4(v4: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, d] = v4.octets();
    let class = match (a, b, c) {
        (0, _, _) => AddressClass::Unspecified,
        (127, _, _) => AddressClass::Loopback,
        (10, _, _) => AddressClass::Private,
        (172, 16..=31, _) => AddressClass::Private,
        (192, 168, _) => AddressClass::Private,
        (100, 64..=127, _) if (a, b, c, d) == (100, 100, 100, 200) => AddressClass::Metadata,
        (100, 64..=127, _) => AddressClass::SharedNat,
        (169, 254, _) if (c, d) == (169, 254) || (c, d) == (170, 2) => AddressClass::Metadata,
        (169, 254, _) => AddressClass::LinkLocal,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressClass::Reserved,
        (198, 18..=19, _) => AddressClass::Reserved,
        (224..=239, _, _) => AddressClass::Multicast,
        (255, 255, 255) if d == 255 => AddressClass::Broadcast,
        (240..=255, _, _) => AddressClass::Reserved,
        _ => return None,
    };
    Some(class)
}

fn classify_v6(v6: Ipv6Addr) -> Option<AddressClass> {
    let segments = v6.segments();
    let bits = u128::from(v6);
    let class = if v6.is_unspecified() {
        AddressClass::Unspecified
    } else if v6.is_loopback() {
        AddressClass::Loopback
    } else if segments[..4] == [0xfd00, 0x0ec2, 0, 0] && bits & 0xffff_ffff_ffff_ffff == 0x254 {
        AddressClass::Metadata
    } else if segments[0] & 0xfe00 == 0xfc00 || segments[0] & 0xffc0 == 0xfec0 {
        AddressClass::UniqueLocal
    } else if segments[0] & 0xffc0 == 0xfe80 {
        AddressClass::LinkLocal
    } else if segments[0] & 0xff00 == 0xff00 {
        AddressClass::Multicast
    } else if segments[..3] == [0x64, 0xff9b, 1] {
        // Local-use NAT64 (RFC 8215): translated into a private network.
        AddressClass::Private
    } else if segments[..2] == [0x2001, 0x0db8]
        || segments[..4] == [0x0100, 0, 0, 0]
        || segments[0] & 0xe000 != 0x2000
    {
        // Documentation, discard-only, and everything outside the global unicast 2000::/3.
        AddressClass::Reserved
    } else {
        return None;
    };
    Some(class)
}

/// The IPv4 address an IPv6 address stands for: mapped `::ffff:a.b.c.d`, compatible
/// `::a.b.c.d` (deprecated, still routed by some stacks), NAT64 `64:ff9b::a.b.c.d` and 6to4
/// `2002:aabb:ccdd::`.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let segments = v6.segments();
    let low = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match segments {
        [0, 0, 0, 0, 0, 0xffff, high, low_half] => Some(low(high, low_half)),
        [0, 0, 0, 0, 0, 0, high, low_half] if !(high == 0 && low_half <= 1) => {
            Some(low(high, low_half))
        }
        [0x64, 0xff9b, 0, 0, 0, 0, high, low_half] => Some(low(high, low_half)),
        [0x2002, high, low_half, ..] => Some(low(high, low_half)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
