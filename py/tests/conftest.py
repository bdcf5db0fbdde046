import pytest

from servers import Etcd, memcached_pool


@pytest.fixture
def etcd():
    """A real etcd on free loopback ports, stopped by PID after the test."""
    server = Etcd()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def memcached_servers():
    """Four real memcached servers, the first on port 11211, for a test module."""
    servers = memcached_pool()
    try:
        yield servers
    finally:
        for server in servers:
            server.close()
