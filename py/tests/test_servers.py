"""The harness that starts the real servers: a free port that something
else takes before the server binds it (suites run side by side, and any
outgoing connection may get a port from the ephemeral range) must not fail
the test that wanted the server (CI failed once in twemproxy's test on
nutcracker's "Address already in use")."""

import socket
import time

import pytest

import servers


@pytest.fixture
def taken_port(monkeypatch):
    """A port held by a listening socket, which free_port hands out once."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        real = servers.free_port
        handed = []

        def free_port():
            handed.append(port)
            return port if len(handed) == 1 else real()

        monkeypatch.setattr(servers, "free_port", free_port)
        yield port


def test_a_first_start_on_a_port_taken_meanwhile_moves_to_another(taken_port):
    server = servers.Memcached()
    try:
        assert server.port != taken_port
        assert server.address == f"127.0.0.1:{server.port}"
        assert server.said_in_use() == 1
        assert server.answers()
    finally:
        server.close()


def test_a_restart_keeps_its_port_and_says_when_it_stays_taken():
    server = servers.Redis()
    port = server.port
    server.stop()
    try:
        with socket.socket() as busy:
            busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            busy.bind(("127.0.0.1", port))
            busy.listen()
            began = time.monotonic()
            with pytest.raises(RuntimeError, match="(?i)already in use"):
                server.start()
            assert 10 <= time.monotonic() - began < 20
        server.start()
        assert server.port == port and server.answers()
    finally:
        server.close()
