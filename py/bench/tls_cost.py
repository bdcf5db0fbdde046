"""What TLS costs a fleet, plain and secured measured in the same run.

Follower convergence: an etcd in plain TCP and one TLS-only with client
certificates required and auth enabled (the follower authenticates as a
read-only user); CHANGES member writes, one at a time, through etcd's JSON
gateway from this process, and for each the time from the write's
acknowledgement to a follower (the Python binding) holding its revision.
Prints p50 and p99 per etcd.

Rebalancer: five Redis servers with an ACL user, plain and TLS-only with
client certificates (`tls-cluster yes`, so MIGRATE runs over TLS), and five
memcached, plain and `-Z`; KEYS keys of 100 bytes on the 4-server ring,
`shardring rebalance` to 5 servers (Redis --migrate and copy, memcached
copy). Prints keys/s per row and the TLS/plain ratio.

Not a test: `make bench` runs it at 200,000 keys and 200 changes,
`make bench-smoke` at 5,000 and 20.
"""

import argparse
import base64
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py" / "tests"))

import redis  # noqa: E402
from pki import Pki  # noqa: E402
from servers import Etcd, EtcdTls, Memcached, MemcachedTls, RedisAcl, RedisTls  # noqa: E402

import shardring  # noqa: E402

CLI = ROOT / "target" / "release" / "shardring"
USER, PASSWORD = "mover", "bench-Pw-1b2c"
ROOT_PASSWORD = "root-Pw-0"
VALUE = os.urandom(100)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Writer:
    """Member writes through etcd's JSON gateway (`/v3/kv/put`) on one
    kept-alive HTTP connection, as the root user when auth is on: the
    write's acknowledgement is the response, read in this process."""

    def __init__(self, etcd, pki=None, root_password=None):
        import http.client
        import ssl
        host, port = etcd.url.split("//")[1].rsplit(":", 1)
        if pki is None:
            self.connection = http.client.HTTPConnection(host, int(port), timeout=10)
        else:
            context = ssl.create_default_context(cafile=pki.ca.cert)
            context.load_cert_chain(*pki.anonymous)
            self.connection = http.client.HTTPSConnection(host, int(port), timeout=10, context=context)
        self.headers = {"Content-Type": "application/json"}
        if root_password is not None:
            token = self.call("/v3/auth/authenticate", {"name": "root", "password": root_password})["token"]
            self.headers["Authorization"] = token

    def call(self, path, body):
        self.connection.request("POST", path, json.dumps(body), self.headers)
        response = self.connection.getresponse()
        raw = response.read()
        try:
            answer = json.loads(raw)
        except ValueError:
            raise SystemExit(f"etcd {path}: HTTP {response.status}: {raw[:300]!r}")
        if response.status != 200:
            raise SystemExit(f"etcd {path}: {answer}")
        return answer

    def put(self, key, value):
        encode = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
        return int(self.call("/v3/kv/put", {"key": encode(key), "value": encode(value)})["header"]["revision"])


def convergence(etcd, changes, writer, **security):
    prefix = "/bench/tls"
    writer.put(f"{prefix}/members/seed", '{"weight": 1}')
    follower = shardring.Follower.etcd(etcd.url, prefix, timeout=10, **security)
    waits = []
    try:
        for i in range(changes):
            revision = writer.put(f"{prefix}/members/m{i % 50}", json.dumps({"weight": 1 + i % 3}))
            acknowledged = time.perf_counter()
            follower.wait_for_revision(revision, timeout=10)
            waits.append(time.perf_counter() - acknowledged)
    finally:
        follower.close()
    return waits


def secured_etcd(pki, directory):
    etcd = EtcdTls(pki)
    etcd.ctl("user", "add", f"root:{ROOT_PASSWORD}", "--interactive=false")
    etcd.ctl("user", "grant-role", "root", "root")
    etcd.ctl("role", "add", "reader")
    etcd.ctl("role", "grant-permission", "--prefix=true", "reader", "read", "/bench/tls/")
    etcd.ctl("user", "add", "follower:follower-Pw-0", "--interactive=false")
    etcd.ctl("user", "grant-role", "follower", "reader")
    etcd.ctl("auth", "enable")
    password = pathlib.Path(directory) / "follower.password"
    password.write_text("follower-Pw-0\n")
    password.chmod(0o600)
    cert, key = pki.client
    return etcd, {"ca_file": pki.ca.cert, "cert_file": cert, "key_file": key, "user": "follower",
                  "password_file": str(password)}


def fill_redis(servers, ring, keys, connect):
    by_address = {s.address: s for s in servers}
    for node in ring:
        pipe = connect(by_address[node]).pipeline(transaction=False)
        for i in range(keys):
            if ring.get(f"key:{i}") == node:
                pipe.set(f"key:{i}", VALUE)
                if len(pipe) >= 1000:
                    pipe.execute()
        pipe.execute()


def fill_memcached(servers, ring, keys, tls):
    from pymemcache.client.base import Client
    context = None
    if tls is not None:
        import ssl
        context = ssl.create_default_context(cafile=tls.ca.cert)
        context.load_cert_chain(*tls.client)
    for server in servers:
        client = Client(("127.0.0.1", server.port), tls_context=context, timeout=30)
        mine = [f"key:{i}" for i in range(keys) if ring.get(f"key:{i}") == server.address]
        for start in range(0, len(mine), 100):
            assert client.set_many({k: VALUE for k in mine[start:start + 100]}, noreply=False) == []
        client.close()


def move(ids, backend, extra, env, directory):
    paths = []
    for name, members in [("old", ids[:4]), ("new", ids)]:
        path = pathlib.Path(directory) / f"{name}.json"
        path.write_text(json.dumps({"format_version": 1, "nodes": [{"id": i} for i in members]}))
        paths.append(str(path))
    start = time.perf_counter()
    result = subprocess.run([str(CLI), "rebalance", "--from", paths[0], "--to", paths[1], "--backend", backend,
                             "--json", *extra], capture_output=True, text=True, timeout=3600,
                            env={**os.environ, **env})
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"rebalance {backend} {extra} failed: {result.stdout[-2000:]}{result.stderr}")
    copied = json.loads(result.stdout.strip().splitlines()[-1])["copied"]
    return copied, seconds


def rebalancer(keys, pki, directory):
    rows = []
    cert, key = pki.client
    tls_flags = ["--tls-ca", pki.ca.cert, "--tls-cert", cert, "--tls-key", key]
    for mode in (["--migrate"], []):
        for secure in (False, True):
            servers = [RedisTls(pki, USER, PASSWORD) if secure else RedisAcl(USER, PASSWORD) for _ in range(5)]
            try:
                ids = [s.address for s in servers]

                def connect(server, secure=secure):
                    extra = {"ssl": True, "ssl_ca_certs": pki.ca.cert, "ssl_certfile": cert,
                             "ssl_keyfile": key} if secure else {}
                    return redis.Redis(port=server.port, username=USER, password=PASSWORD, **extra)

                fill_redis(servers, shardring.Ring(ids[:4]), keys, connect)
                extra = ["--redis-user", USER, *mode, *(tls_flags if secure else [])]
                copied, seconds = move(ids, "redis", extra, {"SHARDRING_REDIS_PASSWORD": PASSWORD}, directory)
                rows.append((f"redis {'migrate' if mode else 'copy'}", "tls" if secure else "plain", copied, seconds))
            finally:
                for server in servers:
                    server.close()
    for secure in (False, True):
        servers = [MemcachedTls(pki) if secure else Memcached() for _ in range(5)]
        try:
            ids = [s.address for s in servers]
            fill_memcached(servers[:4], shardring.Ring(ids[:4]), keys, pki if secure else None)
            copied, seconds = move(ids, "memcached", tls_flags if secure else [], {}, directory)
            rows.append(("memcached copy", "tls" if secure else "plain", copied, seconds))
        finally:
            for server in servers:
                server.close()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--changes", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        pki = Pki(directory)
        print(f"follower convergence over {args.changes} member changes (write acknowledged -> follower holds it):")
        plain = Etcd()
        try:
            waits = convergence(plain, args.changes, Writer(plain))
        finally:
            plain.close()
        print(f"  plain TCP          p50 {percentile(waits, 0.5) * 1e3:6.2f} ms  p99 {percentile(waits, 0.99) * 1e3:6.2f} ms")
        secured, security = secured_etcd(pki, directory)
        try:
            tls_waits = convergence(secured, args.changes, Writer(secured, pki, ROOT_PASSWORD), **security)
        finally:
            secured.close()
        print(f"  TLS + mTLS + auth  p50 {percentile(tls_waits, 0.5) * 1e3:6.2f} ms  "
              f"p99 {percentile(tls_waits, 0.99) * 1e3:6.2f} ms  "
              f"(p99 ratio {percentile(tls_waits, 0.99) / percentile(waits, 0.99):.2f})")
        print(f"\nrebalancer, {args.keys} keys of {len(VALUE)} B, 4 -> 5 servers:")
        rows = rebalancer(args.keys, pki, directory)
        rates = {}
        for name, transport, copied, seconds in rows:
            rates[(name, transport)] = copied / seconds
            ratio = f"  (TLS/plain {rates[(name, 'tls')] / rates[(name, 'plain')]:.2f})" if transport == "tls" else ""
            print(f"  {name:15} {transport:5} {copied:8d} keys {seconds:7.2f} s {copied / seconds:9.0f} keys/s{ratio}")


if __name__ == "__main__":
    main()
