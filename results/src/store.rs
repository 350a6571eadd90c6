//! The SQLite store of a campaign folder: campaigns, instances, points, search runs, trials,
//! evaluations and exports.
//!
//! Durability is the point of this module. The tuner writes a trial as `started` *before* it
//! launches anything on the GPU, so that a process killed mid-measurement leaves evidence
//! (`recover` turns it into `crashed`, and `cached` stops retrying a point that keeps
//! crashing). For that to hold:
//!
//! - every write method is one committed transaction before it returns (autocommit for single
//!   statements, `BEGIN IMMEDIATE` ... `COMMIT` where a write depends on a read);
//! - the journal is WAL with `synchronous = FULL`, so a commit survives SIGKILL and power loss,
//!   and readers (a report drawn during a campaign) never block the writer;
//! - a busy timeout lets two processes on one file (a second `mats tune --resume`, a report)
//!   wait for each other instead of failing;
//! - foreign keys are on, and trials, evaluations and exports refer to points and instances
//!   of *their own* campaign through composite keys, so a row can never mix campaigns.
//!
//! Timestamps are made by SQLite (`strftime`), RFC 3339 in UTC with milliseconds, so all
//! writers of a file share one clock format.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::Type;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, Row, TransactionBehavior};

use crate::error::{Result, StoreError};

#[path = "merge.rs"]
mod merge;
use crate::point::Point;
use crate::record::{
    CampaignRow, EvaluationRow, EvaluationStatus, ExportRow, InstanceRecord, InstanceRow,
    Measurement, NewEvaluation, RunRow, TrialRow, TrialStatus,
};
pub use merge::MergeCounts;

/// Schema version kept in `PRAGMA user_version`. Bump it with every change to `SCHEMA` and add
/// a migration step in `Store::migrate`.
pub const SCHEMA_VERSION: i64 = 2;

/// `PRAGMA application_id` of a mats store ("mats" in ASCII). It tells a mats store from any
/// other SQLite file, which `user_version` alone cannot.
pub const APPLICATION_ID: i64 = 0x6d61_7473;

/// How long a write waits for another process holding the write lock. Trials are written
/// seconds apart, so a long wait means something is stuck rather than busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Now, RFC 3339 UTC with milliseconds (`2025-01-31T12:00:00.123Z`), as SQL.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Log line `recover` writes into a trial the process never finished.
pub const RECOVERED_LOG: &str =
    "the tuner process ended during this trial (found still started on resume)";

/// Log line of a trial a stopped tuner left unfinished (a second Ctrl-C or SIGTERM):
/// recorded as crashed, but not counted against its point's `max_attempts`, since the user
/// ended it, not the point.
pub const INTERRUPTED_LOG: &str = "interrupted: the tuner was stopped during this trial";

const SCHEMA: &str = "
CREATE TABLE campaigns (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    config_toml TEXT NOT NULL,
    settings    TEXT NOT NULL,            -- JSON
    created_at  TEXT NOT NULL
);
CREATE TABLE instances (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    name        TEXT NOT NULL,
    source      TEXT NOT NULL,
    family      TEXT NOT NULL,
    class       TEXT NOT NULL,
    features    TEXT NOT NULL,            -- JSON
    best_known  INTEGER,
    UNIQUE (campaign_id, name),
    UNIQUE (campaign_id, id)
);
CREATE TABLE points (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    key         TEXT NOT NULL,            -- Point::key()
    point       TEXT NOT NULL,            -- JSON of the Point
    UNIQUE (campaign_id, key),
    UNIQUE (campaign_id, id)
);
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    class       TEXT NOT NULL,
    strategy    TEXT NOT NULL,
    objective   TEXT NOT NULL,
    options     TEXT NOT NULL,            -- JSON
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    UNIQUE (campaign_id, id)
);
CREATE TABLE trials (
    id            INTEGER PRIMARY KEY,
    campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
    point_id      INTEGER NOT NULL,
    instance_id   INTEGER NOT NULL,
    seed          INTEGER NOT NULL,
    device        TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('started', 'ok', 'failed', 'invalid', 'crashed')),
    attempt       INTEGER NOT NULL CHECK (attempt >= 1),
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    time_s        REAL,
    time_spread   REAL,
    power_w       REAL,
    energy_j      REAL,
    sm_clock_mhz  INTEGER,
    mem_clock_mhz INTEGER,
    temperature_c INTEGER,
    throttle      TEXT,
    registers     INTEGER,
    spills        INTEGER,
    shared_bytes  INTEGER,
    compile_s     REAL,
    cache_hit     INTEGER,
    objective     INTEGER,
    gap_percent   REAL,
    run_s         REAL,
    kernel_s      REAL,
    measure_s     REAL,
    target_s      REAL,
    iterations    INTEGER,
    moves         INTEGER,
    launches      INTEGER,
    log           TEXT NOT NULL DEFAULT '',
    UNIQUE (campaign_id, point_id, instance_id, seed, device, attempt),
    FOREIGN KEY (campaign_id, point_id) REFERENCES points (campaign_id, id),
    FOREIGN KEY (campaign_id, instance_id) REFERENCES instances (campaign_id, id)
);
CREATE INDEX trials_by_status ON trials (campaign_id, status);
CREATE TABLE evaluations (
    id           INTEGER PRIMARY KEY,
    campaign_id  INTEGER NOT NULL,
    run_id       INTEGER NOT NULL,
    seq          INTEGER NOT NULL CHECK (seq >= 0),
    point_id     INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'rejected', 'failed')),
    time_s       REAL,
    power_w      REAL,
    energy_j     REAL,
    gap_percent  REAL,
    new_trials   INTEGER NOT NULL CHECK (new_trials >= 0),
    recorded_at  TEXT NOT NULL,
    UNIQUE (run_id, seq),
    FOREIGN KEY (campaign_id, run_id) REFERENCES runs (campaign_id, id),
    FOREIGN KEY (campaign_id, point_id) REFERENCES points (campaign_id, id)
);
CREATE TABLE exports (
    id          INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL,
    class       TEXT NOT NULL,
    prefer      TEXT NOT NULL,
    point_id    INTEGER NOT NULL,
    bundle      TEXT NOT NULL,
    exported_at TEXT NOT NULL,
    UNIQUE (campaign_id, class, prefer),
    FOREIGN KEY (campaign_id, point_id) REFERENCES points (campaign_id, id)
);
";

/// The trial columns `trial_from_row` reads, in its order, with the point and instance joined.
const TRIAL_SELECT: &str = "
SELECT t.id, t.point_id, p.point, i.name, i.class, t.device, t.status, t.attempt,
       t.started_at, t.ended_at,
       t.time_s, t.time_spread, t.power_w, t.energy_j, t.sm_clock_mhz, t.mem_clock_mhz,
       t.temperature_c, t.throttle, t.registers, t.spills, t.shared_bytes, t.compile_s,
       t.cache_hit, t.objective, t.gap_percent, t.log, t.seed,
       t.run_s, t.kernel_s, t.measure_s, t.target_s, t.iterations, t.moves, t.launches
FROM trials t
JOIN points p ON p.id = t.point_id
JOIN instances i ON i.id = t.instance_id";

const EVALUATION_SELECT: &str = "
SELECT e.run_id, e.seq, e.point_id, p.point, e.status, e.time_s, e.power_w, e.energy_j,
       e.gap_percent, e.new_trials
FROM evaluations e
JOIN points p ON p.id = e.point_id";

const RUN_SELECT: &str =
    "SELECT id, class, strategy, objective, options, started_at, ended_at FROM runs";

const CAMPAIGN_SELECT: &str = "SELECT id, name, config_toml, settings, created_at FROM campaigns";

/// An open results store (one SQLite file). Cheap to open; hold one per thread or process.
///
/// All methods take `&self`: a `Store` is `Send` but not `Sync`, so one thread uses it at a
/// time, and concurrent writers use separate `Store`s on the same file.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens the store at `path`, creating the file and schema if there is none.
    ///
    /// Fails, naming the file, when the file is not an SQLite database, is an SQLite database
    /// that is not a mats store, or has a schema newer than this build understands.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open(&path).map_err(|reason| StoreError::Open {
            path: path.clone(),
            reason,
        })?;
        let store = Store { conn, path };
        store.configure()?;
        Ok(store)
    }

    /// Opens an existing store, never creating one: for readers (reports, export) that must
    /// not leave an empty database behind a mistyped path.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Store::open(path)
    }

    /// Opens an existing store to read it, also where this user cannot write the file or its
    /// folder (an archived campaign, a colleague's): the normal open switches the journal
    /// mode and creates the WAL's shared-memory file, which needs write access. Falls back to
    /// SQLite's read-only, immutable open, which assumes no one writes the file meanwhile
    /// (a writer holds the folder's lock, and needs write access this user lacks).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let opened = Store::open_existing(path);
        let writable = || {
            std::fs::OpenOptions::new().append(true).open(path).is_ok()
                && path.parent().is_some_and(|dir| {
                    let dir = if dir.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        dir
                    };
                    tempfile_probe(dir)
                })
        };
        match opened {
            Ok(store) => return Ok(store),
            Err(e @ StoreError::Missing { .. }) => return Err(e),
            Err(e) if writable() => return Err(e),
            Err(_) => {}
        }
        let uri = format!(
            "file:{}?mode=ro&immutable=1",
            path.display()
                .to_string()
                .replace('%', "%25")
                .replace('?', "%3f")
                .replace('#', "%23")
        );
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|reason| StoreError::Open {
            path: path.to_path_buf(),
            reason,
        })?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        let (app_id, version, objects) = store.schema_header()?;
        if objects > 0 && version < SCHEMA_VERSION {
            return Err(store.invalid(format!(
                "schema version {version} cannot be read without write access (this build \
                 reads version {SCHEMA_VERSION}; an older store is upgraded in place): copy \
                 the folder somewhere writable"
            )));
        }
        store.check_header(app_id, version, objects)?;
        Ok(store)
    }

    /// The database file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn configure(&self) -> Result<()> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.err("set busy timeout", e))?;
        let (app_id, version, objects) = self.schema_header()?;
        self.check_header(app_id, version, objects)?;

        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.err("switch to WAL journal", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Invalid {
                path: self.path.clone(),
                what: format!(
                    "SQLite cannot use a WAL journal on this file system (journal mode stays \
                     {mode}); put the campaign folder on a local disk"
                ),
            });
        }
        // FULL: a commit is on disk before the method returns. Trials are seconds apart, so
        // the fsync per commit costs nothing the tuner would notice.
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| self.err("set synchronous", e))?;
        self.conn
            .pragma_update(None, "foreign_keys", true)
            .map_err(|e| self.err("enable foreign keys", e))?;

        if objects == 0 {
            self.create_schema()?;
        }
        Ok(())
    }

    /// [`Store::header`] as a store error. The first read of the header is where SQLite
    /// notices a file that is not a database; said plainly instead of "file is not a
    /// database" from deep inside.
    fn schema_header(&self) -> Result<(i64, i64, i64)> {
        match self.header() {
            Ok(h) => Ok(h),
            Err(e) if is_not_a_database(&e) => Err(StoreError::NotAStore {
                path: self.path.clone(),
                reason: "not an SQLite database".into(),
            }),
            Err(e) => Err(self.err("read schema version", e)),
        }
    }

    fn header(&self) -> rusqlite::Result<(i64, i64, i64)> {
        let app_id: i64 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let objects: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
        Ok((app_id, version, objects))
    }

    fn check_header(&self, app_id: i64, version: i64, objects: i64) -> Result<()> {
        let not_a_store = |reason: &str| StoreError::NotAStore {
            path: self.path.clone(),
            reason: reason.to_string(),
        };
        if app_id == 0 && version == 0 && objects == 0 {
            return Ok(()); // empty: created below
        }
        if app_id != APPLICATION_ID {
            return Err(not_a_store("an SQLite database of another program"));
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version < 1 {
            return Err(not_a_store("mats application id but no schema version"));
        }
        self.migrate(version)
    }

    /// Upgrades an older schema in place, in one transaction.
    ///
    /// Version 2 makes the seed part of a trial's identity (quality objectives run every
    /// point on several seeds) and adds the work counters. SQLite cannot change a UNIQUE
    /// constraint, so the trials table is rebuilt; a version-1 trial ran with its campaign's
    /// seed, which the campaign's settings record.
    fn migrate(&self, from: i64) -> Result<()> {
        if from >= SCHEMA_VERSION {
            return Ok(());
        }
        const OP: &str = "upgrade the store to schema version 2";
        let tx = self.immediate(OP)?;
        let create = SCHEMA
            .split_once("CREATE TABLE trials (")
            .and_then(|(_, rest)| rest.split_once(");"))
            .map(|(body, _)| format!("CREATE TABLE trials_v2 ({body});"))
            .ok_or_else(|| self.invalid("the trials schema is missing".to_string()))?;
        let columns = "id, campaign_id, point_id, instance_id, device, status, attempt, \
                       started_at, ended_at, time_s, time_spread, power_w, energy_j, \
                       sm_clock_mhz, mem_clock_mhz, temperature_c, throttle, registers, spills, \
                       shared_bytes, compile_s, cache_hit, objective, gap_percent, log";
        tx.execute_batch(&format!(
            "{create}
             INSERT INTO trials_v2 ({columns}, seed)
                 SELECT {columns},
                        COALESCE((SELECT json_extract(c.settings, '$.seed') FROM campaigns c
                                  WHERE c.id = trials.campaign_id), 0)
                 FROM trials;
             DROP TABLE trials;
             ALTER TABLE trials_v2 RENAME TO trials;
             CREATE INDEX trials_by_status ON trials (campaign_id, status);"
        ))
        .map_err(|e| self.err(OP, e))?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(|e| self.err(OP, e))?;
        tx.commit().map_err(|e| self.err(OP, e))
    }

    fn create_schema(&self) -> Result<()> {
        let tx = self.immediate("create schema")?;
        // Another process may have created it between our check and our write lock.
        let objects: i64 = tx
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(|e| self.err("create schema", e))?;
        if objects == 0 {
            tx.execute_batch(SCHEMA)
                .map_err(|e| self.err("create schema", e))?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(|e| self.err("create schema", e))?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(|e| self.err("create schema", e))?;
        }
        tx.commit().map_err(|e| self.err("create schema", e))
    }

    /// A write transaction that takes the write lock at once, so that a read inside it can
    /// never go stale (a deferred transaction would fail with SQLITE_BUSY on upgrade instead
    /// of waiting for the busy timeout).
    fn immediate(&self, op: &'static str) -> Result<rusqlite::Transaction<'_>> {
        rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.err(op, e))
    }

    fn err(&self, op: &'static str, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            op,
            reason: source,
        }
    }

    fn not_found(&self, what: String) -> StoreError {
        StoreError::NotFound {
            path: self.path.clone(),
            what,
        }
    }

    fn invalid(&self, what: String) -> StoreError {
        StoreError::Invalid {
            path: self.path.clone(),
            what,
        }
    }

    // ---------------------------------------------------------------- campaigns

    /// The campaign called `name`: created with this configuration and settings if it does
    /// not exist, else returned as stored (its configuration is *not* replaced, so a resumed
    /// campaign keeps what it started with; compare `config_toml` if that matters).
    pub fn campaign(
        &self,
        name: &str,
        config_toml: &str,
        settings: &serde_json::Value,
    ) -> Result<CampaignRow> {
        let settings = settings.to_string();
        self.conn
            .execute(
                &format!(
                    "INSERT INTO campaigns (name, config_toml, settings, created_at)
                     VALUES (?1, ?2, ?3, {NOW}) ON CONFLICT (name) DO NOTHING"
                ),
                params![name, config_toml, settings],
            )
            .map_err(|e| self.err("create campaign", e))?;
        self.find_campaign(name)?
            .ok_or_else(|| self.not_found(format!("campaign '{name}' vanished after insert")))
    }

    /// The campaign called `name`, if the store has one.
    pub fn find_campaign(&self, name: &str) -> Result<Option<CampaignRow>> {
        self.conn
            .query_row(
                &format!("{CAMPAIGN_SELECT} WHERE name = ?1"),
                [name],
                campaign_from_row,
            )
            .optional()
            .map_err(|e| self.err("read campaign", e))
    }

    /// Replaces a campaign's settings JSON (the tuner refines them, e.g. the baseline point,
    /// after the campaign row exists).
    pub fn update_campaign_settings(
        &self,
        campaign_id: i64,
        settings: &serde_json::Value,
    ) -> Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE campaigns SET settings = ?2 WHERE id = ?1",
                params![campaign_id, settings.to_string()],
            )
            .map_err(|e| self.err("update campaign settings", e))?;
        if n == 0 {
            return Err(self.not_found(format!("no campaign with id {campaign_id}")));
        }
        Ok(())
    }

    /// Every campaign in the store, oldest first.
    pub fn campaigns(&self) -> Result<Vec<CampaignRow>> {
        self.query_all(
            "read campaigns",
            &format!("{CAMPAIGN_SELECT} ORDER BY id"),
            [],
            campaign_from_row,
        )
    }

    // ---------------------------------------------------------------- instances

    /// The id of the campaign's instance called `record.name`, inserting it or updating its
    /// other fields (a re-run may compute features or the best-known value anew). The id of
    /// an existing instance never changes, so trials keep pointing at it.
    pub fn instance(&self, campaign_id: i64, record: &InstanceRecord) -> Result<i64> {
        self.conn
            .query_row(
                "INSERT INTO instances
                     (campaign_id, name, source, family, class, features, best_known)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (campaign_id, name) DO UPDATE SET
                     source = excluded.source, family = excluded.family,
                     class = excluded.class, features = excluded.features,
                     best_known = excluded.best_known
                 RETURNING id",
                params![
                    campaign_id,
                    record.name,
                    record.source,
                    record.family,
                    record.class,
                    record.features.to_string(),
                    record.best_known
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.err("write instance", e))
    }

    /// The campaign's instances, in the order they were first added.
    pub fn instances(&self, campaign_id: i64) -> Result<Vec<InstanceRow>> {
        self.query_all(
            "read instances",
            "SELECT id, name, source, family, class, features, best_known
             FROM instances WHERE campaign_id = ?1 ORDER BY id",
            [campaign_id],
            |r| {
                Ok(InstanceRow {
                    id: r.get(0)?,
                    record: InstanceRecord {
                        name: r.get(1)?,
                        source: r.get(2)?,
                        family: r.get(3)?,
                        class: r.get(4)?,
                        features: json_column(r, 5)?,
                        best_known: r.get(6)?,
                    },
                })
            },
        )
    }

    // ---------------------------------------------------------------- points

    /// The id of `point` in the campaign, inserting it on first sight. Identity is
    /// `Point::key()`: the same point always gets the same id, in this process or a later one.
    pub fn point(&self, campaign_id: i64, point: &Point) -> Result<i64> {
        let key = point.key();
        let json = serde_json::to_string(point)
            .map_err(|e| self.invalid(format!("point {key} cannot be written as JSON: {e}")))?;
        self.conn
            .execute(
                "INSERT INTO points (campaign_id, key, point) VALUES (?1, ?2, ?3)
                 ON CONFLICT (campaign_id, key) DO NOTHING",
                params![campaign_id, key, json],
            )
            .map_err(|e| self.err("write point", e))?;
        self.conn
            .query_row(
                "SELECT id FROM points WHERE campaign_id = ?1 AND key = ?2",
                params![campaign_id, key],
                |r| r.get(0),
            )
            .map_err(|e| self.err("read point", e))
    }

    /// Every point of the campaign with its id, in the order first seen.
    pub fn points(&self, campaign_id: i64) -> Result<Vec<(i64, Point)>> {
        self.query_all(
            "read points",
            "SELECT id, point FROM points WHERE campaign_id = ?1 ORDER BY id",
            [campaign_id],
            |r| Ok((r.get(0)?, point_column(r, 1)?)),
        )
    }

    // ---------------------------------------------------------------- runs

    /// Records the start of a search run (one strategy on one class) and returns it.
    pub fn begin_run(
        &self,
        campaign_id: i64,
        class: &str,
        strategy: &str,
        objective: &str,
        options: &serde_json::Value,
    ) -> Result<RunRow> {
        self.conn
            .query_row(
                &format!(
                    "INSERT INTO runs (campaign_id, class, strategy, objective, options, started_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, {NOW})
                     RETURNING id, class, strategy, objective, options, started_at, ended_at"
                ),
                params![campaign_id, class, strategy, objective, options.to_string()],
                run_from_row,
            )
            .map_err(|e| self.err("begin run", e))
    }

    /// Marks a run as ended (its budget spent or its strategy converged). A run left without
    /// an end was interrupted; `--resume` may start a new one. Ending a run that already
    /// ended keeps its first end time: a resume that walks past finished runs must not
    /// restamp them.
    pub fn end_run(&self, run_id: i64) -> Result<()> {
        let n = self
            .conn
            .execute(
                &format!("UPDATE runs SET ended_at = COALESCE(ended_at, {NOW}) WHERE id = ?1"),
                [run_id],
            )
            .map_err(|e| self.err("end run", e))?;
        if n == 0 {
            return Err(self.not_found(format!("no run with id {run_id}")));
        }
        Ok(())
    }

    /// Replaces a run's options JSON (the tuner records what a comparison run found).
    pub fn set_run_options(&self, run_id: i64, options: &serde_json::Value) -> Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET options = ?2 WHERE id = ?1",
                params![run_id, options.to_string()],
            )
            .map_err(|e| self.err("update run options", e))?;
        if n == 0 {
            return Err(self.not_found(format!("no run with id {run_id}")));
        }
        Ok(())
    }

    /// The campaign's runs, oldest first.
    pub fn runs(&self, campaign_id: i64) -> Result<Vec<RunRow>> {
        self.query_all(
            "read runs",
            &format!("{RUN_SELECT} WHERE campaign_id = ?1 ORDER BY id"),
            [campaign_id],
            run_from_row,
        )
    }

    // ---------------------------------------------------------------- trials

    /// Writes a `started` trial of `point_id` on `instance_id` with `seed` on `device` and
    /// commits it before returning, so that the launch that follows is on record even if the
    /// process dies during it. Its attempt number is one more than the trials of the same
    /// (point, instance, seed, device) so far. Returns the trial id for `finish_trial`.
    pub fn begin_trial(
        &self,
        campaign_id: i64,
        point_id: i64,
        instance_id: i64,
        seed: u64,
        device: &str,
    ) -> Result<i64> {
        const OP: &str = "begin trial";
        let tx = self.immediate(OP)?;
        let id = tx
            .query_row(
                &format!(
                    "INSERT INTO trials
                         (campaign_id, point_id, instance_id, seed, device, status, attempt,
                          started_at)
                     SELECT ?1, ?2, ?3, ?5, ?4, 'started', COALESCE(MAX(attempt), 0) + 1, {NOW}
                     FROM trials
                     WHERE campaign_id = ?1 AND point_id = ?2 AND instance_id = ?3
                       AND device = ?4 AND seed = ?5
                     RETURNING id"
                ),
                params![campaign_id, point_id, instance_id, device, seed as i64],
                |r| r.get(0),
            )
            .map_err(|e| self.err(OP, e))?;
        tx.commit().map_err(|e| self.err(OP, e))?;
        Ok(id)
    }

    /// Ends a `started` trial with its status, measurement and log (compile log, error or
    /// crash reason). Fails if the trial is not `started`: finishing twice, or finishing a
    /// trial that another process's `recover` already marked crashed, means two tuners share
    /// a campaign, and the caller should know.
    pub fn finish_trial(
        &self,
        trial_id: i64,
        status: TrialStatus,
        m: &Measurement,
        log: &str,
    ) -> Result<()> {
        if status == TrialStatus::Started {
            return Err(self.invalid(format!("trial {trial_id} cannot be finished as 'started'")));
        }
        let n = self
            .conn
            .execute(
                &format!(
                    "UPDATE trials SET status = ?2, ended_at = {NOW},
                         time_s = ?3, time_spread = ?4, power_w = ?5, energy_j = ?6,
                         sm_clock_mhz = ?7, mem_clock_mhz = ?8, temperature_c = ?9,
                         throttle = ?10, registers = ?11, spills = ?12, shared_bytes = ?13,
                         compile_s = ?14, cache_hit = ?15, objective = ?16, gap_percent = ?17,
                         log = ?18, run_s = ?19, kernel_s = ?20, measure_s = ?21,
                         target_s = ?22, iterations = ?23, moves = ?24, launches = ?25
                     WHERE id = ?1 AND status = 'started'"
                ),
                params![
                    trial_id,
                    status.as_str(),
                    m.time_s,
                    m.time_spread,
                    m.power_w,
                    m.energy_j,
                    m.sm_clock_mhz,
                    m.mem_clock_mhz,
                    m.temperature_c,
                    m.throttle,
                    m.registers,
                    m.spills,
                    m.shared_bytes,
                    m.compile_s,
                    m.cache_hit,
                    m.objective,
                    m.gap_percent,
                    log,
                    m.run_s,
                    m.kernel_s,
                    m.measure_s,
                    m.target_s,
                    m.iterations.map(saturating_i64),
                    m.moves.map(saturating_i64),
                    m.launches.map(saturating_i64)
                ],
            )
            .map_err(|e| self.err("finish trial", e))?;
        if n == 0 {
            return Err(self.not_found(format!(
                "trial {trial_id} does not exist or is no longer 'started'"
            )));
        }
        Ok(())
    }

    /// Marks every trial of the campaign still `started` as `crashed`, appending
    /// `RECOVERED_LOG` to its log, and returns how many. Call it once on `--resume`, before
    /// measuring: only then is a `started` trial certainly one whose process died.
    pub fn recover(&self, campaign_id: i64) -> Result<usize> {
        self.crash_started(campaign_id, RECOVERED_LOG, "recover trials")
    }

    /// Marks every trial of the campaign still `started` as crashed with `INTERRUPTED_LOG`
    /// and returns how many: what a tuner that is being stopped calls on its way out. Such
    /// trials are measured again on `--resume` however often they were interrupted.
    pub fn interrupt(&self, campaign_id: i64) -> Result<usize> {
        self.crash_started(campaign_id, INTERRUPTED_LOG, "record interrupted trials")
    }

    /// Every `started` trial of the campaign as `crashed`, with `line` appended to its log.
    fn crash_started(&self, campaign_id: i64, line: &str, op: &'static str) -> Result<usize> {
        self.conn
            .execute(
                &format!(
                    "UPDATE trials SET status = 'crashed', ended_at = {NOW},
                         log = CASE WHEN log = '' THEN ?2 ELSE log || char(10) || ?2 END
                     WHERE campaign_id = ?1 AND status = 'started'"
                ),
                params![campaign_id, line],
            )
            .map_err(|e| self.err(op, e))
    }

    /// The stored outcome the tuner must reuse instead of measuring (point, instance, device)
    /// again, or `None` for "measure it":
    ///
    /// - the latest `ok`, `failed` or `invalid` trial, if any (a deterministic failure does
    ///   not improve by retrying);
    /// - else the latest `crashed` trial once there are `max_attempts` crashed trials, so a
    ///   point that takes the process down is not retried forever;
    /// - else `None` (never tried, crashed fewer than `max_attempts` times, or only `started`
    ///   trials, which `recover` has not yet seen).
    pub fn cached(
        &self,
        campaign_id: i64,
        point_id: i64,
        instance_id: i64,
        seed: u64,
        device: &str,
        max_attempts: u32,
    ) -> Result<Option<TrialRow>> {
        let seed = seed as i64;
        let base = format!(
            "{TRIAL_SELECT} WHERE t.campaign_id = ?1 AND t.point_id = ?2 AND t.instance_id = ?3
             AND t.device = ?4 AND t.seed = ?5"
        );
        let finished = self
            .conn
            .query_row(
                &format!(
                    "{base} AND t.status IN ('ok', 'failed', 'invalid')
                     ORDER BY t.attempt DESC LIMIT 1"
                ),
                params![campaign_id, point_id, instance_id, device, seed],
                trial_from_row,
            )
            .optional()
            .map_err(|e| self.err("read cached trial", e))?;
        if finished.is_some() {
            return Ok(finished);
        }
        // The trial's key and the marker of trials a user's stop interrupted (not crashes).
        let crashed: [&dyn rusqlite::ToSql; 6] = [
            &campaign_id,
            &point_id,
            &instance_id,
            &device,
            &seed,
            &INTERRUPTED_LOG,
        ];
        let crashes: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM trials
                 WHERE campaign_id = ?1 AND point_id = ?2 AND instance_id = ?3 AND device = ?4
                   AND seed = ?5 AND status = 'crashed' AND instr(log, ?6) = 0",
                &crashed[..],
                |r| r.get(0),
            )
            .map_err(|e| self.err("read cached trial", e))?;
        if crashes < i64::from(max_attempts) {
            return Ok(None);
        }
        self.conn
            .query_row(
                &format!(
                    "{base} AND t.status = 'crashed' AND instr(t.log, ?6) = 0
                     ORDER BY t.attempt DESC LIMIT 1"
                ),
                &crashed[..],
                trial_from_row,
            )
            .optional()
            .map_err(|e| self.err("read cached trial", e))
    }

    /// One trial by id, with its point and instance.
    pub fn trial(&self, trial_id: i64) -> Result<Option<TrialRow>> {
        self.conn
            .query_row(
                &format!("{TRIAL_SELECT} WHERE t.id = ?1"),
                [trial_id],
                trial_from_row,
            )
            .optional()
            .map_err(|e| self.err("read trial", e))
    }

    /// Every trial of the campaign (all statuses and attempts), in the order they began.
    pub fn trials(&self, campaign_id: i64) -> Result<Vec<TrialRow>> {
        self.query_all(
            "read trials",
            &format!("{TRIAL_SELECT} WHERE t.campaign_id = ?1 ORDER BY t.id"),
            [campaign_id],
            trial_from_row,
        )
    }

    // ---------------------------------------------------------------- evaluations

    /// The `seq` the next evaluation of `run_id` gets (0 for a fresh run).
    pub fn next_seq(&self, run_id: i64) -> Result<u32> {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM evaluations WHERE run_id = ?1",
                [run_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err("read evaluation sequence", e))
    }

    /// Appends an evaluation to its run, assigning the next `seq` in the same transaction
    /// (so two writers can never take the same number), and returns the stored row. The point
    /// must belong to the run's campaign.
    pub fn record_evaluation(&self, e: &NewEvaluation) -> Result<EvaluationRow> {
        const OP: &str = "record evaluation";
        let tx = self.immediate(OP)?;
        let campaign_id: Option<i64> = tx
            .query_row(
                "SELECT campaign_id FROM runs WHERE id = ?1",
                [e.run_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|err| self.err(OP, err))?;
        let Some(campaign_id) = campaign_id else {
            return Err(self.not_found(format!("no run with id {}", e.run_id)));
        };
        let id: i64 = tx
            .query_row(
                &format!(
                    "INSERT INTO evaluations
                         (campaign_id, run_id, seq, point_id, status, time_s, power_w, energy_j,
                          gap_percent, new_trials, recorded_at)
                     SELECT ?1, ?2, COALESCE(MAX(seq) + 1, 0), ?3, ?4, ?5, ?6, ?7, ?8, ?9, {NOW}
                     FROM evaluations WHERE run_id = ?2
                     RETURNING id"
                ),
                params![
                    campaign_id,
                    e.run_id,
                    e.point_id,
                    e.status.as_str(),
                    e.time_s,
                    e.power_w,
                    e.energy_j,
                    e.gap_percent,
                    e.new_trials
                ],
                |r| r.get(0),
            )
            .map_err(|err| self.err(OP, err))?;
        let row = tx
            .query_row(
                &format!("{EVALUATION_SELECT} WHERE e.id = ?1"),
                [id],
                evaluation_from_row,
            )
            .map_err(|err| self.err(OP, err))?;
        tx.commit().map_err(|err| self.err(OP, err))?;
        Ok(row)
    }

    /// Every evaluation of the campaign, by run then `seq`.
    pub fn evaluations(&self, campaign_id: i64) -> Result<Vec<EvaluationRow>> {
        self.query_all(
            "read evaluations",
            &format!("{EVALUATION_SELECT} WHERE e.campaign_id = ?1 ORDER BY e.run_id, e.seq"),
            [campaign_id],
            evaluation_from_row,
        )
    }

    /// The evaluations of one run in `seq` order: its convergence curve.
    pub fn evaluations_of_run(&self, run_id: i64) -> Result<Vec<EvaluationRow>> {
        self.query_all(
            "read evaluations",
            &format!("{EVALUATION_SELECT} WHERE e.run_id = ?1 ORDER BY e.seq"),
            [run_id],
            evaluation_from_row,
        )
    }

    // ---------------------------------------------------------------- exports

    /// Records that `row.point_id` is the exported point of `row.class` for `row.prefer`,
    /// replacing an earlier choice for that class and preference. `row.point` is not written:
    /// the point is the one stored under `point_id`, which must be in this campaign.
    pub fn set_export(&self, campaign_id: i64, row: &ExportRow) -> Result<()> {
        self.conn
            .execute(
                &format!(
                    "INSERT INTO exports (campaign_id, class, prefer, point_id, bundle, exported_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, {NOW})
                     ON CONFLICT (campaign_id, class, prefer) DO UPDATE SET
                         point_id = excluded.point_id, bundle = excluded.bundle,
                         exported_at = excluded.exported_at"
                ),
                params![campaign_id, row.class, row.prefer, row.point_id, row.bundle],
            )
            .map_err(|e| self.err("write export", e))?;
        Ok(())
    }

    /// Replaces the campaign's whole export set at once (one transaction): an export run
    /// that no longer exports some class leaves no stale row for it.
    pub fn replace_exports(&self, campaign_id: i64, rows: &[ExportRow]) -> Result<()> {
        const OP: &str = "replace exports";
        let tx = self.immediate(OP)?;
        tx.execute("DELETE FROM exports WHERE campaign_id = ?1", [campaign_id])
            .map_err(|e| self.err(OP, e))?;
        for row in rows {
            tx.execute(
                &format!(
                    "INSERT INTO exports (campaign_id, class, prefer, point_id, bundle, exported_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, {NOW})"
                ),
                params![campaign_id, row.class, row.prefer, row.point_id, row.bundle],
            )
            .map_err(|e| self.err(OP, e))?;
        }
        tx.commit().map_err(|e| self.err(OP, e))
    }

    /// The campaign's exports, by class then preference.
    pub fn exports(&self, campaign_id: i64) -> Result<Vec<ExportRow>> {
        self.query_all(
            "read exports",
            "SELECT x.class, x.prefer, x.point_id, p.point, x.bundle
             FROM exports x JOIN points p ON p.id = x.point_id
             WHERE x.campaign_id = ?1 ORDER BY x.class, x.prefer",
            [campaign_id],
            |r| {
                Ok(ExportRow {
                    class: r.get(0)?,
                    prefer: r.get(1)?,
                    point_id: r.get(2)?,
                    point: point_column(r, 3)?,
                    bundle: r.get(4)?,
                })
            },
        )
    }

    // ---------------------------------------------------------------- checks

    /// Runs `PRAGMA integrity_check` and `PRAGMA foreign_key_check`; Ok only if both find
    /// nothing wrong.
    pub fn integrity_check(&self) -> Result<()> {
        let report: Vec<String> =
            self.query_all("integrity check", "PRAGMA integrity_check", [], |r| {
                r.get(0)
            })?;
        if report != ["ok"] {
            // A damaged page gives a line per cell: the first few say what is wrong.
            let lines: Vec<&str> = report.iter().flat_map(|r| r.lines()).collect();
            let mut said = lines[..lines.len().min(3)].join("; ");
            if lines.len() > 3 {
                said.push_str(&format!("; ... ({} more)", lines.len() - 3));
            }
            return Err(StoreError::Integrity {
                path: self.path.clone(),
                report: said,
            });
        }
        let broken: Vec<String> =
            self.query_all("foreign key check", "PRAGMA foreign_key_check", [], |r| {
                let table: String = r.get(0)?;
                let rowid: Option<i64> = r.get(1)?;
                let parent: String = r.get(2)?;
                Ok(format!(
                    "{table} row {rowid:?} refers to a missing {parent} row"
                ))
            })?;
        if !broken.is_empty() {
            return Err(StoreError::Integrity {
                path: self.path.clone(),
                report: broken.join("; "),
            });
        }
        Ok(())
    }

    fn query_all<T, P, F>(&self, op: &'static str, sql: &str, params: P, f: F) -> Result<Vec<T>>
    where
        P: rusqlite::Params,
        F: FnMut(&Row<'_>) -> rusqlite::Result<T>,
    {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(op, e))?;
        let rows = stmt.query_map(params, f).map_err(|e| self.err(op, e))?;
        rows.collect::<rusqlite::Result<Vec<T>>>()
            .map_err(|e| self.err(op, e))
    }
}

fn is_not_a_database(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::NotADatabase)
}

/// A stored value that does not decode (hand-edited or damaged file), reported as a column
/// conversion error so the message says which column.
fn bad_column(idx: usize, msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, msg.into())
}

fn json_column(r: &Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text).map_err(|e| bad_column(idx, format!("bad JSON: {e}")))
}

fn point_column(r: &Row<'_>, idx: usize) -> rusqlite::Result<Point> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text).map_err(|e| bad_column(idx, format!("bad point JSON: {e}")))
}

fn campaign_from_row(r: &Row<'_>) -> rusqlite::Result<CampaignRow> {
    Ok(CampaignRow {
        id: r.get(0)?,
        name: r.get(1)?,
        config_toml: r.get(2)?,
        settings: json_column(r, 3)?,
        created_at: r.get(4)?,
    })
}

fn run_from_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        class: r.get(1)?,
        strategy: r.get(2)?,
        objective: r.get(3)?,
        options: json_column(r, 4)?,
        started_at: r.get(5)?,
        ended_at: r.get(6)?,
    })
}

/// SQLite integers are signed 64-bit; a work counter past i64::MAX (never in practice) is
/// stored as the largest value rather than wrapping negative.
fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn trial_from_row(r: &Row<'_>) -> rusqlite::Result<TrialRow> {
    let status: String = r.get(6)?;
    let status = TrialStatus::parse(&status)
        .ok_or_else(|| bad_column(6, format!("unknown trial status '{status}'")))?;
    Ok(TrialRow {
        id: r.get(0)?,
        point_id: r.get(1)?,
        point: point_column(r, 2)?,
        instance: r.get(3)?,
        class: r.get(4)?,
        device: r.get(5)?,
        status,
        attempt: r.get(7)?,
        started_at: r.get(8)?,
        ended_at: r.get(9)?,
        measurement: Measurement {
            time_s: r.get(10)?,
            time_spread: r.get(11)?,
            power_w: r.get(12)?,
            energy_j: r.get(13)?,
            sm_clock_mhz: r.get(14)?,
            mem_clock_mhz: r.get(15)?,
            temperature_c: r.get(16)?,
            throttle: r.get(17)?,
            registers: r.get(18)?,
            spills: r.get(19)?,
            shared_bytes: r.get(20)?,
            compile_s: r.get(21)?,
            cache_hit: r.get(22)?,
            objective: r.get(23)?,
            gap_percent: r.get(24)?,
            run_s: r.get(27)?,
            kernel_s: r.get(28)?,
            measure_s: r.get(29)?,
            target_s: r.get(30)?,
            iterations: r.get::<_, Option<i64>>(31)?.map(|v| v.max(0) as u64),
            moves: r.get::<_, Option<i64>>(32)?.map(|v| v.max(0) as u64),
            launches: r.get::<_, Option<i64>>(33)?.map(|v| v.max(0) as u64),
        },
        log: r.get(25)?,
        seed: r.get::<_, i64>(26)? as u64,
    })
}

fn evaluation_from_row(r: &Row<'_>) -> rusqlite::Result<EvaluationRow> {
    let status: String = r.get(4)?;
    let status = EvaluationStatus::parse(&status)
        .ok_or_else(|| bad_column(4, format!("unknown evaluation status '{status}'")))?;
    Ok(EvaluationRow {
        run_id: r.get(0)?,
        seq: r.get(1)?,
        point_id: r.get(2)?,
        point: point_column(r, 3)?,
        status,
        time_s: r.get(5)?,
        power_w: r.get(6)?,
        energy_j: r.get(7)?,
        gap_percent: r.get(8)?,
        new_trials: r.get(9)?,
    })
}

/// Whether a file can be created in `dir` (the WAL's `-shm` and `-wal` files must be):
/// permission bits do not say it for root, ACLs or read-only mounts.
fn tempfile_probe(dir: &Path) -> bool {
    let probe = dir.join(format!(".mats-write-probe-{}", std::process::id()));
    let ok = std::fs::File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}
