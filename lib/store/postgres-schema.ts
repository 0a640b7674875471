// The PostgreSQL store's tables and functions, as versioned migrations. lib/store/postgres.ts runs
// the ones a database lacks at open, under a session advisory lock derived from current_schema(),
// so processes starting together apply each once and all come up; each Lectern (and each of the
// test suite's apps) lives in its own schema, named by the connection's search_path.

/** One step of the database's layout; applied in its own transaction, recorded in `lectern_migrations`. */
export interface Migration {
  version: number
  sql: string
}

/**
 * values.ts `instant` in SQL: an ISO 8601 date or date-time as epoch milliseconds, else NULL.
 * IMMUTABLE, as expression indexes need. [0-9] rather than \d, which may take other digits.
 */
const INSTANT_SQL = String.raw`
CREATE OR REPLACE FUNCTION lectern_instant(t text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  m text[];
  y int; mo int; d int; dim int; yy int; era int; yoe int; doy int; doe int;
  h int; mi int; s int; oh int; om int;
  ms float8;
BEGIN
  m := regexp_match(t, '^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?)?$');
  IF m IS NULL OR length(t) < 10 OR length(t) > 64 THEN RETURN NULL; END IF;
  y := m[1]::int; mo := m[2]::int; d := m[3]::int;
  IF mo < 1 OR mo > 12 OR d < 1 THEN RETURN NULL; END IF;
  -- In a variable: IF's condition ends at its first THEN, a CASE's included.
  dim := CASE WHEN mo = 2 THEN CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END
              WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
  IF d > dim THEN RETURN NULL; END IF;
  -- Howard Hinnant's days_from_civil, with floor division as values.ts has it.
  yy := CASE WHEN mo <= 2 THEN y - 1 ELSE y END;
  era := floor(yy / 400.0)::int;
  yoe := yy - era * 400;
  doy := (153 * (mo + CASE WHEN mo > 2 THEN -3 ELSE 9 END) + 2) / 5 + d - 1;
  doe := yoe * 365 + yoe / 4 - yoe / 100 + doy;
  ms := (era::float8 * 146097 + doe - 719468) * 86400000;
  IF m[4] IS NOT NULL THEN
    h := m[4]::int; mi := m[5]::int; s := COALESCE(m[6]::int, 0);
    IF h > 23 OR mi > 59 OR s > 59 THEN RETURN NULL; END IF;
    ms := ms + ((h * 60 + mi) * 60 + s) * 1000 + COALESCE(substr(m[7] || '00', 1, 3)::int, 0);
    IF m[9] IS NOT NULL THEN
      oh := m[10]::int; om := m[11]::int;
      IF oh > 23 OR om > 59 THEN RETURN NULL; END IF;
      ms := ms + CASE WHEN m[9] = '-' THEN 1 ELSE -1 END * (oh * 60 + om) * 60000;
    END IF;
  END IF;
  RETURN ms;
END
$fn$;
`

/**
 * Substring match on pgText-encoded strings (postgres-dialect.ts): a match counts only where a
 * character starts, that is after an even run of U+0001 (each U+0000 or U+0001 is U+0001 and one more).
 */
const CONTAINS_SQL = String.raw`
CREATE OR REPLACE FUNCTION lectern_contains(hay text, needle text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  base int := 0;
  at int;
  before text;
BEGIN
  IF strpos(hay, chr(1)) = 0 THEN RETURN strpos(hay, needle) > 0; END IF;
  LOOP
    at := strpos(substr(hay, base + 1), needle);
    IF at = 0 THEN RETURN false; END IF;
    at := base + at;
    before := substr(hay, 1, at - 1);
    IF (length(before) - length(rtrim(before, chr(1)))) % 2 = 0 THEN RETURN true; END IF;
    base := at;
  END LOOP;
END
$fn$;
`

/** values.ts `valueAtPath` over JSONB: objects only, never into an array (what `#>` would do with a number). */
const PATH_SQL = String.raw`
CREATE OR REPLACE FUNCTION lectern_path(doc jsonb, path text[]) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  segment text;
BEGIN
  FOREACH segment IN ARRAY path LOOP
    IF jsonb_typeof(doc) IS DISTINCT FROM 'object' THEN RETURN NULL; END IF;
    doc := doc -> segment;
  END LOOP;
  RETURN doc;
END
$fn$;
`

/**
 * lectern_instant (INSTANT_SQL) again, with the same results, made fast: one match without
 * captures, then the parts read at the places the pattern fixes. The expression indexes built
 * on it stay valid (an IMMUTABLE function may be replaced by one that returns the same).
 */
const FAST_INSTANT_SQL = String.raw`
CREATE OR REPLACE FUNCTION lectern_instant(t text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  y int; mo int; d int; dim int; yy int; era int; yoe int; doy int; doe int;
  h int; mi int; s int := 0; frac int := 0; oh int; om int;
  rest text; tail text;
  ms float8;
BEGIN
  -- A match without captures: PostgreSQL's regular expressions are fast at that, and very slow
  -- at filling many optional capture groups (about a millisecond a call, twice per written entry
  -- with a date sorted on, and once per row a list walks in a date's order).
  IF length(t) < 10 OR length(t) > 64 OR t !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?$' THEN RETURN NULL; END IF;
  y := substr(t, 1, 4)::int; mo := substr(t, 6, 2)::int; d := substr(t, 9, 2)::int;
  IF mo < 1 OR mo > 12 OR d < 1 THEN RETURN NULL; END IF;
  -- In a variable: IF's condition ends at its first THEN, a CASE's included.
  dim := CASE WHEN mo = 2 THEN CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END
              WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
  IF d > dim THEN RETURN NULL; END IF;
  -- Howard Hinnant's days_from_civil, with floor division as values.ts has it.
  yy := CASE WHEN mo <= 2 THEN y - 1 ELSE y END;
  era := floor(yy / 400.0)::int;
  yoe := yy - era * 400;
  doy := (153 * (mo + CASE WHEN mo > 2 THEN -3 ELSE 9 END) + 2) / 5 + d - 1;
  doe := yoe * 365 + yoe / 4 - yoe / 100 + doy;
  ms := (era::float8 * 146097 + doe - 719468) * 86400000;
  IF length(t) = 10 THEN RETURN ms; END IF;
  h := substr(t, 12, 2)::int; mi := substr(t, 15, 2)::int;
  -- What follows HH:MM, its parts read in place: the pattern above says where each one is.
  rest := substr(t, 17);
  IF left(rest, 1) = ':' THEN
    s := substr(rest, 2, 2)::int;
    rest := substr(rest, 4);
    IF left(rest, 1) IN ('.', ',') THEN
      tail := ltrim(substr(rest, 2), '0123456789');
      frac := substr(substr(rest, 2, length(rest) - 1 - length(tail)) || '00', 1, 3)::int;
      rest := tail;
    END IF;
  END IF;
  IF h > 23 OR mi > 59 OR s > 59 THEN RETURN NULL; END IF;
  ms := ms + ((h * 60 + mi) * 60 + s) * 1000 + frac;
  IF left(rest, 1) IN ('+', '-') THEN
    oh := substr(rest, 2, 2)::int; om := right(rest, 2)::int;
    IF oh > 23 OR om > 59 THEN RETURN NULL; END IF;
    ms := ms + CASE WHEN left(rest, 1) = '-' THEN 1 ELSE -1 END * (oh * 60 + om) * 60000;
  END IF;
  RETURN ms;
END
$fn$;
`

export const MIGRATIONS: readonly Migration[] = [{
  version: 1,
  sql: `
    CREATE TABLE entries (
      id bigserial PRIMARY KEY,
      environment text COLLATE "C" NOT NULL,
      collection text COLLATE "C" NOT NULL,
      locale text COLLATE "C" NOT NULL,
      slug text COLLATE "C" NOT NULL,
      status text COLLATE "C" NOT NULL CHECK (status IN ('draft', 'published')),
      created_at text COLLATE "C" NOT NULL,
      updated_at text COLLATE "C" NOT NULL,
      doc text NOT NULL,
      data jsonb NOT NULL,
      search text COLLATE "C" NOT NULL
    );
    CREATE UNIQUE INDEX entries_key ON entries (environment, collection, locale, slug);
    CREATE INDEX entries_status ON entries (environment, collection, locale, status, slug);
    CREATE INDEX entries_created ON entries (environment, collection, locale, created_at, slug);
    CREATE INDEX entries_updated ON entries (environment, collection, locale, updated_at, slug);
    CREATE TABLE change_log (
      seq bigint PRIMARY KEY,
      environment text COLLATE "C" NOT NULL,
      collection text COLLATE "C" NOT NULL,
      locale text COLLATE "C" NOT NULL,
      slug text COLLATE "C" NOT NULL,
      op text NOT NULL CHECK (op IN ('upsert', 'delete')),
      status text CHECK (status IN ('draft', 'published')),
      at text COLLATE "C" NOT NULL,
      CHECK ((op = 'delete') = (status IS NULL))
    );
    CREATE UNIQUE INDEX change_log_key ON change_log (environment, collection, locale, slug);
    CREATE INDEX change_log_scope ON change_log (environment, locale, seq);
    CREATE INDEX change_log_tombstones ON change_log (at) WHERE op = 'delete';
    -- 'seq': the last seq handed out (in commit order, under the write lock); 'horizon': the highest compaction dropped.
    CREATE TABLE change_log_meta (key text PRIMARY KEY, value bigint NOT NULL);
    INSERT INTO change_log_meta (key, value) VALUES ('seq', 0), ('horizon', 0);
    ${INSTANT_SQL}
    ${CONTAINS_SQL}
    ${PATH_SQL}
  `
}, {
  version: 2,
  sql: FAST_INSTANT_SQL
}, {
  // The editorial side (types/editorial.ts, contract §13) and the store's remembered layout (§14).
  version: 3,
  sql: `
    -- Kept versions of an entry key; they outlive the entry (numbering goes on across a re-create).
    CREATE TABLE entry_versions (
      environment text COLLATE "C" NOT NULL,
      collection text COLLATE "C" NOT NULL,
      locale text COLLATE "C" NOT NULL,
      slug text COLLATE "C" NOT NULL,
      version integer NOT NULL CHECK (version > 0),
      status text COLLATE "C" NOT NULL CHECK (status IN ('draft', 'published')),
      doc text NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      entry_created_at text COLLATE "C" NOT NULL,
      PRIMARY KEY (environment, collection, locale, slug, version)
    );
    -- One pending draft per published entry key.
    CREATE TABLE entry_drafts (
      environment text COLLATE "C" NOT NULL,
      collection text COLLATE "C" NOT NULL,
      locale text COLLATE "C" NOT NULL,
      slug text COLLATE "C" NOT NULL,
      doc text NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      updated_at text COLLATE "C" NOT NULL,
      PRIMARY KEY (environment, collection, locale, slug)
    );
    -- Scheduled actions; owner and lease_until are a runner's claim (both null: unclaimed).
    CREATE TABLE schedules (
      id text COLLATE "C" PRIMARY KEY,
      environment text COLLATE "C" NOT NULL,
      collection text COLLATE "C" NOT NULL,
      locale text COLLATE "C" NOT NULL,
      slug text COLLATE "C" NOT NULL,
      action text COLLATE "C" NOT NULL CHECK (action IN ('publish', 'unpublish')),
      at text COLLATE "C" NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      status text COLLATE "C" NOT NULL CHECK (status IN ('pending', 'failed')),
      error text,
      owner text COLLATE "C",
      lease_until text COLLATE "C"
    );
    CREATE INDEX schedules_due ON schedules (status, at, id);
    CREATE INDEX schedules_entry ON schedules (environment, collection, locale, slug);
    -- What the store remembers about itself: 'layout', the layout it last opened with (lib/store/layout.ts).
    CREATE TABLE lectern_meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
  `
}, {
  // A list of schedules by collection (and slug) in any environment, soonest first (GET /api/schedules?collection=).
  version: 4,
  sql: 'CREATE INDEX schedules_collection ON schedules (collection, slug, status, at, id);'
}]
