"""`shardring dashboard --servers` against secured servers, as the
rebalancer reaches them (test_server_tls.py), with certificates generated
by the test (pki.py): redis-servers on a TLS port alone that require
client certificates and an ACL user, and memcached with `-Z` requiring
client certificates and its `-Y` user. The page's state (`/api/state`)
holds each member's key count and memory read over TLS as that user; a
wrong password, a missing user, an unknown server CA and plain TCP to a
TLS port are each shown as the member's `server_error`, naming its server
and the reason. No password appears in the state, the dashboard's output
or its command line."""

import json
import os
import subprocess
import time
import urllib.request

import pytest
import redis
from pymemcache.client.base import Client

from pki import Pki
from servers import MemcachedTls, RedisTls, free_port
from test_rebalance import CLI

PREFIX = "/shardring/dash-tls"
USER = "viewer"
PASSWORD = "dash-Redis-Pw-7c2e"
WRONG = "not-the-Pw-1234"
WAIT = 30


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def tls_redises(pki, etcd):
    """Three TLS-only redis-servers holding 300, 600 and 900 keys, members of the ring under PREFIX."""
    servers = []
    try:
        servers.extend(RedisTls(pki, USER, PASSWORD) for _ in range(3))
        cert, key = pki.client
        for index, server in enumerate(servers):
            client = redis.Redis(port=server.port, username=USER, password=PASSWORD, ssl=True,
                                 ssl_ca_certs=pki.ca.cert, ssl_certfile=cert, ssl_keyfile=key)
            pipe = client.pipeline(transaction=False)
            for i in range(300 * (index + 1)):
                pipe.set(f"k{i}", "v" * 50)
            pipe.execute()
            client.close()
            etcd.ctl("put", f"{PREFIX}/members/{server.address}", json.dumps({"weight": 1}))
        yield servers
    finally:
        for server in servers:
            server.close()


def tls_flags(pki):
    cert, key = pki.client
    return ["--tls-ca", pki.ca.cert, "--tls-cert", cert, "--tls-key", key]


class Dashboard:
    """`shardring dashboard` on a free loopback port, stopped by PID."""

    def __init__(self, etcd, kind, *flags, env=None):
        self.url = f"http://127.0.0.1:{free_port()}/api/state"
        command = [str(CLI), "dashboard", "--etcd", etcd.url, "--prefix", PREFIX, "--listen",
                   self.url.split("/")[2], "--servers", kind, *flags]
        environment = {k: v for k, v in os.environ.items() if not k.endswith("_PASSWORD")}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**environment, **(env or {})})
        # `ps` shows no password.
        with open(f"/proc/{self.process.pid}/cmdline", "rb") as cmdline:
            shown = cmdline.read().decode(errors="replace")
        assert PASSWORD not in shown and WRONG not in shown, shown

    def members(self, want, what):
        """The state's members once `want(members by id)` holds, within WAIT seconds."""
        deadline, state = time.monotonic() + WAIT, None
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.communicate()
            try:
                with urllib.request.urlopen(self.url, timeout=5) as response:
                    text = response.read().decode()
            except OSError:
                time.sleep(0.1)
                continue
            assert PASSWORD not in text and WRONG not in text
            state = {m["id"]: m for m in json.loads(text)["members"]}
            if want(state):
                return state
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {state}")

    def stop(self):
        """Stops it; its stdout and stderr, which hold no password."""
        self.process.terminate()
        stdout, stderr = self.process.communicate(timeout=WAIT)
        assert PASSWORD not in stdout + stderr and WRONG not in stdout + stderr, stdout + stderr
        return stdout + stderr


def shown_once(etcd, kind, ids, field, flags, env=None):
    """Runs a dashboard with `flags` until every member of `ids`, and no
    other, has a `field` ("keys" or "server_error"), then stops it: the
    members by id and the dashboard's output."""
    dashboard = Dashboard(etcd, kind, *flags, env=env)
    try:
        shown = dashboard.members(lambda m: set(m) == set(ids) and all(v[field] for v in m.values()),
                                  f"{len(ids)} members with {field}")
    finally:
        output = dashboard.stop()
    return shown, output


def test_redis_stats_are_read_over_tls_as_the_acl_user(etcd, tls_redises, pki, tmp_path):
    ids = [s.address for s in tls_redises]
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(0o600)
    for flags, env in [(["--redis-password-file", str(secret)], {}), ([], {"SHARDRING_REDIS_PASSWORD": PASSWORD})]:
        shown, output = shown_once(etcd, "redis", ids, "keys", [*tls_flags(pki), "--redis-user", USER, *flags], env)
        assert [shown[i]["keys"] for i in ids] == [300, 600, 900], shown
        assert all(shown[i]["bytes"] > 100_000 and shown[i]["server_error"] is None for i in ids), shown
        assert "plain TCP" not in output, output


@pytest.mark.parametrize("case", ["a wrong password", "no user", "an unknown server CA", "plain TCP to a TLS port"])
def test_a_refused_redis_is_shown_naming_the_server_and_the_reason(etcd, tls_redises, pki, case):
    ids = [s.address for s in tls_redises]
    flags, env = [*tls_flags(pki), "--redis-user", USER], {"SHARDRING_REDIS_PASSWORD": WRONG}
    want = "Redis authentication failed as user \"viewer\": WRONGPASS"
    if case == "no user":
        flags, env = tls_flags(pki), {}
        want = "INFO refused: NOAUTH Authentication required. (the server requires a user: --redis-user"
    elif case == "an unknown server CA":
        flags[flags.index(pki.ca.cert)] = pki.other_ca.cert
        want = "TLS handshake: invalid peer certificate: UnknownIssuer"
    elif case == "plain TCP to a TLS port":
        flags, env = [], {}
        want = "(does it speak TLS only? then --tls)"
    shown, _ = shown_once(etcd, "redis", ids, "server_error", flags, env)
    for id in ids:
        error = shown[id]["server_error"]
        assert error.startswith(f"{id}: ") and want in error and shown[id]["keys"] is None, error


def test_memcached_stats_are_read_over_tls_as_its_user(etcd, pki, tmp_path):
    users = {"viewer": PASSWORD}
    servers = []
    try:
        servers.extend(MemcachedTls(pki, users) for _ in range(2))
        ids = [s.address for s in servers]
        import ssl
        context = ssl.create_default_context(cafile=pki.ca.cert)
        context.load_cert_chain(*pki.client)
        for index, server in enumerate(servers):
            client = Client(("127.0.0.1", server.port), tls_context=context, timeout=10)
            client.raw_command(f"set shardring-auth 0 0 {len(USER) + 1 + len(PASSWORD)}\r\n{USER} {PASSWORD}".encode(),
                               b"\r\n")
            for i in range(100 * (index + 1)):
                assert client.set(f"k{i}", "v" * 50, noreply=False)
            client.close()
            etcd.ctl("put", f"{PREFIX}/members/{server.address}", json.dumps({"weight": 1}))
        secret = tmp_path / "password"
        secret.write_text(PASSWORD + "\n")
        secret.chmod(0o600)
        flags = [*tls_flags(pki), "--memcached-user", USER]
        shown, _ = shown_once(etcd, "memcached", ids, "keys", [*flags, "--memcached-password-file", str(secret)])
        assert [shown[i]["keys"] for i in ids] == [100, 200], shown
        shown, _ = shown_once(etcd, "memcached", ids, "server_error", flags, {"SHARDRING_MEMCACHED_PASSWORD": WRONG})
        for id in ids:
            error = shown[id]["server_error"]
            assert error.startswith(f"{id}: ") and "authentication failure" in error, error
    finally:
        for server in servers:
            server.close()


def test_security_flags_need_servers_and_a_readable_only_by_its_owner_password_file(tmp_path):
    result = subprocess.run([str(CLI), "dashboard", "--etcd", "http://127.0.0.1:1", "--prefix", PREFIX, "--tls"],
                            capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 2 and "give --servers too" in result.stderr, result.stderr
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(0o640)
    result = subprocess.run([str(CLI), "dashboard", "--etcd", "http://127.0.0.1:1", "--prefix", PREFIX, "--servers",
                             "redis", "--redis-user", USER, "--redis-password-file", str(secret)],
                            capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 2 and str(secret) in result.stderr and "mode 640" in result.stderr, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
