import path from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../lib/config.js'

const cwd = '/srv/app'

t.test('defaults (contract §1)', async t => {
  const c = loadConfig({}, cwd)
  t.equal(c.port, 3000)
  t.equal(c.host, '0.0.0.0')
  t.equal(c.dataDir, path.resolve(cwd, 'data'))
  t.equal(c.typesDir, path.resolve(cwd, 'data/types'))
  t.equal(c.assetsDir, path.resolve(cwd, 'data/assets'))
  t.equal(c.store, 'sqlite')
  t.equal(c.publicUrl, 'http://localhost:3000')
  t.same(c.apiKeys, [])
  t.same(c.locales, [])
  t.same(c.environments, [])
  t.same(c.webhooks, [])
  t.equal(c.webhookSecret, null)
  t.equal(c.cacheMax, 10000)
  t.equal(c.cacheMaxBytes, 128 * 1024 * 1024)
  t.equal(c.textCacheBytes, 8 * 1024 * 1024)
  t.equal(c.entryCacheBytes, 8 * 1024 * 1024)
  t.equal(c.bodyPoolBytes, 16 * 1024 * 1024)
  t.equal(c.syncRetentionDays, 30)
  t.equal(c.bodyLimit, 1048576)
  t.equal(c.uploadLimit, 52428800)
  t.equal(c.trustProxy, false)
  t.same(c.corsOrigins, [])
  t.equal(c.logLevel, 'info')
  t.equal(c.seed, true)
  t.equal(c.compression, true)
})

t.test('every setting is read', async t => {
  const c = loadConfig({
    CMS_PORT: '8080',
    CMS_HOST: '127.0.0.1',
    CMS_DATA_DIR: '/var/lectern',
    CMS_TYPES_DIR: 'schemas',
    CMS_ASSETS_DIR: '/mnt/assets',
    CMS_STORE: 'file',
    CMS_PUBLIC_URL: 'https://cms.example.com/',
    CMS_API_KEY: 'k'.repeat(16),
    CMS_API_KEYS: `${'e'.repeat(20)}:editor, ${'v'.repeat(20)}:viewer`,
    CMS_LOCALES: 'en, de,fr',
    CMS_ENVIRONMENTS: 'production,staging',
    CMS_WEBHOOKS: 'http://a.test/hook,https://b.test/x',
    CMS_WEBHOOK_SECRET: 's3cret',
    CMS_WEBHOOK_BACKOFF_MS: '50',
    CMS_CACHE_MAX: '0',
    CMS_CACHE_MAX_BYTES: '0',
    CMS_TEXT_CACHE_BYTES: '1000000',
    CMS_ENTRY_CACHE_BYTES: '0',
    CMS_BODY_POOL_BYTES: '0',
    CMS_SYNC_RETENTION_DAYS: '7',
    CMS_BODY_LIMIT: '2048',
    CMS_UPLOAD_LIMIT: '1000',
    CMS_TRUST_PROXY: 'true',
    CMS_CORS_ORIGINS: 'https://site.example.com,*',
    CMS_LOG_LEVEL: 'warn',
    CMS_SEED: 'false',
    CMS_COMPRESSION: 'false'
  }, cwd)
  t.equal(c.port, 8080)
  t.equal(c.host, '127.0.0.1')
  t.equal(c.dataDir, '/var/lectern')
  t.equal(c.typesDir, path.resolve(cwd, 'schemas'))
  t.equal(c.assetsDir, '/mnt/assets')
  t.equal(c.store, 'file')
  t.equal(c.publicUrl, 'https://cms.example.com', 'trailing slash dropped')
  t.same(c.apiKeys.map(k => k.role), ['admin', 'editor', 'viewer'])
  t.same(c.locales, ['en', 'de', 'fr'])
  t.same(c.environments, ['production', 'staging'])
  t.same(c.webhooks, ['http://a.test/hook', 'https://b.test/x'])
  t.equal(c.webhookSecret, 's3cret')
  t.equal(c.webhookBackoffMs, 50)
  t.equal(c.cacheMax, 0)
  t.equal(c.cacheMaxBytes, 0, '0 is allowed: the cache is off')
  t.equal(c.textCacheBytes, 1000000)
  t.equal(c.entryCacheBytes, 0)
  t.equal(c.bodyPoolBytes, 0, '0 is allowed: nothing kept')
  t.equal(c.syncRetentionDays, 7)
  t.equal(c.bodyLimit, 2048)
  t.equal(c.uploadLimit, 1000)
  t.equal(c.trustProxy, true)
  t.same(c.corsOrigins, ['https://site.example.com', '*'])
  t.equal(c.logLevel, 'warn')
  t.equal(c.seed, false)
  t.equal(c.compression, false)
})

t.test('CMS_STORE=postgres (contract §12): the database URL, and a pool of 10 by default', async t => {
  const url = 'postgres://lectern:pw@db.internal:5432/lectern'
  const c = loadConfig({ CMS_STORE: 'postgres', CMS_DATABASE_URL: url }, cwd)
  t.equal(c.store, 'postgres')
  t.equal(c.databaseUrl, url)
  t.equal(c.databasePool, 10)
  const d = loadConfig({ CMS_STORE: 'postgres', CMS_DATABASE_URL: 'postgresql:///lectern?host=/run/postgresql', CMS_DATABASE_POOL: '25' }, cwd)
  t.equal(d.databaseUrl, 'postgresql:///lectern?host=/run/postgresql', 'a Unix socket form is accepted')
  t.equal(d.databasePool, 25)
  const e = loadConfig({ CMS_STORE: 'sqlite', CMS_DATABASE_URL: 'not a url' }, cwd)
  t.equal(e.databaseUrl, null, 'the URL belongs to the postgres store only: ignored by the others')
  t.equal(loadConfig({}, cwd).databaseUrl, null)
})

t.test('PORT is honoured when CMS_PORT is absent; the public URL follows the port', async t => {
  const c = loadConfig({ PORT: '4000' }, cwd)
  t.equal(c.port, 4000)
  t.equal(c.publicUrl, 'http://localhost:4000')
  t.equal(loadConfig({ PORT: '4000', CMS_PORT: '5000' }, cwd).port, 5000)
})

const bad: Array<[string, Record<string, string>, RegExp]> = [
  ['unknown store', { CMS_STORE: 'mongo' }, /^CMS_STORE: must be 'sqlite', 'file' or 'postgres', got 'mongo'$/],
  ['postgres without a database URL', { CMS_STORE: 'postgres' }, /^CMS_DATABASE_URL: is required with CMS_STORE=postgres/],
  ['postgres with an empty database URL', { CMS_STORE: 'postgres', CMS_DATABASE_URL: '  ' }, /^CMS_DATABASE_URL: is required/],
  ['unparsable database URL', { CMS_STORE: 'postgres', CMS_DATABASE_URL: 'postgres://lectern:s3cretpw@db:port/x' }, /^CMS_DATABASE_URL: is not a valid URL \(expected postgres:\/\/user:password@host:port\/database\)$/],
  ['database URL of another scheme', { CMS_STORE: 'postgres', CMS_DATABASE_URL: 'mysql://lectern:s3cretpw@db/x' }, /^CMS_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/],
  ['zero pool', { CMS_DATABASE_POOL: '0' }, /^CMS_DATABASE_POOL: must be between 1 and/],
  ['fractional pool', { CMS_DATABASE_POOL: '2.5' }, /^CMS_DATABASE_POOL: must be a whole number/],
  ['unknown role', { CMS_API_KEYS: `${'a'.repeat(16)}:owner` }, /^CMS_API_KEYS: unknown role 'owner'/],
  ['pair without a role', { CMS_API_KEYS: 'a'.repeat(16) }, /^CMS_API_KEYS: each entry must be key:role/],
  ['short key', { CMS_API_KEY: 'short' }, /^CMS_API_KEY: a key must be at least 16 characters/],
  ['short key in a list', { CMS_API_KEYS: 'short:admin' }, /^CMS_API_KEYS: a key must be at least 16/],
  ['duplicate key', { CMS_API_KEYS: `${'a'.repeat(16)}:admin,${'a'.repeat(16)}:viewer` }, /^CMS_API_KEYS: the same key/],
  ['unparsable public URL', { CMS_PUBLIC_URL: 'not a url' }, /^CMS_PUBLIC_URL: is not a valid URL/],
  ['non-http public URL', { CMS_PUBLIC_URL: 'ftp://x.test' }, /^CMS_PUBLIC_URL: must be an http or https URL/],
  ['unparsable webhook', { CMS_WEBHOOKS: 'http://ok.test,::nope' }, /^CMS_WEBHOOKS: is not a valid URL/],
  ['duplicate locale', { CMS_LOCALES: 'en,de,en' }, /^CMS_LOCALES: duplicate locale 'en'/],
  ['bad locale', { CMS_LOCALES: 'en,d e' }, /^CMS_LOCALES: 'd e' is not a valid locale/],
  ['duplicate environment', { CMS_ENVIRONMENTS: 'prod,prod' }, /^CMS_ENVIRONMENTS: duplicate environment/],
  ['bad port', { CMS_PORT: 'eighty' }, /^CMS_PORT: must be a whole number/],
  ['port out of range', { CMS_PORT: '70000' }, /^CMS_PORT: must be between 0 and 65535/],
  ['negative cache size', { CMS_CACHE_MAX: '-1' }, /^CMS_CACHE_MAX: must be a whole number/],
  ['cache bytes in megabytes', { CMS_CACHE_MAX_BYTES: '128MB' }, /^CMS_CACHE_MAX_BYTES: must be a whole number, got '128MB'$/],
  ['text cache in megabytes', { CMS_TEXT_CACHE_BYTES: '16MB' }, /^CMS_TEXT_CACHE_BYTES: must be a whole number, got '16MB'$/],
  ['negative text cache', { CMS_TEXT_CACHE_BYTES: '-1' }, /^CMS_TEXT_CACHE_BYTES: must be a whole number/],
  ['negative entry cache', { CMS_ENTRY_CACHE_BYTES: '-1' }, /^CMS_ENTRY_CACHE_BYTES: must be a whole number/],
  ['fractional body pool', { CMS_BODY_POOL_BYTES: '1.5' }, /^CMS_BODY_POOL_BYTES: must be a whole number, got '1.5'$/],
  ['body pool past a safe integer', { CMS_BODY_POOL_BYTES: '9'.repeat(20) }, /^CMS_BODY_POOL_BYTES: must be between 0 and/],
  ['zero body limit', { CMS_BODY_LIMIT: '0' }, /^CMS_BODY_LIMIT: must be between 1/],
  ['zero retention', { CMS_SYNC_RETENTION_DAYS: '0' }, /^CMS_SYNC_RETENTION_DAYS: must be between 1 and 36500, got 0/],
  ['fractional retention', { CMS_SYNC_RETENTION_DAYS: '1.5' }, /^CMS_SYNC_RETENTION_DAYS: must be a whole number/],
  ['retention past a century', { CMS_SYNC_RETENTION_DAYS: '36501' }, /^CMS_SYNC_RETENTION_DAYS: must be between 1 and 36500/],
  ['bad boolean', { CMS_TRUST_PROXY: 'maybe' }, /^CMS_TRUST_PROXY: must be true or false/],
  ['bad compression switch', { CMS_COMPRESSION: 'gzip' }, /^CMS_COMPRESSION: must be true or false/],
  ['bad log level', { CMS_LOG_LEVEL: 'loud' }, /^CMS_LOG_LEVEL: must be one of/],
  ['bad CORS origin', { CMS_CORS_ORIGINS: 'nope' }, /^CMS_CORS_ORIGINS: is not a valid URL/]
]

for (const [what, env, message] of bad) {
  t.test(`a bad setting stops start-up with one line: ${what}`, async t => {
    let err: unknown
    try { loadConfig(env, cwd) } catch (e) { err = e }
    t.type(err, ConfigError)
    const msg = (err as Error).message
    t.match(msg, message)
    t.notMatch(msg, /\n/, 'one line')
    t.notMatch(msg, /a{16}/, 'the key itself is never echoed')
    t.notMatch(msg, /s3cretpw/, 'nor a database password')
  })
}
