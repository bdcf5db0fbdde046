import pytest

from servers import Etcd


@pytest.fixture
def etcd():
    """A real etcd on free loopback ports, stopped by PID after the test."""
    server = Etcd()
    try:
        yield server
    finally:
        server.close()
