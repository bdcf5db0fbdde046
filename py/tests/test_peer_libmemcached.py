"""The "libmemcached" mode against real libmemcached: pylibmc compiled
against Debian's libmemcached 1.1.4 (py/requirements-dev.txt builds it
from source) sets keys on real memcached servers on loopback; each server is
then asked which keys it holds, and every key must sit where our mode
places it. One server listens on port 11211, which libmemcached leaves out
of its point labels."""

import pylibmc
import pytest

import shardring
from servers import flush_all, holders

# pylibmc's `hash` behaviour names -> our key_hash names (libhashkit's enum).
HASHES = {
    "default": "one_at_a_time",
    "md5": "md5",
    "crc": "crc32",
    "fnv1_64": "fnv1_64",
    "fnv1a_64": "fnv1a_64",
    "fnv1_32": "fnv1_32",
    "fnv1a_32": "fnv1a_32",
    "murmur": "murmur",
    "jenkins": "jenkins",
}

# Weights: all 1 (100 points per server, hashed with the key hash), one 0
# (libmemcached reads it as 1), and some above 1 (weighted MD5 points).
WEIGHTS = {"ones": [1, 1, 1, 1], "zero": [1, 0, 1, 1], "heavy": [1, 2, 1, 3]}

# Keys in ASCII and in UTF-8 (bytes >= 0x80 hash as signed chars in libhashkit).
KEYS = [f"user:{i}" for i in range(1200)] + [f"é{i}" for i in range(150)] + [f"ключ-{i}" for i in range(150)]


def configurations():
    """(pylibmc behaviours, our distribution, our key_hash) for every
    distribution x key hash pylibmc can configure, in pylibmc's order of
    applying behaviours (hash, ketama, ketama_weighted, distribution)."""
    for name, ours in HASHES.items():
        yield {"distribution": "modula", "hash": name}, "modula", ours
        yield {"distribution": "consistent ketama", "hash": name}, "consistent_ketama", ours
        yield {"ketama": True, "hash": name}, "consistent_ketama", ours
        yield {"distribution": "consistent weighted", "hash": name}, "consistent_weighted", ours
        yield {"distribution": "consistent ketama spy", "hash": name}, "consistent_ketama_spy", ours
    # KETAMA_WEIGHTED sets the key hash to MD5 after `hash` is applied.
    yield {"ketama_weighted": True}, "consistent_weighted", "md5"
    yield {"ketama_weighted": True, "hash": "crc"}, "consistent_weighted", "md5"
    yield {"ketama_weighted": True, "distribution": "consistent ketama spy"}, "consistent_ketama_spy_weighted", "md5"


def place_through_pylibmc(servers, weights, behaviors):
    flush_all(servers)
    specs = [f"{s.address}:{w}" for s, w in zip(servers, weights)]
    client = pylibmc.Client(specs, behaviors=behaviors)
    failed = client.set_multi({key: "v" for key in KEYS})
    assert failed == [], f"pylibmc could not set {failed[:5]}"
    client.disconnect_all()
    return holders(servers, KEYS)


@pytest.mark.parametrize("weights", WEIGHTS.values(), ids=WEIGHTS.keys())
def test_every_key_sits_where_libmemcached_put_it(memcached_servers, weights):
    servers = memcached_servers
    compared = matched = 0
    mismatches = []
    for behaviors, distribution, key_hash in configurations():
        held = place_through_pylibmc(servers, weights, behaviors)
        assert len(held) == len(KEYS), f"{behaviors}: {len(KEYS) - len(held)} keys are on no server"
        ring = shardring.Ring(
            {s.address: w for s, w in zip(servers, weights)},
            algorithm="libmemcached",
            distribution=distribution,
            key_hash=key_hash,
        )
        address = [s.address for s in servers]
        wrong = [key for key in KEYS if ring.get(key) != address[held[key]]]
        compared += len(KEYS)
        matched += len(KEYS) - len(wrong)
        if wrong:
            mismatches.append(f"{behaviors} ({distribution}, {key_hash}): {len(wrong)} of {len(KEYS)}, e.g. {wrong[:3]}")
    print(f"libmemcached {weights}: {matched} of {compared} keys matched")
    assert not mismatches, "\n".join(mismatches)


def test_hsieh_is_refused_by_both():
    with pytest.raises(pylibmc.Error, match="hsieh|38"):
        pylibmc.Client(["127.0.0.1:1"], behaviors={"hash": "hsieh"})
    with pytest.raises(shardring.InvalidConfigError, match="hsieh"):
        shardring.Ring(["127.0.0.1:1"], algorithm="libmemcached", key_hash="hsieh")


def test_the_ring_reports_its_libmemcached_parameters():
    ring = shardring.Ring(["a:1", "b:2"], algorithm="libmemcached", distribution="consistent_weighted")
    assert (ring.distribution, ring.key_hash) == ("consistent_weighted", "md5")
    again = shardring.Ring.from_json(ring.to_json())
    assert again == ring
    assert "distribution='consistent_weighted'" in repr(ring)
    plain = shardring.Ring(["a:1", "b:2"], algorithm="libmemcached")
    assert (plain.distribution, plain.key_hash, plain.point_count) == ("consistent_ketama", "one_at_a_time", 200)
    with pytest.raises(shardring.InvalidConfigError, match="distribution"):
        shardring.Ring(["a"], distribution="modula")


# The C API, called on Debian's libmemcached.so.11 itself: every key hash
# (murmur3 too, which pylibmc cannot name), behaviours applied in call order
# (KETAMA_WEIGHTED, then HASH), IPv6 hosts and a Unix socket. The library's
# own memcached_generate_hash() names the server of each key; no server runs.
BEHAVIOR_HASH, BEHAVIOR_DISTRIBUTION, BEHAVIOR_KETAMA_WEIGHTED = 2, 9, 16
C_HASHES = ["one_at_a_time", "md5", "crc32", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", None, "murmur", "jenkins",
            "murmur3"]  # libhashkit's enum order; 7 is hsieh, not built
C_DISTRIBUTIONS = {  # our name -> behaviours before HASH, as (behaviour, value)
    "modula": [(BEHAVIOR_DISTRIBUTION, 0)],
    "consistent_ketama": [(BEHAVIOR_DISTRIBUTION, 2)],
    "consistent_weighted": [(BEHAVIOR_KETAMA_WEIGHTED, 1)],
    "consistent_ketama_spy": [(BEHAVIOR_DISTRIBUTION, 4)],
    "consistent_ketama_spy_weighted": [(BEHAVIOR_KETAMA_WEIGHTED, 1), (BEHAVIOR_DISTRIBUTION, 4)],
}
# (our id, libmemcached host, port or None for a Unix socket)
C_SERVERS = [("cache-a.example", "cache-a.example", 11211), ("10.0.0.2:11212", "10.0.0.2", 11212),
             ("[::1]:11213", "::1", 11213), ("/run/memcached.sock", "/run/memcached.sock", None),
             ("fe80::7", "fe80::7", 11211)]
C_WEIGHTS = {"ones": [1, 1, 1, 1, 1], "zero": [0, 1, 1, 0, 1], "heavy": [3, 1, 0, 2, 5]}


@pytest.fixture(scope="module")
def libmemcached():
    import ctypes
    lib = ctypes.CDLL("libmemcached.so.11")
    lib.memcached_create.restype = ctypes.c_void_p
    lib.memcached_create.argtypes = [ctypes.c_void_p]
    lib.memcached_free.argtypes = [ctypes.c_void_p]
    lib.memcached_behavior_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
    lib.memcached_server_add_with_weight.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint16, ctypes.c_uint32]
    lib.memcached_server_add_unix_socket_with_weight.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32]
    lib.memcached_generate_hash.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.memcached_generate_hash.restype = ctypes.c_uint32
    return lib


@pytest.mark.parametrize("weights", C_WEIGHTS.values(), ids=C_WEIGHTS.keys())
def test_the_c_library_places_every_key_where_our_mode_does(libmemcached, weights):
    keys = [key.encode() for key in KEYS] + [bytes([b, 0x80 | b, 0xFF - b]) for b in range(1, 128)]
    compared = 0
    for distribution, behaviours in C_DISTRIBUTIONS.items():
        for hash_value, key_hash in enumerate(C_HASHES):
            if key_hash is None:
                continue
            memc = libmemcached.memcached_create(None)
            try:
                for behaviour, value in behaviours + [(BEHAVIOR_HASH, hash_value)]:
                    assert libmemcached.memcached_behavior_set(memc, behaviour, value) == 0, (behaviour, value)
                for (_, host, port), weight in zip(C_SERVERS, weights):
                    if port is None:
                        rc = libmemcached.memcached_server_add_unix_socket_with_weight(memc, host.encode(), weight)
                    else:
                        rc = libmemcached.memcached_server_add_with_weight(memc, host.encode(), port, weight)
                    assert rc == 0, host
                theirs = [libmemcached.memcached_generate_hash(memc, key, len(key)) for key in keys]
            finally:
                libmemcached.memcached_free(memc)
            ring = shardring.Ring({id: w for (id, _, _), w in zip(C_SERVERS, weights)}, algorithm="libmemcached",
                                  distribution=distribution, key_hash=key_hash)
            ids = [id for id, _, _ in C_SERVERS]
            wrong = [key for key, index in zip(keys, theirs) if ring.get(key) != ids[index]]
            assert not wrong, f"{distribution} {key_hash} {weights}: {len(wrong)} of {len(keys)}, e.g. {wrong[:3]}"
            compared += len(keys)
    print(f"libmemcached C API {weights}: {compared} of {compared} keys matched")
