// Package sqlstore is a driver.Store on a SQL database through
// database/sql: PostgreSQL (github.com/jackc/pgx/v5/stdlib, for state shared
// by servers) or SQLite (modernc.org/sqlite, pure Go, for a single-file
// embedded store shared by the processes of one server).
//
// Circuits live in one table, circuits, one row per circuit with name
// UNIQUE: the schema of the reference database circuit breaker
// (id, name, state, failure_count, open_until, updated_at) plus the
// columns our record needs (generation, incarnation, version, probe_token,
// lease_until). The reference's failure_threshold, half_open_at and
// last_failure_at columns are left out: the policy comes with each call (a
// stored threshold would go stale), the half-open claim is probe_token and
// lease_until, and the record keeps no failure history. Migrate creates the
// table; nothing is created implicitly.
//
// Every operation is one statement, so one round trip and its own
// transaction:
//
//   - Load selects the row; on PostgreSQL it selects the database's now() in
//     the same statement (a LEFT JOIN that yields the time even without a
//     row), so every server takes its time from the database and client
//     clock skew cannot bend a cooldown or a lease. SQLite is embedded: the
//     time is the local clock, which every process on the server shares.
//   - Replace is an optimistic compare-and-swap: UPDATE … WHERE name = $1 AND
//     incarnation = $2 AND version = $3, or INSERT … ON CONFLICT (name) DO
//     NOTHING when the caller saw no row. The row is locked for the
//     statement (PostgreSQL's row lock; SQLite's write lock); no rows
//     affected means another writer came first: driver.ErrConflict.
//   - Delete deletes the row, even a corrupt one.
//
// database/sql retries a statement only when the driver reports that it
// was never sent (driver.ErrBadConn), so a compare-and-swap is never applied
// twice; were it replayed, its version check would refuse it.
//
// Database errors and timeouts (bound them with the context) make the
// operation fail: the Breaker reports a *circuit.StateError and admits
// nothing. A row with an unknown state, a negative or out-of-range number,
// an unparsable time or fields inconsistent with its state is reported with
// an error wrapping driver.ErrCorrupt.
//
// # Local copies (PostgreSQL)
//
// A store made with WithCopies keeps a copy of each circuit's row while it is
// closed and serves a Breaker's healthy calls from it without a round trip,
// under the rules of runtime/redisstore's local copies (only closed rows,
// only through Bind; a Replace against a copy is refused so the Breaker
// decides again on a database read with now(); every copy dropped when the
// listening connection ends, fails or is silent for the stall bound). The
// invalidations come from a trigger on circuits that Migrate creates
// (circuitgen_notify: pg_notify('circuitgen_circuits', name) after every
// insert, update and delete, whoever makes it; an empty payload after a TRUNCATE), to a
// dedicated pgx connection that LISTENs and pings every quarter of the
// stall bound when nothing arrives. Without the trigger (a database migrated
// by an older version) New with copies returns ErrNoTrigger; a trigger dropped
// later leaves the store without copies, retrying ever less often. The channel is per
// database: stores on other schemas of the same database drop copies on
// each other's changes, which costs reads, never correctness.
//
// Per-circuit state aggregated locally and flushed in bounded batches
// (failure-rate windows) belongs in the bound circuit (cache.go), next to
// its copy; its flush is one statement per batch through the store's
// *sql.DB, like Replace.
//
// SQLite keeps no copies: it is one host, where the file store is the
// better fit. What that costs: a healthy call is two SELECTs on the local
// file and no network (BenchmarkGuardedCall/sqlite: 180–330 µs on the
// 2-core test machine under load, 122 allocations).
//
// For SQLite, open the database with a busy timeout and, for several
// processes, WAL mode:
//
//	sql.Open("sqlite", "file:circuits.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
package sqlstore
