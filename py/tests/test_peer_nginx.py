"""The "nginx" mode against a real nginx (Debian's nginx-light 1.22) on
loopback, `hash $arg_k consistent;`: pairs of servers whose points collide
(found here by a birthday search with nginx's point formula), in both
orders, alone and among servers written as host names, Unix sockets and
IPv6 addresses, with weights and with servers marked `down`. For each,
keys on the tied point's arc and ordinary keys: every server nginx picks
must be the one our mode places the key on."""

import http.client
import json
import random
import struct
import zlib

import pytest

import shardring
from servers import Nginx

ORDINARY = 150
ON_THE_TIE = 50


def split(server):
    """Host and port bytes as nginx splits a server string."""
    if server[:5].lower() == "unix:":
        return server[5:].encode(), b""
    colon = server.rfind(":")
    if colon >= 0 and server[colon + 1:].isdigit():
        return server[:colon].encode(), server[colon + 1:].encode()
    return server.encode(), b""


def points(server, weight=1):
    """nginx's points of a server: crc32(host, 0x00, port, previous point LE)."""
    host, port = split(server)
    base = zlib.crc32(host + b"\0" + port)
    previous, out = 0, []
    for _ in range(160 * weight):
        previous = zlib.crc32(struct.pack("<I", previous), base)
        out.append(previous)
    return out


def collisions(count):
    """`count` pairs of ports P whose servers 127.0.0.1:P share a point, and the point."""
    owner, pairs = {}, []
    for port in range(20000, 30000):
        for point in points(f"127.0.0.1:{port}"):
            other = owner.setdefault(point, port)
            if other != port:
                pairs.append((other, port, point))
                if len(pairs) == count:
                    return pairs
    raise AssertionError(f"the birthday search found only {len(pairs)} pairs")


def keys_on_arc(servers, point, count, rng):
    """Keys whose crc32 lands on the arc that ends at `point`."""
    every = sorted({p for server, weight, _ in servers for p in points(server, weight)})
    before = every[every.index(point) - 1]
    keys = []
    while len(keys) < count:
        key = f"tie{rng.getrandbits(48):x}"
        hashed = zlib.crc32(key.encode())
        if before < hashed <= point or (before > point and (hashed > before or hashed <= point)):
            keys.append(key)
    return keys


def upstream(servers):
    lines = ["hash $arg_k consistent;"]
    for server, weight, down in servers:
        lines.append(f"server {server} weight={weight} max_fails=0{' down' if down else ''};")
    return "\n".join(lines)


def our_ring(servers):
    """Our mode over `servers`, from a JSON config (the only way to mark a
    server down) and, without down servers, from the constructor too."""
    nodes = [{"id": s, "weight": w, **({"down": True} if d else {})} for s, w, d in servers]
    ring = shardring.Ring.from_json(json.dumps({"format_version": 1, "algorithm": "nginx", "nodes": nodes}))
    if not any(d for _, _, d in servers):
        assert shardring.Ring({s: w for s, w, _ in servers}, algorithm="nginx") == ring
    return ring


class Client:
    """Asks nginx which server it picks for a key under an upstream."""

    def __init__(self, proxy, servers_by_upstream):
        self.connection = http.client.HTTPConnection(proxy.host, proxy.port, timeout=10)
        # The address nginx reports -> the server string it was configured with.
        self.names = {}
        for servers in servers_by_upstream.values():
            for server, _, _ in servers:
                if server.startswith("unix:"):
                    self.names[server] = server
                else:
                    host, port = split(server)
                    address = "[::1]" if host == b"[::1]" else "127.0.0.1"
                    self.names[f"{address}:{port.decode()}"] = server

    def pick(self, name, key):
        self.connection.request("GET", f"/{name}?k={key}")
        response = self.connection.getresponse()
        response.read()
        address = response.getheader("X-Upstream")
        assert address is not None, (name, key, response.status)
        return self.names[address]


def configurations():
    """(name, servers) pairs: servers as (server string, weight, down)."""
    rng = random.Random(30)
    found = collisions(3)
    unix = "unix:/run/shardring-test-nginx.sock"
    configs, ties = {}, {}
    for p, (a, b, point) in enumerate(found):
        for order, (first, second) in enumerate([(a, b), (b, a)]):
            first, second = f"127.0.0.1:{first}", f"127.0.0.1:{second}"
            plain = [(first, 1, False), (second, 1, False)]
            mixed = [("localhost:21999", 2, False), (first, 1, False), (unix, 1, False),
                     (second, 3, False), ("[::1]:22999", 1, False)]
            first_down = [(s, w, s == first) for s, w, _ in mixed]
            other_down = [(s, w, s == "localhost:21999") for s, w, _ in mixed]
            for kind, servers in [("plain", plain), ("mixed", mixed), ("firstdown", first_down),
                                  ("otherdown", other_down)]:
                name = f"u{p}{order}{kind}"
                configs[name] = servers
                ties[name] = (first, second, point, keys_on_arc(servers, point, ON_THE_TIE, rng))
    weighted = [(f"127.0.0.1:{23000 + i}", w, False) for i, w in enumerate([1, 2, 5, 3])]
    configs["weighted"] = weighted
    return configs, ties


CONFIGS, TIES = configurations()


@pytest.fixture(scope="module")
def nginx():
    proxy = Nginx({name: upstream(servers) for name, servers in CONFIGS.items()})
    try:
        yield Client(proxy, CONFIGS)
    finally:
        proxy.close()


@pytest.mark.parametrize("name", sorted(TIES))
def test_a_tie_goes_where_nginx_sends_it(nginx, name):
    servers = CONFIGS[name]
    first, second, point, keys = TIES[name]
    ring = our_ring(servers)
    picked = [nginx.pick(name, key) for key in keys]
    matched = sum(p == ring.get(key) for p, key in zip(picked, keys))
    print(f"nginx {name}: {matched} of {len(keys)} keys on the shared point {point} matched")
    assert matched == len(keys), [(k, p, ring.get(k)) for k, p in zip(keys, picked) if p != ring.get(k)][:5]
    if name.endswith("firstdown"):
        # The down server keeps the tie and hides the other's point: keys
        # go on to the next point of a server not down (nginx's own rule,
        # from the points computed here), not to the other server's equal
        # point, which is where weight 0 (no points at all) would send them.
        owner = {}
        for server, weight, _ in servers:
            for q in points(server, weight):
                owner.setdefault(q, server)
        ring_points = sorted(owner)
        at = ring_points.index(point)
        after = next(owner[q] for q in ring_points[at + 1:] + ring_points[:at] if owner[q] != first)
        assert set(picked) == {after}
        if after != second:
            drained = [(s, 0 if d else w, False) for s, w, d in servers]
            assert all(our_ring(drained).get(key) == second for key in keys)
    else:
        assert set(picked) == {first}, "the server listed first keeps the shared point"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_ordinary_keys_go_where_nginx_sends_them(nginx, name):
    ring = our_ring(CONFIGS[name])
    # $arg_k is the raw query text: "%2F" hashes as those three bytes. (An
    # empty key nginx sends round robin; SPEC says so, and it is not sent.)
    keys = [f"user{i}-{name}" for i in range(ORDINARY)] + ["a", "%2F", "caf%C3%A9"]
    mismatches = [(key, got, ring.get(key)) for key in keys if (got := nginx.pick(name, key)) != ring.get(key)]
    print(f"nginx {name}: {len(keys) - len(mismatches)} of {len(keys)} ordinary keys matched")
    assert not mismatches, mismatches[:5]
