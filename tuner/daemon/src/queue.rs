//! The daemon's queue: one SQLite file (`STATE/queue.sqlite`), written before the daemon acts,
//! so that a daemon restarted after kill -9 or a reboot finds every campaign where it was
//! (queued ones wait, running ones resume through `mats tune --resume`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS campaigns (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    campaign     TEXT NOT NULL,            -- the campaign file (absolute)
    out_dir      TEXT NOT NULL,            -- absolute
    cwd          TEXT NOT NULL,
    priority     INTEGER NOT NULL,
    state        TEXT NOT NULL
                 CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    submitted_at REAL NOT NULL,            -- unix seconds
    started_at   REAL,
    ended_at     REAL,
    starts       INTEGER NOT NULL DEFAULT 0,
    pid          INTEGER,
    cancel       INTEGER NOT NULL DEFAULT 0,
    reason       TEXT,
    max_trials   INTEGER,
    wall_s       REAL,
    progress     TEXT,                     -- JSON: the store's progress when it last ended
    resumed_at   REAL                      -- the latest start (its wall-time budget's clock)
);
CREATE INDEX IF NOT EXISTS campaigns_by_state ON campaigns (state, priority, id);
";

/// One campaign of the queue.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub id: i64,
    pub name: String,
    /// The campaign's TOML file. Serialised as `campaign_file`: `status ID --json` wraps the
    /// entry in an object named `campaign`, which held a `campaign` of its own.
    #[serde(rename = "campaign_file", alias = "campaign")]
    pub campaign: PathBuf,
    pub out_dir: PathBuf,
    pub cwd: PathBuf,
    pub priority: i64,
    pub state: String,
    pub submitted_at: f64,
    /// The first start.
    pub started_at: Option<f64>,
    /// The latest start: each `mats tune` process has a wall-time budget of its own.
    #[serde(default)]
    pub resumed_at: Option<f64>,
    pub ended_at: Option<f64>,
    /// How many times a `mats tune` was started for it (more than one after restarts).
    pub starts: i64,
    pub pid: Option<i64>,
    pub cancel: bool,
    pub reason: Option<String>,
    pub max_trials: Option<i64>,
    pub wall_s: Option<f64>,
    /// Trials done and best value: while it runs, read from its store; once it ended, as
    /// recorded then (status of finished campaigns answers from here, without opening their
    /// stores).
    pub progress: Option<crate::status::Progress>,
}

/// What a new entry needs.
pub struct NewEntry<'a> {
    pub name: &'a str,
    pub campaign: &'a Path,
    pub out_dir: &'a Path,
    pub cwd: &'a Path,
    pub priority: i64,
    pub max_trials: Option<u64>,
    pub wall_s: Option<f64>,
}

pub struct Queue {
    conn: Connection,
    path: PathBuf,
}

pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

const SELECT: &str = "SELECT id, name, campaign, out_dir, cwd, priority, state, submitted_at,
    started_at, ended_at, starts, pid, cancel, reason, max_trials, wall_s, progress, resumed_at
    FROM campaigns";

fn entry(r: &Row<'_>) -> rusqlite::Result<Entry> {
    Ok(Entry {
        id: r.get(0)?,
        name: r.get(1)?,
        campaign: PathBuf::from(r.get::<_, String>(2)?),
        out_dir: PathBuf::from(r.get::<_, String>(3)?),
        cwd: PathBuf::from(r.get::<_, String>(4)?),
        priority: r.get(5)?,
        state: r.get(6)?,
        submitted_at: r.get(7)?,
        started_at: r.get(8)?,
        ended_at: r.get(9)?,
        starts: r.get(10)?,
        pid: r.get(11)?,
        cancel: r.get::<_, i64>(12)? != 0,
        reason: r.get(13)?,
        max_trials: r.get(14)?,
        wall_s: r.get(15)?,
        progress: r
            .get::<_, Option<String>>(16)?
            .and_then(|t| serde_json::from_str(&t).ok()),
        resumed_at: r.get(17)?,
    })
}

/// A campaign the last daemon left running.
pub struct LeftRunning {
    pub id: i64,
    pub pid: Option<i64>,
    pub cancel: bool,
}

impl Queue {
    pub fn open(path: &Path) -> Result<Queue> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the daemon's queue {}", path.display()))?;
        let q = Queue {
            conn,
            path: path.to_path_buf(),
        };
        q.conn
            .busy_timeout(Duration::from_secs(5))
            .and_then(|_| {
                q.conn
                    .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            })
            .and_then(|_| q.conn.execute_batch("PRAGMA synchronous = FULL;"))
            .and_then(|_| q.conn.execute_batch(SCHEMA))
            .and_then(|_| {
                // Queues written before `resumed_at` existed get the column, empty.
                let has: i64 = q.conn.query_row(
                    "SELECT COUNT(*) FROM pragma_table_info('campaigns') WHERE name = 'resumed_at'",
                    [],
                    |r| r.get(0),
                )?;
                if has == 0 {
                    q.conn
                        .execute_batch("ALTER TABLE campaigns ADD COLUMN resumed_at REAL")?;
                }
                Ok(())
            })
            .map_err(|e| q.err(e))?;
        Ok(q)
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        anyhow::anyhow!("{}: {e}", self.path.display())
    }

    pub fn add(&self, e: &NewEntry<'_>) -> Result<i64> {
        self.conn
            .query_row(
                "INSERT INTO campaigns
                     (name, campaign, out_dir, cwd, priority, state, submitted_at, max_trials,
                      wall_s)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7, ?8) RETURNING id",
                params![
                    e.name,
                    e.campaign.to_string_lossy(),
                    e.out_dir.to_string_lossy(),
                    e.cwd.to_string_lossy(),
                    e.priority,
                    now(),
                    e.max_trials.map(|t| t.min(i64::MAX as u64) as i64),
                    e.wall_s,
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    pub fn get(&self, id: i64) -> Result<Option<Entry>> {
        self.conn
            .query_row(&format!("{SELECT} WHERE id = ?1"), [id], entry)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Every campaign: running first, then queued in the order they will start, then the
    /// finished ones, newest first.
    pub fn all(&self) -> Result<Vec<Entry>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SELECT} ORDER BY CASE state WHEN 'running' THEN 0 WHEN 'queued' THEN 1 ELSE 2 END,
                 CASE WHEN state = 'queued' THEN -priority ELSE 0 END,
                 CASE WHEN state IN ('queued', 'running') THEN id ELSE -id END"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], entry).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// The next campaign to start: highest priority, then first submitted.
    pub fn next_queued(&self) -> Result<Option<Entry>> {
        self.conn
            .query_row(
                &format!(
                    "{SELECT} WHERE state = 'queued' AND cancel = 0
                     ORDER BY priority DESC, id LIMIT 1"
                ),
                [],
                entry,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Whether a queued or running campaign writes into `out_dir`.
    pub fn active_in(&self, out_dir: &Path) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT id FROM campaigns WHERE out_dir = ?1 AND state IN ('queued', 'running')",
                [out_dir.to_string_lossy()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn mark_running(&self, id: i64, pid: u32) -> Result<()> {
        self.conn
            .execute(
                "UPDATE campaigns SET state = 'running', pid = ?2, starts = starts + 1,
                     started_at = COALESCE(started_at, ?3), resumed_at = ?3, reason = NULL
                 WHERE id = ?1",
                params![id, pid, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Ends a campaign (`done`, `failed`, `cancelled`) or puts it back (`queued`, when the
    /// daemon stops under it).
    pub fn finish(&self, id: i64, state: &str, reason: Option<&str>) -> Result<()> {
        let ended = (state != "queued").then(now);
        self.conn
            .execute(
                "UPDATE campaigns SET state = ?2, reason = ?3, ended_at = ?4, pid = NULL
                 WHERE id = ?1",
                params![id, state, reason, ended],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn set_progress(&self, id: i64, progress: &crate::status::Progress) -> Result<()> {
        self.conn
            .execute(
                "UPDATE campaigns SET progress = ?2 WHERE id = ?1",
                params![id, serde_json::to_string(progress)?],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn request_cancel(&self, id: i64) -> Result<()> {
        self.conn
            .execute("UPDATE campaigns SET cancel = 1 WHERE id = ?1", [id])
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// After a restart: campaigns the last daemon left running go back to the queue, ahead
    /// of nothing (their priority decides), to be resumed. Returns them, with whether a
    /// cancel was asked for (the caller ends those: [`Self::next_queued`] never starts a
    /// queued campaign with a cancel pending, so it would wait for ever).
    pub fn requeue_running(&self) -> Result<Vec<LeftRunning>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, pid, cancel FROM campaigns WHERE state = 'running'")
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([], |r| {
                Ok(LeftRunning {
                    id: r.get(0)?,
                    pid: r.get(1)?,
                    cancel: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<LeftRunning>>>()
            .map_err(|e| self.err(e))?;
        self.conn
            .execute(
                "UPDATE campaigns SET state = 'queued', pid = NULL WHERE state = 'running'",
                [],
            )
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }
}
