// Every compose file of the repository passes `docker compose config` (or Debian's
// `docker-compose config`, installed by scripts/ensure-compose.sh): the real parser and schema
// check, no Docker engine needed. The replicas' file takes its secrets from the environment only,
// and agrees with the nginx config it mounts.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { ROOT } from '../helper.js'
import { NGINX_CONF } from './cluster.js'

const COMPOSE_FILES = readdirSync(ROOT).filter(f => /^(docker-)?compose(\.[\w-]+)?\.ya?ml$/.test(f)).sort()
const REPLICAS_FILE = 'docker-compose.replicas.yml'

/** The compose command here: Docker's plugin when there is one, else `docker-compose`. */
function composeCommand (): string[] | null {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose']
  const standalone = process.env.LECTERN_COMPOSE ?? 'docker-compose'
  if (spawnSync(standalone, ['version'], { stdio: 'ignore' }).status === 0) return [standalone]
  return null
}

interface Run { status: number | null, stdout: string, stderr: string }

function config (command: string[], file: string, env: Record<string, string>): Run {
  const [program = '', ...args] = command
  // Only PATH and what the test gives: a setting of the caller's must not make a file pass.
  const run = spawnSync(program, [...args, '-f', path.join(ROOT, file), 'config'], {
    cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env }
  })
  return { status: run.status, stdout: run.stdout, stderr: run.stderr }
}

const command = composeCommand()

t.test('the compose files are found', async t => {
  t.ok(COMPOSE_FILES.includes('docker-compose.yml'))
  t.ok(COMPOSE_FILES.includes(REPLICAS_FILE))
  t.ok(command, 'docker compose or docker-compose is installed (npm test runs scripts/ensure-compose.sh first)')
})

for (const file of COMPOSE_FILES) {
  t.test(`${file}: \`compose config\` accepts it, without a warning`, { skip: command === null ? 'no compose command' : false }, async t => {
    const password = randomBytes(12).toString('hex')
    const run = config(command as string[], file, { POSTGRES_PASSWORD: password })
    t.equal(run.status, 0, run.stderr)
    t.equal(run.stderr.trim(), '', 'nothing on stderr')
    t.match(run.stdout, /^services:/m)
  })
}

t.test(`${REPLICAS_FILE}: secrets come from the environment`, { skip: command === null ? 'no compose command' : false }, async t => {
  const missing = config(command as string[], REPLICAS_FILE, {})
  t.not(missing.status, 0, 'refused without POSTGRES_PASSWORD')
  t.match(missing.stderr, /set POSTGRES_PASSWORD/)

  const password = randomBytes(12).toString('hex')
  const run = config(command as string[], REPLICAS_FILE, { POSTGRES_PASSWORD: password, CMS_API_KEY: 'k'.repeat(20) })
  t.equal(run.status, 0, run.stderr)
  t.equal(run.stdout.match(new RegExp(`postgres://lectern:${password}@postgres:5432/lectern`, 'g'))?.length, 2, 'both replicas get the database URL with it')
  t.match(run.stdout, /POSTGRES_PASSWORD: '?[0-9a-f]{24}'?/)
  t.equal(run.stdout.match(/CMS_API_KEY: '?k{20}'?/g)?.length, 2, 'both replicas get the key')

  // Nothing that names a password, secret or key is written in the file itself.
  const text = readFileSync(path.join(ROOT, REPLICAS_FILE), 'utf8')
  for (const [, name, value] of text.matchAll(/^\s*([A-Z_]*(?:PASSWORD|SECRET|KEYS?))\s*:\s*(.*)$/gm)) {
    t.match(value, /^\$\{[A-Z_]+(:[-?][^}]*)?\}$/, `${name} comes from the environment`)
  }
})

t.test(`${REPLICAS_FILE} and deploy/nginx/lectern.conf agree`, async t => {
  const compose = readFileSync(path.join(ROOT, REPLICAS_FILE), 'utf8')
  const nginx = readFileSync(NGINX_CONF, 'utf8')
  const services = [...compose.matchAll(/^ {2}(lectern-\d+):$/gm)].map(m => m[1])
  const upstream = [...nginx.matchAll(/^\s*server (lectern-\d+):3000\b/gm)].map(m => m[1])
  t.ok(services.length >= 2, 'at least two replicas')
  t.same(upstream, services, "nginx's upstream is every replica")

  const uploadLimit = Number(/CMS_UPLOAD_LIMIT: "(\d+)"/.exec(compose)?.[1])
  const bodyMiB = Number(/client_max_body_size (\d+)m;/.exec(nginx)?.[1])
  t.ok(uploadLimit > 0 && bodyMiB > 0)
  // Over the file limit (a multipart body is the file and its framing) by at most 1 MiB, so that
  // Lectern answers an over-limit file with its own 413.
  t.ok(bodyMiB * 1024 * 1024 > uploadLimit && bodyMiB * 1024 * 1024 <= uploadLimit + 1024 * 1024,
    `client_max_body_size ${bodyMiB}m sits just above CMS_UPLOAD_LIMIT ${uploadLimit}`)
})
