/**
 * The PostgreSQL store's schema, as numbered migrations applied at start. Migrations only ever
 * add (a table, a column, an index), so daemons can be upgraded one at a time: an older daemon
 * keeps working on a schema a newer one migrated, except that a daemon refuses a database whose
 * schema is newer than any migration it knows (DATABASE_TOO_NEW), since it cannot know what the
 * newer daemons expect of its writes. See docs/decisions/037-postgresql-store-first-stage.md.
 */
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'partitions, journal, snapshots',
    sql: `
      -- One row per partition of the state: who owns it (a daemon's id), until when, and the
      -- epoch every write of the partition is checked against (bumped on each takeover).
      CREATE TABLE wfx_partitions (
        partition integer PRIMARY KEY,
        owner text,
        owner_pid integer,
        owner_host text,
        epoch bigint NOT NULL DEFAULT 0,
        lease_until timestamptz,
        taken_at timestamptz
      );
      -- The write-ahead journal: one row per journal entry (the records of one commit, as a
      -- JSON array), gap-free seq per partition; text, not jsonb, so it holds exactly what was
      -- journaled and costs no parsing.
      CREATE TABLE wfx_journal (
        partition integer NOT NULL,
        seq bigint NOT NULL,
        epoch bigint NOT NULL,
        entry text NOT NULL,
        PRIMARY KEY (partition, seq)
      );
      -- A partition's state as of journal entry seq; the journal up to seq is deleted with it.
      CREATE TABLE wfx_snapshots (
        partition integer PRIMARY KEY,
        seq bigint NOT NULL,
        epoch bigint NOT NULL,
        state text NOT NULL,
        saved_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: 'history',
    sql: `
      -- Finished executions (history-store.ts): by the day bucket their id names; tags joined
      -- by '|' as the file history keeps them; written with the epoch of the writer's lease.
      CREATE TABLE wfx_history (
        bucket text NOT NULL,
        id text NOT NULL,
        tags text NOT NULL,
        doc text NOT NULL,
        epoch bigint NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (bucket, id)
      );
    `,
  },
  {
    version: 3,
    name: 'file blobs',
    sql: `
      -- The file store's content (pg-blobs.ts), by SHA-256; stored_at renewed by a write of the
      -- same content, for the orphan sweep's grace.
      CREATE TABLE wfx_blobs (
        sha256 text PRIMARY KEY,
        bytes bigint NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE wfx_blob_chunks (
        sha256 text NOT NULL REFERENCES wfx_blobs ON DELETE CASCADE,
        chunk integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (sha256, chunk)
      );
    `,
  },
  {
    version: 4,
    name: 'daemons',
    sql: `
      -- Every daemon on the database (cluster/members.ts), serving or standing by: where it answers,
      -- renewed every third of a lease; whoever owns a partition's lease serves it.
      CREATE TABLE wfx_daemons (
        id text PRIMARY KEY,
        url text NOT NULL,
        pid integer NOT NULL,
        host text NOT NULL,
        version text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 5,
    name: 'standby progress',
    sql: `
      -- A standby's copy of the state (journal-follower.ts): the last journal entry it applied,
      -- and how far that was behind the journal's head, both as of its last registration.
      ALTER TABLE wfx_daemons ADD COLUMN applied_seq bigint, ADD COLUMN behind_entries bigint;
    `,
  },
  {
    version: 6,
    name: 'partition count',
    sql: `
      -- How many partitions the state is cut into (partition-state.ts): fixed once the database
      -- is first used, since an execution's partition follows from its id. A database used
      -- before partitions existed keeps its one; a new one is given the count the first daemon
      -- asks for (pg-store.ts).
      CREATE TABLE wfx_cluster (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        partitions integer NOT NULL CHECK (partitions BETWEEN 1 AND 1024)
      );
      INSERT INTO wfx_cluster (partitions)
      SELECT 1 WHERE EXISTS (SELECT 1 FROM wfx_journal) OR EXISTS (SELECT 1 FROM wfx_snapshots)
                  OR EXISTS (SELECT 1 FROM wfx_history) OR EXISTS (SELECT 1 FROM wfx_partitions WHERE epoch > 0);
    `,
  },
  {
    version: 7,
    name: 'shared journal',
    sql: `
      -- The shared partition's journal (partition -1 of wfx_journal: memory, files, messages),
      -- which every daemon writes: its entries are numbered from this row, locked by each append
      -- until its commit, so they commit in the order of their numbers (fenced-sql.ts).
      CREATE TABLE wfx_shared_head (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        seq bigint NOT NULL
      );
      INSERT INTO wfx_shared_head (seq) VALUES (0);
      -- Which daemon wrote a shared entry: a daemon following the journal knows its own.
      ALTER TABLE wfx_journal ADD COLUMN writer text;
    `,
  },
  {
    version: 8,
    name: 'daemons sharing partitions',
    sql: `
      ALTER TABLE wfx_daemons ADD COLUMN shares boolean NOT NULL DEFAULT false;
    `,
  },
  {
    version: 9,
    name: 'requests between daemons, rate limits across daemons',
    sql: `
      -- Signs a request one daemon passes to another as counted already (cluster/request-signing.ts): only a
      -- daemon that reads this database can. gen_random_uuid draws from a strong source.
      CREATE TABLE wfx_hop_secret (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        secret text NOT NULL
      );
      INSERT INTO wfx_hop_secret (secret)
      VALUES (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

      -- The requests allowed per rate-limited key, within its longest window (decision 042).
      CREATE TABLE wfx_rate_hits (
        key_id text NOT NULL,
        at timestamptz NOT NULL
      );
      CREATE INDEX wfx_rate_hits_key_at ON wfx_rate_hits (key_id, at);

      -- Counts a request of p_key against sliding windows (p_windows_ms, p_limits), as
      -- api/rate-limit.ts does in memory: allowed while fewer than each limit's requests were
      -- allowed within its window, and then recorded. One key's calls run one at a time (an
      -- advisory lock to the end of the call's transaction). Answers, per window, the requests
      -- allowed within it (before this one) and the milliseconds until its oldest leaves it.
      CREATE FUNCTION wfx_rate_hit(p_key text, p_limits integer[], p_windows_ms integer[])
      RETURNS TABLE (allowed boolean, used integer[], frees_in_ms double precision[])
      LANGUAGE plpgsql AS $fn$
      DECLARE
        t timestamptz;
        span interval;
        n integer;
        oldest timestamptz;
        ok boolean := true;
        u integer[] := '{}';
        f double precision[] := '{}';
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('wfx_rate ' || p_key, 0));
        -- Read once the lock is held: a request that waited for it is counted as of now.
        t := clock_timestamp();
        DELETE FROM wfx_rate_hits h
         WHERE h.key_id = p_key
           AND h.at <= t - (SELECT max(w) FROM unnest(p_windows_ms) w) * interval '1 millisecond';
        FOR i IN 1 .. cardinality(p_limits) LOOP
          span := p_windows_ms[i] * interval '1 millisecond';
          -- Counted up to the limit: a window's cost is bounded by its limit.
          SELECT count(*) INTO n FROM (
            SELECT 1 FROM wfx_rate_hits h WHERE h.key_id = p_key AND h.at > t - span LIMIT p_limits[i]
          ) c;
          SELECT min(h.at) INTO oldest FROM wfx_rate_hits h WHERE h.key_id = p_key AND h.at > t - span;
          u := u || n;
          f := f || coalesce(extract(epoch FROM oldest + span - t) * 1000, 0)::double precision;
          IF n >= p_limits[i] THEN ok := false; END IF;
        END LOOP;
        IF ok THEN INSERT INTO wfx_rate_hits (key_id, at) VALUES (p_key, t); END IF;
        RETURN QUERY SELECT ok, u, f;
      END
      $fn$;
    `,
  },
  {
    version: 10,
    name: 'shared journal read by each sharing daemon',
    sql: `
      -- How far each daemon sharing the database has read the shared partition's journal:
      -- its deletion waits for the live ones (fenced-sql.ts).
      ALTER TABLE wfx_daemons ADD COLUMN shared_seq bigint;
    `,
  },
  {
    version: 11,
    name: 'claims on kept messages',
    sql: `
      -- A kept message claimed by a daemon about to consume it (pg-message-claims.ts): the claim
      -- holds while the claiming execution's partition carries the epoch it was made under.
      CREATE TABLE wfx_message_claims (
        message_id text PRIMARY KEY,
        partition integer NOT NULL,
        epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 12,
    name: 'audit trail',
    sql: `
      -- The audit trail (pg-audit.ts): one row a change made through the API, written by the
      -- daemon that served it, read newest first by organization.
      CREATE TABLE wfx_audit (
        id text PRIMARY KEY,
        at timestamptz NOT NULL,
        organization text,
        actor text NOT NULL,
        action text NOT NULL,
        doc text NOT NULL
      );
      CREATE INDEX wfx_audit_organization ON wfx_audit (organization, id);
      CREATE INDEX wfx_audit_at ON wfx_audit (at);
    `,
  },
  {
    version: 13,
    name: 'executions as rows',
    sql: `
      -- A partition's executions (pg-execution-rows.ts), one row each as of the partition's
      -- snapshot (wfx_snapshots, whose state no longer holds them): written by the same
      -- checkpoint, only those changed since the last. The document is text, as the journal's
      -- entries are: written and read back exactly, never parsed by the database. The summary
      -- (state/execution-summary.ts, null when the store was given none) lets a start read
      -- what routes work to an execution without its document.
      CREATE TABLE wfx_executions (
        partition integer NOT NULL,
        id text NOT NULL,
        doc text NOT NULL,
        organization text,
        process_id text,
        process_version text,
        environment text,
        state_cd smallint,
        root text,
        parent text,
        start_ms bigint,
        correlation_key text,
        due_ms bigint,
        active integer,
        waits jsonb,
        PRIMARY KEY (partition, id)
      );
    `,
  },
  {
    version: 14,
    name: 'execution flags',
    sql: `
      -- The rest of an execution's summary (ExecutionSummary.triggered and child, as bits): a
      -- start loads the summaries alone (decision 077). A row written before (null) has its
      -- document read at load, and is written whole by the next checkpoint.
      ALTER TABLE wfx_executions ADD COLUMN flags smallint;
    `,
  },
  {
    version: 15,
    name: 'search attributes',
    sql: `
      -- An execution's search attributes (ExecutionSummary.search; null: none), loaded with its
      -- summary. Rows written before had none: search attributes came after them.
      ALTER TABLE wfx_executions ADD COLUMN search jsonb;
      -- An ended one's, as its history tags keep them (history-store.ts PAIRS_TAG, values encoded):
      -- the index a list by them reads (HistoryStore.list's pairs). Without fastupdate, a row is
      -- in the index as it is written: a search never reads a list of pending ones.
      ALTER TABLE wfx_history ADD COLUMN search jsonb;
      CREATE INDEX wfx_history_search ON wfx_history USING gin (search jsonb_path_ops) WITH (fastupdate = off);
    `,
  },
];

/** The schema version this daemon knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

// pg_advisory_lock's key for "migrating": one daemon at a time, the others wait and find it done.
const MIGRATION_LOCK = 0x77667801;

/**
 * Brings the database's schema up to SCHEMA_VERSION, each migration in its own transaction,
 * under an advisory lock so daemons starting together migrate once. Returns the versions
 * applied. Throws DATABASE_TOO_NEW for a schema newer than this daemon's.
 */
export async function migrate(client: pg.ClientBase): Promise<number[]> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS wfx_schema_version (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM wfx_schema_version',
    );
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new WfxError(
        'DATABASE_TOO_NEW',
        `the database's schema is version ${current}, newer than this daemon's (${SCHEMA_VERSION})`,
        { details: { schemaVersion: current, daemonSchemaVersion: SCHEMA_VERSION } },
      );
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS.filter((m) => m.version > current)) {
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO wfx_schema_version (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
