"""The "twemproxy" mode against real twemproxy (Debian's nutcracker 0.5)
in front of real memcached servers on loopback: for every `hash:`, both
distributions, servers with and without names, and a hash_tag, keys are set
through nutcracker, each memcached is asked which keys it holds, and every
key must sit where our mode places it."""

import pytest
from pymemcache.client.base import Client

import shardring
from servers import Nutcracker, flush_all, holders

HASHES = ["one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh",
          "murmur", "jenkins"]
WEIGHTS = [1, 2, 1, 3]
# Names that look like addresses are still literal labels in twemproxy.
NAMES = ["alpha:11211", "[::1]:7", "b", "gamma-1"]
KEYS = [f"user:{i}" for i in range(700)] + [f"é{i}" for i in range(100)] + [f"{{tag{i % 7}}}:{i}" for i in range(100)]


def pool(servers, hash, distribution, named, hash_tag):
    lines = [f"  hash: {hash}", f"  distribution: {distribution}", "  auto_eject_hosts: false", "  timeout: 2000"]
    if hash_tag:
        lines.append(f'  hash_tag: "{hash_tag}"')
    lines.append("  servers:")
    for server, weight, name in zip(servers, WEIGHTS, NAMES):
        lines.append(f"   - {server.address}:{weight}" + (f" {name}" if named else ""))
    return "\n".join(lines) + "\n"


def configurations():
    for hash in HASHES:
        for distribution in ("ketama", "modula"):
            for named in (False, True):
                yield hash, distribution, named, None
    yield "fnv1a_64", "ketama", False, "{}"
    yield "murmur", "modula", True, "{}"


def test_every_key_sits_where_twemproxy_put_it(memcached_servers):
    servers = memcached_servers
    compared = matched = 0
    mismatches = []
    for hash, distribution, named, hash_tag in configurations():
        flush_all(servers)
        proxy = Nutcracker(pool(servers, hash, distribution, named, hash_tag))
        try:
            client = Client((proxy.host, proxy.port), allow_unicode_keys=True)
            for key in KEYS:
                client.set(key, b"v", noreply=False)
            client.close()
        finally:
            proxy.close()
        held = holders(servers, KEYS)
        assert len(held) == len(KEYS), f"{hash} {distribution}: {len(KEYS) - len(held)} keys are on no server"
        server_ids = NAMES if named else [s.address for s in servers]
        options = {"distribution": distribution, "key_hash": hash, "server_ids": "label" if named else "address"}
        if hash_tag:
            options["hash_tag"] = hash_tag
        ring = shardring.Ring(dict(zip(server_ids, WEIGHTS)), algorithm="twemproxy", **options)
        wrong = [key for key in KEYS if ring.get(key) != server_ids[held[key]]]
        compared += len(KEYS)
        matched += len(KEYS) - len(wrong)
        if wrong:
            mismatches.append(f"{hash} {distribution} named={named} tag={hash_tag}: {len(wrong)} of {len(KEYS)}, e.g. {wrong[:3]}")
    print(f"twemproxy: {matched} of {compared} keys matched")
    assert not mismatches, "\n".join(mismatches)


def test_twemproxy_refuses_what_nutcracker_refuses():
    with pytest.raises(shardring.InvalidNodeError, match="twemproxy"):
        shardring.Ring({"127.0.0.1:1": 0}, algorithm="twemproxy")
    with pytest.raises(shardring.InvalidConfigError, match="murmur3"):
        shardring.Ring(["127.0.0.1:1"], algorithm="twemproxy", key_hash="murmur3")
    with pytest.raises(shardring.InvalidConfigError, match="two bytes"):
        shardring.Ring(["127.0.0.1:1"], algorithm="twemproxy", hash_tag="{")
