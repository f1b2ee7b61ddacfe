//! Is corvid answering on an address? A plain `GET /healthz` over loopback with a short
//! timeout, on the calling thread (the tray's monitor runs it off the runtime's workers; a
//! second launch runs it before any runtime exists).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// The address to reach a server bound to `bound` from this machine: a wildcard bind is
/// reached on loopback.
pub(crate) fn reachable(bound: SocketAddr) -> SocketAddr {
    match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), bound.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), bound.port())
        }
        _ => bound,
    }
}

/// `GET /healthz` answered `200` with corvid's `{"status":"ok"}` within `timeout`.
pub(crate) fn healthz(bound: SocketAddr, timeout: Duration) -> bool {
    let address = reachable(bound);
    let Ok(mut stream) = TcpStream::connect_timeout(&address, timeout) else {
        return false;
    };
    if stream.set_read_timeout(Some(timeout)).is_err()
        || stream.set_write_timeout(Some(timeout)).is_err()
    {
        return false;
    }
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    // The answer is a few hundred bytes; more than this is not corvid's.
    let mut answer = Vec::new();
    if stream.take(16 * 1024).read_to_end(&mut answer).is_err() {
        return false;
    }
    is_corvid_health(&String::from_utf8_lossy(&answer))
}

fn is_corvid_health(answer: &str) -> bool {
    let Some((head, body)) = answer.split_once("\r\n\r\n") else {
        return false;
    };
    let status_ok = head
        .lines()
        .next()
        .is_some_and(|line| line.split_whitespace().nth(1) == Some("200"));
    let body_ok = serde_json::from_str::<serde_json::Value>(body.trim())
        .is_ok_and(|value| value.get("status").and_then(|s| s.as_str()) == Some("ok"));
    status_ok && body_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_200_with_status_ok_is_corvids_health() {
        let ok = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"status\":\"ok\"}";
        assert!(is_corvid_health(ok));
        assert!(!is_corvid_health(
            "HTTP/1.1 503 Service Unavailable\r\n\r\n{\"status\":\"ok\"}"
        ));
        assert!(!is_corvid_health(
            "HTTP/1.1 200 OK\r\n\r\n<html>hello</html>"
        ));
        assert!(!is_corvid_health("SSH-2.0-OpenSSH_9.2"));
    }

    #[test]
    fn a_wildcard_bind_is_reached_on_loopback() {
        let v4: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert_eq!(reachable(v4), "127.0.0.1:8787".parse().unwrap());
        let v6: SocketAddr = "[::]:8787".parse().unwrap();
        assert_eq!(reachable(v6), "[::1]:8787".parse().unwrap());
        let loopback: SocketAddr = "127.0.0.2:9".parse().unwrap();
        assert_eq!(reachable(loopback), loopback);
    }

    #[test]
    fn a_closed_port_is_not_healthy() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        assert!(!healthz(address, Duration::from_millis(500)));
    }
}
