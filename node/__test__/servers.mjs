// The Node tests' launcher of real servers (etcd from Debian's etcd-server):
// a child process on free loopback ports with a temporary data dir, waited
// on until it answers and stopped by PID in the test's `after` hook, also
// when the test fails. A server that cannot start fails the test with its
// own output; nothing is skipped.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, openSync, readFileSync } from 'node:fs'
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

export class Etcd {
  static async start() {
    const etcd = new Etcd()
    etcd.dir = mkdtempSync(join(tmpdir(), 'shardring-etcd-'))
    etcd.clientPort = await freePort()
    etcd.peerPort = await freePort()
    etcd.url = `http://127.0.0.1:${etcd.clientPort}`
    await etcd.spawn()
    return etcd
  }

  async spawn() {
    const peer = `http://127.0.0.1:${this.peerPort}`
    const log = openSync(join(this.dir, 'etcd.log'), 'a')
    this.child = spawn('etcd', [
      '--name', 't', '--data-dir', join(this.dir, 'data'),
      '--listen-client-urls', this.url, '--advertise-client-urls', this.url,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `t=${peer}`,
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
    const result = spawnSync('etcdctl', ['--endpoints', this.url, '--dial-timeout', '1s', ...args], {
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
