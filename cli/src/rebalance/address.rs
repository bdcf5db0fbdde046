//! Server addresses of `rebalance`: `HOST:PORT`, as `--address ID=HOST:PORT`
//! gives one or a node id is one. HOST is a name, an IPv4 address or an
//! IPv6 address in brackets (`[::1]:6379`); PORT is 1 to 65535. Both are
//! checked before any server is contacted, and two nodes that reach one
//! server are refused: a key "moving" between them would be copied onto
//! itself, found already there, and then deleted by `--delete`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// A server address, checked.
#[derive(Clone, Debug)]
pub(crate) struct Address {
    /// As given.
    text: String,
    host: Host,
    port: u16,
}

/// A host, compared as a server is: IPs as numbers (an IPv4-mapped IPv6
/// address as its IPv4 address), names without regard to case or a final dot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Host {
    Ip(IpAddr),
    Name(String),
}

/// Whether `name` is a host name: letters, digits, `-`, `_` and `.`.
fn is_host_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Address {
    /// Checks `text` as `HOST:PORT`; the error says what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Address, String> {
        let (host, port) = if let Some(bracketed) = text.strip_prefix('[') {
            let (ip, rest) = bracketed.split_once(']').ok_or("an IPv6 address opened with [ must end with ]")?;
            let ip: std::net::Ipv6Addr =
                ip.parse().map_err(|_| format!("{ip:?} in brackets is not an IPv6 address"))?;
            let port = rest.strip_prefix(':').ok_or_else(|| format!("no port after [{ip}]: write [{ip}]:PORT"))?;
            (Host::Ip(IpAddr::V6(ip)), port)
        } else {
            let (host, port) = text.rsplit_once(':').ok_or("no port: write HOST:PORT")?;
            if host.is_empty() {
                return Err("no host before the port".to_owned());
            }
            if host.contains(':') {
                return Err(format!("the IPv6 address {host} must be in brackets: [{host}]:{port}"));
            }
            let host = match host.parse::<IpAddr>() {
                Ok(ip) => Host::Ip(ip),
                Err(_) if is_host_name(host) => Host::Name(host.trim_end_matches('.').to_ascii_lowercase()),
                Err(_) => return Err(format!("{host:?} is neither a host name nor an IP address")),
            };
            (host, port)
        };
        let port = match port.parse::<u32>() {
            Ok(port @ 1..=65535) => port as u16,
            Ok(_) => return Err(format!("the port {port} is not from 1 to 65535")),
            Err(_) if port.is_empty() => return Err("no port after the colon".to_owned()),
            Err(_) => return Err(format!("the port {port:?} is not a number from 1 to 65535")),
        };
        let host = match host {
            Host::Ip(IpAddr::V6(v6)) => Host::Ip(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)),
            other => other,
        };
        Ok(Address { text: text.to_owned(), host, port })
    }

    /// Whether `other` names the same host (as [`Host`] compares them) and port.
    pub(crate) fn same_host_and_port(&self, other: &Address) -> bool {
        self.host == other.host && self.port == other.port
    }

    /// As given.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The sockets it reaches: an IP address's own, or what the resolver
    /// gives for a name (none when it cannot resolve it).
    fn sockets(&self) -> Vec<SocketAddr> {
        match &self.host {
            Host::Ip(ip) => vec![SocketAddr::new(*ip, self.port)],
            Host::Name(name) => (name.as_str(), self.port)
                .to_socket_addrs()
                .map(|sockets| {
                    sockets
                        .map(|s| match s.ip() {
                            IpAddr::V6(v6) => SocketAddr::new(v6.to_ipv4_mapped().map_or(s.ip(), IpAddr::V4), s.port()),
                            IpAddr::V4(_) => s,
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One node of a run and how it is reached.
pub(crate) struct Reached<'a> {
    pub(crate) id: &'a str,
    pub(crate) address: &'a Address,
    /// Whether the address is an `--address` (else it is the node's id).
    pub(crate) given: bool,
}

impl Reached<'_> {
    fn describe(&self) -> String {
        if self.given {
            format!("{:?} (--address {}={})", self.id, self.id, self.address.text)
        } else {
            format!("{:?} (its id)", self.id)
        }
    }
}

/// The first two of `nodes` that reach one server, with a message naming
/// both ids and the address: equal addresses (`127.0.0.1:6379` twice, or
/// `[::ffff:127.0.0.1]:6379` and `127.0.0.1:6379`), or names that resolve
/// to a common socket (`localhost:6379` and `127.0.0.1:6379`).
pub(crate) fn shared_server(nodes: &[Reached<'_>]) -> Option<String> {
    let mut hosts: HashMap<(&Host, u16), usize> = HashMap::new();
    let mut sockets: HashMap<SocketAddr, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let address = node.address;
        if let Some(&j) = hosts.get(&(&address.host, address.port)) {
            return Some(format!(
                "nodes {} and {} are one server, {}",
                nodes[j].describe(),
                node.describe(),
                address.text
            ));
        }
        hosts.insert((&address.host, address.port), i);
        for socket in address.sockets() {
            if let Some(&j) = sockets.get(&socket) {
                return Some(format!(
                    "nodes {} and {} are one server: {} and {} both reach {socket}",
                    nodes[j].describe(),
                    node.describe(),
                    nodes[j].address.text,
                    address.text
                ));
            }
            sockets.entry(socket).or_insert(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_are_checked() {
        for good in ["127.0.0.1:6379", "cache-1.example:11211", "[::1]:6379", "localhost:1", "h:65535"] {
            assert_eq!(Address::parse(good).unwrap().as_str(), good);
        }
        let refused = |text: &str| Address::parse(text).unwrap_err();
        assert_eq!(refused(":"), "no host before the port");
        assert_eq!(refused("[::1]"), "no port after [::1]: write [::1]:PORT");
        assert_eq!(refused("host:99999"), "the port 99999 is not from 1 to 65535");
        assert_eq!(refused("host:0"), "the port 0 is not from 1 to 65535");
        assert_eq!(refused("host:"), "no port after the colon");
        assert_eq!(refused("host:http"), "the port \"http\" is not a number from 1 to 65535");
        assert_eq!(refused("foo"), "no port: write HOST:PORT");
        assert_eq!(refused("::1:6379"), "the IPv6 address ::1 must be in brackets: [::1]:6379");
        assert_eq!(refused("[nope]:1"), "\"nope\" in brackets is not an IPv6 address");
        assert_eq!(refused("a b:1"), "\"a b\" is neither a host name nor an IP address");
    }

    fn reached<'a>(nodes: &'a [(&'a str, Address, bool)]) -> Vec<Reached<'a>> {
        nodes.iter().map(|(id, address, given)| Reached { id, address, given: *given }).collect()
    }

    #[test]
    fn two_nodes_reaching_one_server_are_named() {
        let a = |t: &str| Address::parse(t).unwrap();
        let nodes = [
            ("127.0.0.1:26401", a("127.0.0.1:26401"), false),
            ("127.0.0.1:26402", a("127.0.0.1:26402"), false),
            ("new", a("127.0.0.1:26401"), true),
        ];
        assert_eq!(
            shared_server(&reached(&nodes)).unwrap(),
            "nodes \"127.0.0.1:26401\" (its id) and \"new\" (--address new=127.0.0.1:26401) are one server, \
             127.0.0.1:26401"
        );
        let nodes = [("a", a("[::ffff:10.0.0.1]:6379"), true), ("b", a("10.0.0.1:6379"), true)];
        assert!(shared_server(&reached(&nodes)).unwrap().starts_with("nodes \"a\""));
        let nodes = [("a", a("HOST.example.:6379"), true), ("b", a("host.example:6379"), true)];
        assert!(shared_server(&reached(&nodes)).is_some());
        let nodes = [("a", a("localhost:26401"), true), ("b", a("127.0.0.1:26401"), true)];
        assert_eq!(
            shared_server(&reached(&nodes)).unwrap(),
            "nodes \"a\" (--address a=localhost:26401) and \"b\" (--address b=127.0.0.1:26401) are one server: \
             localhost:26401 and 127.0.0.1:26401 both reach 127.0.0.1:26401"
        );
        let nodes = [("a", a("127.0.0.1:1"), true), ("b", a("127.0.0.1:2"), true), ("c", a("[::1]:1"), true)];
        assert_eq!(shared_server(&reached(&nodes)), None);
    }
}
