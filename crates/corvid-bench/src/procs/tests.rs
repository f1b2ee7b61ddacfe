use super::*;

#[test]
fn parses_proc_status() {
    let status = "Name:\tcorvid\nVmPeak:\t  120000 kB\nVmHWM:\t    9876 kB\nVmRSS:\t    8192 kB\n";
    assert_eq!(
        parse_status(status),
        Some(Memory {
            rss_kib: 8192,
            peak_kib: 9876
        })
    );
    assert_eq!(parse_status("Name:\tkthread\n"), None);
}

#[test]
fn free_ports_are_distinct() {
    let ports = free_ports(3).unwrap();
    assert_eq!(ports.len(), 3);
    assert!(ports[0] != ports[1] && ports[1] != ports[2] && ports[0] != ports[2]);
}
