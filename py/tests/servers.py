"""The Python tests' launcher of real servers (Debian's etcd-server,
memcached and redis-server): each runs as a child process on free loopback ports with a
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


def free_loopback_host(port):
    """A loopback address (127.x.y.z) on which `port` is free: for servers
    that must listen on a fixed port such as memcached's 11211, which
    placement treats specially, without colliding with one already there."""
    import random
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(2, 254)}"
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return host
    raise RuntimeError(f"no loopback address has port {port} free")


class Etcd:
    """An etcd server on loopback. `url` is its client URL."""

    scheme = "http"

    def __init__(self):
        if shutil.which("etcd") is None:
            raise RuntimeError("etcd is not installed (Debian package etcd-server)")
        self.dir = tempfile.mkdtemp(prefix="shardring-etcd-")
        self.client_port, self.peer_port = free_port(), free_port()
        self.url = f"{self.scheme}://127.0.0.1:{self.client_port}"
        self.process = None
        self.start()

    def server_args(self):
        """Flags beyond the listeners and the data dir."""
        return []

    def ctl_args(self):
        """etcdctl's flags beyond the endpoint."""
        return []

    def start(self):
        """Starts etcd on its ports. A port another test process took
        meanwhile (suites run side by side; a restart reuses this server's)
        makes etcd exit with "address already in use": tried again for up
        to 10 s."""
        for _ in range(50):
            logged = os.path.getsize(os.path.join(self.dir, "etcd.log")) if os.path.exists(
                os.path.join(self.dir, "etcd.log")) else 0
            try:
                return self._start_once()
            except RuntimeError:
                with open(os.path.join(self.dir, "etcd.log"), "rb") as log:
                    log.seek(logged)
                    if b"address already in use" not in log.read():
                        raise
                self.log.close()
                time.sleep(0.2)
        raise RuntimeError(f"etcd's ports stayed taken for 10 s: {self.output()}")

    def _start_once(self):
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(os.path.join(self.dir, "etcd.log"), "ab")
        self.process = subprocess.Popen(
            ["etcd", "--name", "t", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"t={peer}", *self.server_args()],
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
        result = subprocess.run(["etcdctl", "--endpoints", self.url, "--dial-timeout", "1s", *self.ctl_args(), *args],
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

    def wipe_and_restart(self):
        """Stops the server, deletes its data and starts it again on the same
        ports: a new store whose revisions start at 1 (as after a restore
        from an older snapshot, or a rebuilt cluster)."""
        self.stop()
        shutil.rmtree(os.path.join(self.dir, "data"), ignore_errors=True)
        self.start()

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class EtcdTls(Etcd):
    """An etcd that speaks TLS only, with `pki`'s server certificate, and
    requires a client certificate from `pki.ca` (`--client-cert-auth`).
    etcdctl authenticates with the `root` client certificate (CN root: the
    root user once auth is enabled). `token_ttl` is `--auth-token-ttl`."""

    scheme = "https"

    def __init__(self, pki, token_ttl=300):
        self.pki, self.token_ttl = pki, token_ttl
        super().__init__()

    def server_args(self):
        cert, key = self.pki.server
        return ["--cert-file", cert, "--key-file", key, "--trusted-ca-file", self.pki.ca.cert, "--client-cert-auth",
                "--auth-token-ttl", str(self.token_ttl)]

    def ctl_args(self):
        cert, key = self.pki.root
        return ["--cacert", self.pki.ca.cert, "--cert", cert, "--key", key]


class Process:
    """A server process on a free loopback port, stopped by PID (SIGKILL) on
    `stop` or `close`. `address` is its `host:port`; `host` is a loopback
    address (127.0.0.1 unless given) and `port` a free port unless given."""

    name = "server"

    def __init__(self, host="127.0.0.1", port=None):
        self.dir = tempfile.mkdtemp(prefix=f"shardring-{self.name}-")
        self.host = host
        self.port = port or free_port()
        self.address = f"{host}:{self.port}"
        # Only the first start may move a port chosen here: nobody knows it yet.
        self.port_movable = port is None
        self.process = None
        self.start()
        self.port_movable = False

    def command(self):
        raise NotImplementedError

    def answers(self):
        """True once the server answers a ping."""
        raise NotImplementedError

    def start(self):
        """Starts the server on its port. A free port can be taken before the
        server binds it (suites run side by side, and any client's outgoing
        connection may get it from the ephemeral range): the server exits
        with "Address already in use". The first start then moves to another
        free port, unless the caller gave the port; a restart keeps its port,
        which clients know, and tries again for up to 10 s."""
        deadline = time.monotonic() + 10
        for _ in range(50):
            said = self.said_in_use()
            try:
                return self._start_once()
            except RuntimeError:
                if self.said_in_use() == said or (not self.port_movable and time.monotonic() > deadline):
                    raise
                self.log.close()
                if self.port_movable:
                    self.port = free_port()
                    self.address = f"{self.host}:{self.port}"
                else:
                    time.sleep(0.2)
        raise RuntimeError(f"{self.name}'s port {self.port} stayed taken: {self.output()}")

    def _start_once(self):
        self.log = open(os.path.join(self.dir, f"{self.name}.log"), "ab")
        self.process = subprocess.Popen(self.command(), stdout=self.log, stderr=self.log, cwd=self.dir)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.output()}")
            try:
                if self.answers():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not answer within 10 s: {self.output()}")

    def log_paths(self):
        """The files the server writes its messages to: its stdout and
        stderr, and any log its configuration names."""
        return [os.path.join(self.dir, f"{self.name}.log")]

    def said_in_use(self):
        """How many times the server's logs say an address was already in use."""
        count = 0
        for path in self.log_paths():
            if os.path.exists(path):
                with open(path, "rb") as log:
                    count += log.read().lower().count(b"already in use")
        return count

    def output(self):
        """The end of each of the server's logs, for error messages."""
        text = ""
        for path in self.log_paths():
            if os.path.exists(path):
                with open(path, "rb") as log:
                    text += log.read().decode(errors="replace")[-2000:]
        return text

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None
        if getattr(self, "log", None):
            self.log.close()

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _ask(port, request, end, host="127.0.0.1", pki=None):
    """Sends `request` and reads until `end`; over TLS with `pki`'s CA and
    client certificate when `pki` is given."""
    with socket.create_connection((host, port), timeout=1) as plain:
        s = plain
        if pki is not None:
            import ssl
            context = ssl.create_default_context(cafile=pki.ca.cert)
            context.load_cert_chain(*pki.client)
            s = context.wrap_socket(plain, server_hostname=host)
        s.sendall(request)
        reply = b""
        while not reply.endswith(end):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply


class Memcached(Process):
    """A memcached (Debian's memcached) on loopback, 64 MB, one thread."""

    name = "memcached"

    def command(self):
        if shutil.which("memcached") is None:
            raise RuntimeError("memcached is not installed (Debian package memcached)")
        # memcached refuses to run as root without -u.
        user = ["-u", "root"] if os.geteuid() == 0 else []
        return ["memcached", "-l", self.host, "-p", str(self.port), "-U", "0", "-m", "64", "-t", "1", *user]

    def answers(self):
        return _ask(self.port, b"version\r\n", b"\r\n", self.host).startswith(b"VERSION")


class Redis(Process):
    """A redis-server (Debian's redis-server) on loopback, no persistence
    unless `appendonly` is set before a (re)start: then an append-only file
    in its temp dir, which a restart reads back, written and synced before
    each reply (`appendfsync always`). Redis's default, `everysec`, may
    postpone writing it while a background fsync runs and still reply: a
    server killed then loses writes it acknowledged (seen here once, an
    INCR, under load)."""

    name = "redis"
    appendonly = False

    def command(self):
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (Debian package redis-server)")
        return ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "always", "--dir", self.dir,
                "--daemonize", "no"]

    def answers(self):
        return _ask(self.port, b"PING\r\n", b"\r\n") == b"+PONG\r\n"


class RedisAcl(Redis):
    """A redis-server whose only user is `user` with `password` (all keys,
    all commands): the `default` user is off, so a client that does not
    authenticate gets NOAUTH."""

    def __init__(self, user, password, **kwargs):
        self.user, self.password = user, password
        super().__init__(**kwargs)

    def command(self):
        return [*super().command(), "--user", "default", "off", "--user", self.user, "on", f">{self.password}", "~*",
                "&*", "+@all"]

    def answers(self):
        return _ask(self.port, b"PING\r\n", b"\r\n").startswith(b"-NOAUTH")


class MemcachedTls(Memcached):
    """A memcached that speaks TLS only (`-Z`) with `pki`'s server
    certificate and requires a client certificate from `pki.ca`; with
    `users` ({user: password}) it also requires its text-protocol
    authentication (`-Y`)."""

    def __init__(self, pki, users=None, **kwargs):
        self.pki, self.users = pki, users
        super().__init__(**kwargs)

    def command(self):
        cert, key = self.pki.server
        auth = []
        if self.users:
            path = os.path.join(self.dir, "users")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
                out.writelines(f"{user}:{password}\n" for user, password in self.users.items())
            auth = ["-Y", path]
        return [*super().command(), "-Z", "-o",
                f"ssl_chain_cert={cert},ssl_key={key},ssl_ca_cert={self.pki.ca.cert},ssl_verify_mode=2", *auth]

    def answers(self):
        reply = _ask(self.port, b"version\r\n", b"\r\n", self.host, pki=self.pki)
        return reply.startswith(b"CLIENT_ERROR unauthenticated" if self.users else b"VERSION")


class RedisTls(RedisAcl):
    """A redis-server on a TLS port alone (`--port 0`) with `pki`'s server
    certificate, requiring a client certificate from `pki.ca`
    (`--tls-auth-clients yes`), whose only user is `user`; it MIGRATEs over
    TLS too (`--tls-cluster yes`, presenting its certificate as a client)."""

    def __init__(self, pki, user, password, **kwargs):
        self.pki = pki
        super().__init__(user, password, **kwargs)

    def command(self):
        cert, key = self.pki.server
        command = super().command()
        command[command.index("--port") + 1] = "0"
        return [*command, "--tls-port", str(self.port), "--tls-cert-file", cert, "--tls-key-file", key,
                "--tls-ca-cert-file", self.pki.ca.cert, "--tls-auth-clients", "yes", "--tls-cluster", "yes"]

    def answers(self):
        return _ask(self.port, b"PING\r\n", b"\r\n", pki=self.pki).startswith(b"-NOAUTH")


def free_cluster_port():
    """A free port P <= 55535 whose cluster bus port P + 10000 is free too."""
    import random
    for _ in range(200):
        port = random.randint(20000, 55535)
        with socket.socket() as s, socket.socket() as bus:
            try:
                s.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair for a Redis Cluster node")


class RedisClusterNode(Redis):
    """A redis-server with cluster mode on, its nodes.conf in its own temp dir
    (on a port whose bus port, 10000 higher, is free)."""

    name = "redis-cluster"

    def __init__(self):
        super().__init__(port=free_cluster_port())

    def command(self):
        return [*super().command(), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "5000"]


class Nutcracker(Process):
    """twemproxy (Debian's nutcracker) on loopback with one pool: `pool` is
    the pool's YAML body (hash, distribution, servers, ...) without `listen`."""

    name = "nutcracker"

    def __init__(self, pool):
        self.pool = pool
        super().__init__()

    def command(self):
        if shutil.which("nutcracker") is None:
            raise RuntimeError("nutcracker is not installed (Debian package nutcracker)")
        conf = os.path.join(self.dir, "nutcracker.yml")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(f"pool:\n  listen: {self.address}\n{self.pool}")
        return ["nutcracker", "-c", conf, "-s", str(free_port()), "-a", "127.0.0.1",
                "-o", os.path.join(self.dir, "nutcracker.out"), "-p", os.path.join(self.dir, "nutcracker.pid")]

    def answers(self):
        return _ask(self.port, b"get shardring-probe\r\n", b"END\r\n") == b"END\r\n"

    def log_paths(self):
        return [*super().log_paths(), os.path.join(self.dir, "nutcracker.out")]


def memcached_pool():
    """Four memcached servers, the first on port 11211 (which memcached
    clients leave out of point labels) on a free loopback address. Stop
    them with `close()` on each."""
    started = []
    try:
        started.append(Memcached(host=free_loopback_host(11211), port=11211))
        for _ in range(3):
            started.append(Memcached())
    except BaseException:
        for server in started:
            server.close()
        raise
    return started


def flush_all(servers):
    from pymemcache.client.base import Client
    for server in servers:
        client = Client((server.host, server.port))
        client.flush_all()
        client.close()


def holders(servers, keys):
    """Index in `servers` of the memcached holding each of `keys` (str,
    sent as UTF-8), asked of each server alone; fails on a key held twice."""
    from pymemcache.client.base import Client
    held = {}
    for index, server in enumerate(servers):
        client = Client((server.host, server.port), allow_unicode_keys=True)
        for key in client.get_many(keys):
            assert key not in held, f"{key!r} is on two servers"
            held[key] = index
        client.close()
    return held


class Haproxy(Process):
    """HAProxy (Debian's haproxy) on loopback: one frontend balancing to
    `backend` (the body of a `backend pool` section: `balance`, `hash-type`,
    `server` lines naming the ports in `ports`), and for each name in
    `ports` a section on that port answering every request with the name
    itself, so a response says which server HAProxy chose. A frontend of its
    own answers the readiness probe, so the probe never reaches the pool."""

    name = "haproxy"

    def __init__(self, backend, ports):
        self.backend = backend
        self.ports = ports
        super().__init__()

    def command(self):
        if shutil.which("haproxy") is None:
            raise RuntimeError("haproxy is not installed (Debian package haproxy)")
        self.admin = os.path.join(self.dir, "admin.sock")
        self.probe_port = free_port()
        lines = ["global", "    maxconn 4000", f"    stats socket {self.admin} level admin", "defaults", "    mode http", "    timeout connect 5s",
                 "    timeout client 30s", "    timeout server 30s", "frontend lb", f"    bind {self.address}",
                 "    default_backend pool", "frontend probe", f"    bind {self.host}:{self.probe_port}",
                 "    http-request return status 200 content-type text/plain string ready",
                 "backend pool", self.backend]
        for name, port in self.ports.items():
            lines += [f"listen {name}", f"    bind 127.0.0.1:{port}",
                      f"    http-request return status 200 content-type text/plain string {name}"]
        conf = os.path.join(self.dir, "haproxy.cfg")
        with open(conf, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return ["haproxy", "-db", "-f", conf]

    def admin_command(self, command):
        """Runs a command on the admin socket (`set weight pool/web1 4`) and returns its answer."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.admin)
            s.sendall(command.encode() + b"\n")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
        return reply.decode()

    def answers(self):
        # HTTP/1.0: the reply ends when HAProxy closes the connection.
        reply = _ask(self.probe_port, b"GET /shardring-probe HTTP/1.0\r\n\r\n", b"\0", host=self.host)
        return reply.startswith(b"HTTP/1.0 200") or reply.startswith(b"HTTP/1.1 200")


class Nginx(Process):
    """nginx (Debian's nginx-light) on loopback, one worker, no master: for
    each name in `upstreams`, an `upstream` block of that name (its body:
    the `hash` directive and `server` lines) and a location `/<name>` that
    proxies to it once (no retry on another server, no failure counting)
    and answers with header `X-Upstream` naming the address nginx chose.
    The upstream servers need not listen: nginx answers 502 with the header
    all the same. `/shardring-probe` answers the readiness probe itself."""

    name = "nginx"

    def __init__(self, upstreams):
        self.upstreams = upstreams
        super().__init__()

    def command(self):
        if shutil.which("nginx") is None:
            raise RuntimeError("nginx is not installed (Debian package nginx-light)")
        temp = {kind: os.path.join(self.dir, kind) for kind in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        lines = ["worker_processes 1;", "daemon off;", "master_process off;",
                 f"error_log {os.path.join(self.dir, 'error.log')} crit;", f"pid {os.path.join(self.dir, 'nginx.pid')};",
                 "events { worker_connections 256; }", "http {", "  access_log off;",
                 *(f"  {kind}_temp_path {path};" for kind, path in
                   [("client_body", temp["body"]), ("proxy", temp["proxy"]), ("fastcgi", temp["fastcgi"]),
                    ("uwsgi", temp["uwsgi"]), ("scgi", temp["scgi"])])]
        for name, body in self.upstreams.items():
            lines += [f"  upstream {name} {{", *(f"    {line}" for line in body.splitlines()), "  }"]
        lines += ["  server {", f"    listen {self.address};",
                  "    location = /shardring-probe { return 200 ready; }"]
        for name in self.upstreams:
            lines += [f"    location /{name} {{", f"      proxy_pass http://{name};", "      proxy_next_upstream off;",
                      "      proxy_connect_timeout 1s;", "      proxy_send_timeout 1s;", "      proxy_read_timeout 1s;",
                      "      add_header X-Upstream $upstream_addr always;", "    }"]
        lines += ["  }", "}"]
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return ["nginx", "-c", conf, "-p", self.dir]

    def answers(self):
        reply = _ask(self.port, b"GET /shardring-probe HTTP/1.0\r\n\r\n", b"ready")
        return reply.startswith(b"HTTP/1.1 200")

    def log_paths(self):
        return [*super().log_paths(), os.path.join(self.dir, "error.log")]
