// Package sqlstore is a circuit store on a SQL database through
// database/sql: PostgreSQL (github.com/jackc/pgx/v5/stdlib), for state shared
// by servers, or SQLite (modernc.org/sqlite, pure Go), for a single-file
// store shared by the processes of one server.
//
// Circuits live in one table, circuits, one row per circuit; the rate rule's
// counts in circuit_windows. Migrate creates them (and, on PostgreSQL, the
// notify triggers); nothing is created implicitly. Migrate on a store New
// made without WithCopies: New with it, and storeurl.Open, refuse a
// database with no circuits table. Every operation is one
// statement, decided with the database's now() on PostgreSQL.
//
// New opens a store. On PostgreSQL, WithCopies keeps local copies of closed
// rows that the database invalidates through LISTEN/NOTIFY, so that in
// steady state a healthy guarded call makes no round trip; a copy is never
// served later than the stall bound after the send time of the last
// heartbeat that came back through the trigger, and a trigger dropped,
// disabled or bypassed ends the copies and is reported.
// docs/distributed-stores.md is the design.
//
// For SQLite, open the database with a busy timeout and, for several
// processes, WAL mode:
//
//	sql.Open("sqlite", "file:circuits.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
package sqlstore
