// The Node tests' launcher of real servers (etcd from Debian's etcd-server):
// a child process on free loopback ports with a temporary data dir, waited
// on until it answers and stopped by PID in the test's `after` hook, also
// when the test fails. A server that cannot start fails the test with its
// own output; nothing is skipped.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * Certificates made with the openssl command in `dir`: a CA (`ca.crt`), a
 * server certificate naming 127.0.0.1 (`server.crt`, `server.key`) and a
 * client certificate with CN root (`root.crt`, `root.key`); keys mode 600.
 */
export function makePki(dir) {
  const run = (command) => {
    const result = spawnSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`${command}: ${result.stderr}`)
  }
  const key = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'
  run(`openssl req -x509 ${key} -days 1 -subj /CN=test-ca -keyout ca.key -out ca.crt`)
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n')
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n')
  for (const [name, cn, ext] of [['server', '127.0.0.1', 'server.ext'], ['root', 'root', 'client.ext']]) {
    run(`openssl req ${key} -subj /CN=${cn} -keyout ${name}.key -out ${name}.csr`)
    run(`openssl x509 -req -in ${name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile ${ext} -out ${name}.crt`)
    chmodSync(join(dir, `${name}.key`), 0o600)
  }
  return { dir, ca: join(dir, 'ca.crt'), cert: join(dir, 'root.crt'), key: join(dir, 'root.key'),
    serverCert: join(dir, 'server.crt'), serverKey: join(dir, 'server.key') }
}

export class Etcd {
  /** An etcd on loopback; with `pki` (makePki) TLS-only, client certificates required. */
  static async start(pki = null) {
    const etcd = new Etcd()
    etcd.pki = pki
    etcd.dir = mkdtempSync(join(tmpdir(), 'shardring-etcd-'))
    etcd.clientPort = await freePort()
    etcd.peerPort = await freePort()
    etcd.url = `${pki ? 'https' : 'http'}://127.0.0.1:${etcd.clientPort}`
    await etcd.spawn()
    return etcd
  }

  async spawn() {
    const peer = `http://127.0.0.1:${this.peerPort}`
    const log = openSync(join(this.dir, 'etcd.log'), 'a')
    const tls = this.pki ? ['--cert-file', this.pki.serverCert, '--key-file', this.pki.serverKey,
      '--trusted-ca-file', this.pki.ca, '--client-cert-auth'] : []
    this.child = spawn('etcd', [
      '--name', 't', '--data-dir', join(this.dir, 'data'),
      '--listen-client-urls', this.url, '--advertise-client-urls', this.url,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `t=${peer}`, ...tls,
    ], { stdio: ['ignore', 'ignore', log] })
    this.child.on('error', (error) => { this.failed = error })
    const deadline = Date.now() + 15000
    while (Date.now() < deadline) {
      if (this.failed) throw new Error(`cannot start etcd (install Debian's etcd-server): ${this.failed.message}`)
      if (this.child.exitCode !== null) throw new Error(`etcd exited: ${this.log()}`)
      if (this.ctl(['endpoint', 'health'], false).status === 0) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`etcd did not answer within 15 s: ${this.log()}`)
  }

  log() {
    return readFileSync(join(this.dir, 'etcd.log'), 'utf8').slice(-2000)
  }

  /** Runs etcdctl against this server. */
  ctl(args, check = true) {
    const tls = this.pki ? ['--cacert', this.pki.ca, '--cert', this.pki.cert, '--key', this.pki.key] : []
    const result = spawnSync('etcdctl', ['--endpoints', this.url, '--dial-timeout', '1s', ...tls, ...args], {
      env: { ...process.env, ETCDCTL_API: '3' }, encoding: 'utf8',
    })
    if (check && result.status !== 0) throw new Error(`etcdctl ${args.join(' ')}: ${result.stderr}`)
    return result
  }

  /** The revision a put of `key` wrote. */
  put(key, value) {
    this.ctl(['put', key, value])
    return JSON.parse(this.ctl(['get', key, '-w', 'json']).stdout).header.revision
  }

  /**
   * Stops the server, deletes its data and starts it again on the same
   * ports: a new store whose revisions start at 1 (as after a restore).
   */
  async wipeAndRestart() {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve))
      process.kill(this.child.pid, 'SIGKILL')
      await exited
    }
    rmSync(join(this.dir, 'data'), { recursive: true, force: true })
    await this.spawn()
  }

  stop() {
    if (this.child && this.child.exitCode === null) {
      process.kill(this.child.pid, 'SIGKILL')
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}
