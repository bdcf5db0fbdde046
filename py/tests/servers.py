"""The Python tests' launcher of real servers (etcd from Debian's
etcd-server): each runs as a child process on free loopback ports with a
temporary data dir, is waited on until it answers, and is stopped by PID
when the test ends, also when it fails. A server that cannot start fails
the test with its own output; nothing is skipped."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    """An etcd server on loopback. `url` is its client URL."""

    def __init__(self):
        if shutil.which("etcd") is None:
            raise RuntimeError("etcd is not installed (Debian package etcd-server)")
        self.dir = tempfile.mkdtemp(prefix="shardring-etcd-")
        self.client_port, self.peer_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.process = None
        self.start()

    def start(self):
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(os.path.join(self.dir, "etcd.log"), "ab")
        self.process = subprocess.Popen(
            ["etcd", "--name", "t", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"t={peer}"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.process.returncode}: {self.output()}")
            if self.ctl("endpoint", "health", check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"etcd did not answer within 15 s: {self.output()}")

    def output(self):
        with open(os.path.join(self.dir, "etcd.log"), "rb") as log:
            return log.read().decode(errors="replace")[-2000:]

    def ctl(self, *args, check=True):
        """Runs etcdctl against this server."""
        result = subprocess.run(["etcdctl", "--endpoints", self.url, "--dial-timeout", "1s", *args],
                                env={**os.environ, "ETCDCTL_API": "3"}, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"etcdctl {args}: {result.stderr}")
        return result

    def stop(self):
        """Stops the server by PID (SIGKILL), keeping its data."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None
        if getattr(self, "log", None):
            self.log.close()

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
