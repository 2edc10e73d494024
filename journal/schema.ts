/**
 * The journal's schema as an ordered list of migrations; `PRAGMA user_version` records how
 * many ran. A migration is only ever appended, never edited, so any older file upgrades.
 */
import type Database from 'better-sqlite3';
import { JournalError } from './errors.ts';

/** The migrations, in order; the schema version is their count. */
export const MIGRATIONS: readonly string[] = [
  // 1: one append-only table for every row, so one lsn orders the whole file for --follow.
  `CREATE TABLE entries (
     lsn        INTEGER PRIMARY KEY AUTOINCREMENT,
     uid        TEXT    NOT NULL,
     seq        INTEGER NOT NULL,
     entry      TEXT    NOT NULL CHECK (entry IN ('event', 'transition', 'intent', 'outcome')),
     name       TEXT    NOT NULL,
     intent_id  TEXT,
     from_state TEXT,
     to_state   TEXT,
     ok         INTEGER,
     code       TEXT,
     message    TEXT,
     data       TEXT,
     at         TEXT    NOT NULL,
     written_at TEXT    NOT NULL
   );
   CREATE INDEX entries_by_step ON entries (uid, seq);
   CREATE INDEX entries_by_lsn ON entries (uid, lsn);
   CREATE UNIQUE INDEX entries_one_intent ON entries (intent_id) WHERE entry = 'intent';
   CREATE UNIQUE INDEX entries_one_outcome ON entries (intent_id) WHERE entry = 'outcome';
   -- Intents without an outcome: a small table, so recovery never scans history.
   CREATE TABLE open_intents (
     intent_id TEXT PRIMARY KEY,
     uid       TEXT    NOT NULL,
     lsn       INTEGER NOT NULL
   );
   CREATE INDEX open_intents_by_uid ON open_intents (uid, lsn);
   CREATE TABLE objects (
     uid        TEXT PRIMARY KEY,
     kind       TEXT NOT NULL CHECK (kind IN ('EtcdCluster', 'EtcdMember')),
     namespace  TEXT NOT NULL,
     name       TEXT NOT NULL,
     cluster    TEXT,
     machine    TEXT NOT NULL,
     stage      TEXT NOT NULL,
     state      TEXT,
     seq        INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX objects_by_name ON objects (namespace, name);
   CREATE INDEX objects_by_cluster ON objects (namespace, cluster);
   CREATE TABLE writer (
     id          INTEGER PRIMARY KEY CHECK (id = 1),
     pid         INTEGER NOT NULL,
     start_ticks TEXT,
     boot_id     TEXT NOT NULL,
     host        TEXT NOT NULL,
     acquired_at TEXT NOT NULL
   );`,
  // 2: an outcome found by recover() after a restart says so, for the timeline.
  `ALTER TABLE entries ADD COLUMN recovered INTEGER;`,
  // 3: EtcdSnapshots and EtcdSnapshotSchedules have machines too. SQLite cannot change a CHECK: the table is copied.
  `CREATE TABLE objects_v3 (
     uid        TEXT PRIMARY KEY,
     kind       TEXT NOT NULL CHECK (kind IN ('EtcdCluster', 'EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule')),
     namespace  TEXT NOT NULL,
     name       TEXT NOT NULL,
     cluster    TEXT,
     machine    TEXT NOT NULL,
     stage      TEXT NOT NULL,
     state      TEXT,
     seq        INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   INSERT INTO objects_v3 SELECT uid, kind, namespace, name, cluster, machine, stage, state, seq, created_at, updated_at FROM objects;
   DROP TABLE objects;
   ALTER TABLE objects_v3 RENAME TO objects;
   CREATE INDEX objects_by_name ON objects (namespace, name);
   CREATE INDEX objects_by_cluster ON objects (namespace, cluster);`,
];

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The version whose migration creates the `writer` table: needed before the lease can be taken. */
export const LEASE_VERSION = 1;

/** Runs the migrations a writable file lacks up to `target`, each in its own immediate transaction. */
export function migrate(db: Database.Database, path: string, target: number = SCHEMA_VERSION): void {
  for (;;) {
    const ran = db
      .transaction(() => {
        const version = userVersion(db);
        if (version > SCHEMA_VERSION) throw newer(path, version);
        if (version >= target) return false;
        db.exec(MIGRATIONS[version] as string);
        db.pragma(`user_version = ${version + 1}`);
        return true;
      })
      .immediate();
    if (!ran) return;
  }
}

/** Refuses a file whose schema this code cannot read (a reader never migrates). */
export function checkSchema(db: Database.Database, path: string): void {
  const version = userVersion(db);
  if (version > SCHEMA_VERSION) throw newer(path, version);
  if (version < SCHEMA_VERSION) {
    throw new JournalError(
      'ERR_JOURNAL_SCHEMA',
      `journal ${path} has schema version ${version}, this reader needs ${SCHEMA_VERSION}: ` +
        'start the manager once (it upgrades the file), then read it again',
    );
  }
}

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function newer(path: string, version: number): JournalError {
  return new JournalError(
    'ERR_JOURNAL_SCHEMA',
    `journal ${path} has schema version ${version}, newer than this program's ${SCHEMA_VERSION}: use a newer etcd-operator`,
  );
}
