"""`shardring rebalance --backend redis` against Redis servers that require
an ACL user (Debian's redis-server, on free loopback ports, the `default`
user off): the user comes from --redis-user, its password from a file
readable by its owner alone or from SHARDRING_REDIS_PASSWORD, never from a
flag; a wrong password is a typed failure naming the server; the password
appears in no output."""

import json
import os
import subprocess

import pytest
import redis

import shardring
from servers import RedisAcl
from test_rebalance import CLI, config

USER = "mover"
PASSWORD = "s3cret-Pa55-for-tests"


@pytest.fixture
def acl_redises():
    servers = []
    try:
        servers.extend(RedisAcl(USER, PASSWORD) for _ in range(5))
        yield servers
    finally:
        for server in servers:
            server.close()


def connect(server, password=PASSWORD):
    return redis.Redis(port=server.port, username=USER, password=password)


def fill(servers, ring, count):
    by_address = {s.address: s for s in servers}
    for node in ring:
        pipe = connect(by_address[node]).pipeline(transaction=False)
        for i in range(count):
            if ring.get(f"k{i}") == node:
                pipe.set(f"k{i}", f"v{i}")
        pipe.execute()


def rebalance(tmp_path, ids, *extra, env=None):
    paths = ["--from", config(tmp_path / "old.json", ids[:4]), "--to", config(tmp_path / "new.json", ids)]
    return subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--json", *extra],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("mode", [["--migrate"], []], ids=["migrate", "copy"])
def test_a_move_authenticates_as_the_acl_user_with_a_password_from_a_file(acl_redises, tmp_path, mode):
    ids = [s.address for s in acl_redises]
    old, new = shardring.Ring(ids[:4]), shardring.Ring(ids)
    fill(acl_redises, old, 3000)
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(0o600)
    result = rebalance(tmp_path, ids, *mode, "--redis-user", USER, "--redis-password-file", str(secret))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    moving = sum(old.get(f"k{i}") != new.get(f"k{i}") for i in range(3000))
    assert report["copied"] == moving > 0, report
    # MIGRATE authenticated to the target as the user too (AUTH2): the keys are there.
    by_address = {s.address: s for s in acl_redises}
    assert all(connect(by_address[new.get(f"k{i}")]).get(f"k{i}") == f"v{i}".encode() for i in range(3000))
    assert PASSWORD not in result.stdout + result.stderr


def test_the_password_may_come_from_the_environment_and_a_wrong_one_fails_naming_the_server(acl_redises, tmp_path):
    ids = [s.address for s in acl_redises]
    fill(acl_redises, shardring.Ring(ids[:4]), 500)
    result = rebalance(tmp_path, ids, "--migrate", "--redis-user", USER, env={"SHARDRING_REDIS_PASSWORD": PASSWORD})
    assert result.returncode == 0, result.stdout + result.stderr
    wrong = "not-the-password"
    result = rebalance(tmp_path, ids, "--migrate", "--redis-user", USER, env={"SHARDRING_REDIS_PASSWORD": wrong})
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    errors = " ".join(t["error"] or "" for t in report["servers"].values())
    assert "authentication failed" in errors and any(i in errors for i in ids), errors
    assert wrong not in result.stdout + result.stderr and PASSWORD not in result.stdout + result.stderr
    # No credentials at all: the servers answer NOAUTH.
    result = rebalance(tmp_path, ids, "--migrate", env={"SHARDRING_REDIS_PASSWORD": ""})
    assert result.returncode == 2 and "SHARDRING_REDIS_PASSWORD: empty" in result.stderr, result.stderr
    env = {k: v for k, v in os.environ.items() if k != "SHARDRING_REDIS_PASSWORD"}
    result = subprocess.run([str(CLI), "rebalance", "--from", str(tmp_path / "old.json"), "--to",
                             str(tmp_path / "new.json"), "--backend", "redis", "--migrate", "--json"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 1 and "NOAUTH" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_password_file_others_can_read_is_refused_naming_it(tmp_path, mode):
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    secret.chmod(mode)
    result = subprocess.run([str(CLI), "rebalance", "--from", "a.json", "--to", "b.json", "--backend", "redis",
                             "--redis-user", USER, "--redis-password-file", str(secret)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert str(secret) in result.stderr and f"mode {mode:03o}" in result.stderr, result.stderr
    assert PASSWORD not in result.stderr


def test_a_user_without_a_password_and_redis_options_on_memcached_are_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SHARDRING_REDIS_PASSWORD"}
    ids = ["127.0.0.1:1", "127.0.0.1:2"]
    paths = ["--from", config(tmp_path / "old.json", ids[:1]), "--to", config(tmp_path / "new.json", ids)]
    result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "redis", "--redis-user", USER],
                            capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode == 2 and "--redis-user needs a password" in result.stderr, result.stderr
    result = subprocess.run([str(CLI), "rebalance", *paths, "--backend", "memcached", "--redis-user", USER],
                            capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode == 2 and "for --backend redis" in result.stderr, result.stderr
