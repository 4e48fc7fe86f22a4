package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/copies"
	"github.com/circuitgen/circuitgen/runtime/internal/lost"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// channel is the NOTIFY channel of the circuits table's trigger; the
// payload is the circuit's name ("" after a TRUNCATE: every circuit).
const channel = "circuitgen_circuits"

// ListenerName is the application_name of a cached Store's listening
// connection, as pg_stat_activity shows it.
const ListenerName = "circuitgen-invalidations"

// A row of circuits whose name begins with beatPrefix is a heartbeat of
// the listening stores, not a circuit (no circuit name begins with "~"):
// the trigger announces its every write on beatChannel + the rest of the
// name, with the row's incarnation as the payload, and nothing on channel.
// The stores share one such row (tickName).
const (
	beatPrefix  = "~beat:"
	beatChannel = "circuitgen_beat_"
)

// The notify triggers on circuits; both must be enabled ALWAYS, so that
// they fire for sessions in the replica role too (logical replication,
// pg_restore's data loads).
var notifyTriggers = []string{"circuitgen_notify", "circuitgen_notify_truncate"}

// notifySchema creates the triggers that notify channel of every change to
// a row of circuits, whoever makes it (Migrate runs it on PostgreSQL).
const notifySchema = `CREATE OR REPLACE FUNCTION circuitgen_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		PERFORM pg_notify('` + channel + `', '');
		RETURN NULL;
	END IF;
	IF TG_OP <> 'DELETE' AND starts_with(NEW.name, '` + beatPrefix + `') THEN
		PERFORM pg_notify('` + beatChannel + `' || substr(NEW.name, ` + "7" + `), NEW.incarnation);
		RETURN NULL;
	END IF;
	IF TG_OP <> 'INSERT' AND NOT starts_with(OLD.name, '` + beatPrefix + `') THEN
		PERFORM pg_notify('` + channel + `', OLD.name);
	END IF;
	IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.name IS DISTINCT FROM OLD.name) THEN
		PERFORM pg_notify('` + channel + `', NEW.name);
	END IF;
	RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER circuitgen_notify AFTER INSERT OR UPDATE OR DELETE ON circuits
	FOR EACH ROW EXECUTE FUNCTION circuitgen_notify();
CREATE OR REPLACE TRIGGER circuitgen_notify_truncate AFTER TRUNCATE ON circuits
	FOR EACH STATEMENT EXECUTE FUNCTION circuitgen_notify();
ALTER TABLE circuits ENABLE ALWAYS TRIGGER circuitgen_notify;
ALTER TABLE circuits ENABLE ALWAYS TRIGGER circuitgen_notify_truncate`

// WithCopies keeps local copies of closed rows that the database
// invalidates (PostgreSQL only; docs/distributed-stores.md): in steady
// state a healthy guarded call makes no round trip. The copies rely on the
// triggers Migrate creates, heard on a connection of the store's own that
// LISTENs, made with the pgx configuration db was opened with (db must be
// opened through github.com/jackc/pgx/v5/stdlib). A copy is served until
// stallBound (1 s when 0) after the send time of the last heartbeat that
// came back through the trigger; until the connection is up, and whenever
// it is lost or no heartbeat comes back in time, there are no copies and
// every Load reads the database. While sessions keep failing, the pause
// before the next one doubles, from stallBound/4 up to 30 s. Close stops
// it. New then fails when a trigger is missing or not enabled ALWAYS (an
// error wrapping ErrNoTrigger), or when Check does.
func WithCopies(stallBound time.Duration) Option {
	return func(c *config) {
		c.copies = true
		c.bound = copies.Bound(stallBound)
	}
}

// startCopies turns on s's copies (WithCopies).
func (s *Store) startCopies(ctx context.Context, bound time.Duration) error {
	if s.dialect != Postgres {
		return fmt.Errorf("sqlstore: copies need PostgreSQL, not %v", s.dialect)
	}
	cfg, err := listenConfig(ctx, s.db)
	if err != nil {
		return err
	}
	if err := s.Check(ctx); err != nil {
		return err
	}
	if err := s.checkTrigger(ctx); err != nil {
		return err
	}
	tctx, cancel := context.WithCancel(context.Background())
	s.cache, s.stop, s.done = copies.New(), cancel, make(chan struct{})
	l := &listener{c: s.cache, db: s.db, cfg: cfg, bound: bound, report: s.reportSession}
	go l.loop(tctx, s.done)
	return nil
}

// listenConfig returns the configuration of the listening connection: db's
// own pgx configuration, as application ListenerName, in the origin role
// (its heartbeat must go through the trigger), without db's tracer, and
// with context deadlines that leave the connection usable after a
// timed-out wait for a notification.
func listenConfig(ctx context.Context, db *sql.DB) (*pgx.ConnConfig, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: copies: %w", err)
	}
	defer conn.Close()
	var cfg *pgx.ConnConfig
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("sqlstore: copies need a database opened through github.com/jackc/pgx/v5/stdlib, not a %T", dc)
		}
		cfg = c.Conn().Config().Copy()
		return nil
	})
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = ListenerName
	delete(cfg.RuntimeParams, "session_replication_role")
	cfg.Tracer = nil
	cfg.OnNotification = nil // db's connection's: the listener buffers its own
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	return cfg, nil
}

// Close stops a cached store's listening connection and drops its copies
// (the heartbeat row is shared: it stays). It closes the *sql.DB only when
// the store owns it (WithOwnedDB).
func (s *Store) Close() error {
	if s.cache != nil {
		s.stop()
		<-s.done
	}
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// ErrNoTrigger is wrapped by the error of New with copies, and of a listening
// session, when a notify trigger of the circuits table is missing, or is not
// enabled ALWAYS (Migrate creates both and enables them so): without its
// notifications, copies could not be kept.
var ErrNoTrigger = errors.New("sqlstore: the circuits table's notify triggers cannot vouch for copies")

// errNoBeat ends a listening session whose heartbeats stopped coming back.
var errNoBeat = errors.New("sqlstore: no heartbeat came back through trigger circuitgen_notify")

// errShared ends a listening session before its LISTEN, when its server
// connection is handed to other clients between statements (shared).
var errShared = errors.New("sqlstore: copies are off: the listening connection has no server session of its own (a pooler in transaction mode or statement mode), where a LISTEN would outlive it and send notifications to other clients; open the store without copies (cache=off)")

// triggerQuery lists the notify triggers on circuits and how each is
// enabled (pg_trigger.tgenabled: A always, O origin sessions only, R
// replica sessions only, D disabled).
const triggerQuery = `SELECT coalesce(string_agg(tgname::text || ' ' || tgenabled::text, ',' ORDER BY tgname), '')
FROM pg_trigger WHERE tgrelid = 'circuits'::regclass AND tgname IN ('circuitgen_notify', 'circuitgen_notify_truncate')`

// triggerError returns nil when states, triggerQuery's answer, has every
// notify trigger enabled ALWAYS, and otherwise an error wrapping
// ErrNoTrigger that names the first that is not and says how it is.
func triggerError(states string) error {
	enabled := map[string]string{}
	for _, st := range strings.Split(states, ",") {
		if name, how, ok := strings.Cut(st, " "); ok {
			enabled[name] = how
		}
	}
	for _, name := range notifyTriggers {
		var why string
		switch enabled[name] {
		case "A":
			continue
		case "":
			why = "is missing"
		case "D":
			why = "is disabled"
		case "O":
			why = "fires only for sessions in the origin role, not for writes under session_replication_role = replica"
		case "R":
			why = "fires only for sessions in the replica role"
		default:
			why = fmt.Sprintf("is enabled as %q", enabled[name])
		}
		return fmt.Errorf("%w: trigger %s on circuits %s (Migrate creates it and enables it ALWAYS)", ErrNoTrigger, name, why)
	}
	return nil
}

// checkTrigger returns an error wrapping ErrNoTrigger when the database
// answers that a notify trigger is missing or not enabled ALWAYS. Any
// other answer is left to the listening goroutine and to Load.
func (s *Store) checkTrigger(ctx context.Context) error {
	var states string
	if err := s.db.QueryRowContext(ctx, triggerQuery).Scan(&states); err != nil {
		return nil
	}
	return triggerError(states)
}

// listener keeps a cached store's listening connection.
type listener struct {
	c      *copies.Cache
	db     *sql.DB // writes the heartbeats: a session other than the listening one
	cfg    *pgx.ConnConfig
	bound  time.Duration
	report func(error) // hears why a session ended
	pooled bool        // a session found errShared: no session LISTENs again
}

// loop keeps the listening connection until ctx ends: one session after
// another, every copy dropped between two, with pauses that grow while
// sessions keep failing (copies.Cache.Keep).
func (l *listener) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	l.c.Keep(ctx, l.bound, func(ctx context.Context) error {
		err := l.session(ctx)
		if ctx.Err() == nil {
			l.report(err)
		}
		return err
	})
}

// The heartbeat of every cached store on a database is one shared row,
// tickName, whose writes the trigger announces on tickChannel with the
// row's incarnation column as the payload: the writing transaction's id
// (pg_current_xact_id). A NOTIFY wakes every listening session of the
// database, whatever its channel (PostgreSQL signals them all and each
// reads the queue), so a row per store, each written a few times a second,
// would cost the server a wake-up per store per write of any store: N²
// for N stores. The shared row is written at most once per tickGap,
// whoever asks, and each store's heartbeat otherwise only reads the
// database's snapshot.
const (
	tickName    = beatPrefix + "tick"
	tickChannel = beatChannel + "tick"
)

// tickGap is the least time between two writes of the shared heartbeat row
// that a heartbeat asks for, for a stall bound: a quarter of it in a busy
// process, half in an idle one (copies.Cache.Busy). An idle fleet wakes
// each listener at most twice a bound; a heartbeat is vouched for within
// tickGap and a sixteenth of the bound (session).
func tickGap(bound time.Duration, busy bool) time.Duration {
	if busy {
		return bound / 4
	}
	return bound / 2
}

// beatStmt is a store's heartbeat ($1 tickName, $2 tickGap in
// microseconds): it writes the shared row if no write is younger than $2
// by the database's clock, and returns how many rows it wrote, its
// snapshot (pg_current_snapshot) and how the notify triggers are enabled.
// A notification on tickChannel whose writer the snapshot does not see
// (pg_visible_in_snapshot would say false: its own write, or one that
// committed after the snapshot was taken, so after the heartbeat was sent)
// vouches for the heartbeat's send time: every notification committed
// before it precedes its own in the queue (PostgreSQL queues them in
// commit order), and the session receives them in queue order.
const beatStmt = `WITH w AS (
	INSERT INTO circuits (name, state, failure_count, generation, incarnation, version, updated_at)
	VALUES ($1, 'closed', 0, 1, pg_current_xact_id()::text, 1, now())
	ON CONFLICT (name) DO UPDATE SET
		incarnation = excluded.incarnation, version = circuits.version + 1, updated_at = excluded.updated_at
	WHERE circuits.updated_at <= now() - $2 * interval '1 microsecond'
	RETURNING 1)
SELECT (SELECT count(*) FROM w), pg_current_snapshot()::text, (` + triggerQuery + `)`

// staleBeats deletes heartbeat rows not written for an hour: the shared row
// of a database no store listened to for an hour.
const staleBeats = `DELETE FROM circuits WHERE starts_with(name, '` + beatPrefix + `') AND updated_at < now() - interval '1 hour'`

// snapshot is a PostgreSQL snapshot (pg_snapshot's text form
// "xmin:xmax:xip,..."): the transactions committed when it was taken are
// those below xmax other than xip's.
type snapshot struct {
	xmax uint64
	xip  []uint64
}

func parseSnapshot(s string) (snapshot, bool) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return snapshot{}, false
	}
	xmax, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return snapshot{}, false
	}
	sn := snapshot{xmax: xmax}
	if f[2] != "" {
		for _, x := range strings.Split(f[2], ",") {
			id, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return snapshot{}, false
			}
			sn.xip = append(sn.xip, id)
		}
	}
	return sn, true
}

// after reports whether a transaction xid, known to have committed, had not
// when sn was taken.
func (sn snapshot) after(xid uint64) bool { return xid >= sn.xmax || slices.Contains(sn.xip, xid) }

// beat is a heartbeat awaiting its vouching: sent at sent (Clock), with
// the snapshot its statement read.
type beat struct {
	sent int64
	snap snapshot
}

// shared returns errShared when conn has no server connection of its own,
// and for good once it has: behind a pooler in transaction or statement
// mode, conn's statements meet other server connections, and another
// client's statement, one of db's, may meet conn's. A direct or
// session-pooled conn keeps one, that no other client meets, so shared
// never errs there. A pooler may still hide it, by chance, sharedTries
// times in a row: then the heartbeat, never vouched for, ends the session,
// which leaves by UNLISTEN.
func (l *listener) shared(ctx context.Context, conn *pgx.Conn) error {
	var first uint32
	for i := 0; i < sharedTries && !l.pooled; i++ {
		var pid, other uint32
		if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		if err := l.db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&other); err != nil {
			return err
		}
		if i == 0 {
			first = pid
		}
		l.pooled = pid != first || other == first
	}
	if l.pooled {
		return errShared
	}
	return nil
}

// sharedTries is how many times shared asks when a session begins, two
// round trips each: a pooler handing out server connections in turn
// (pgbouncer's server_round_robin) or a busy one hides itself from each
// with a chance well under one in two.
const sharedTries = 5

// session connects, LISTENs, and then sends its heartbeat (beatStmt) once
// a bound while the process is idle, twice while it is busy
// (copies.Cache.Beat), on a connection of the store's pool: a write's
// notification reaches the listening connection only when that connection
// holds a session of its own. Behind a pooler in transaction mode it does
// not: shared finds that before the LISTEN, which would stay on the pooled
// server connection; else no heartbeat is vouched for. Either way the
// store serves no copies. A heartbeat that found the shared row written less
// than tickGap ago, and is not vouched for by tickGap and a sixteenth of
// the bound later, is sent again at once: that one writes the row, unless
// another store just has. Copies are good until the send time of the last
// heartbeat vouched for plus the bound: the cache goes live with the first,
// and the session ends (every copy dropped) when one has not been vouched
// for within the bound, when a trigger is missing or not enabled ALWAYS,
// or when the connection fails.
func (l *listener) session(ctx context.Context) error {
	bound, token := l.bound, l.c.Session()
	cctx, cancel := context.WithTimeout(ctx, bound)
	conn, err := pgx.ConnectConfig(cctx, l.cfg)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	bounded := func(f func(context.Context) error) error {
		cctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		return f(cctx)
	}
	if err := bounded(func(ctx context.Context) error { return l.shared(ctx, conn) }); err != nil {
		return err
	}
	var states string
	if err := bounded(func(ctx context.Context) error { return conn.QueryRow(ctx, triggerQuery).Scan(&states) }); err != nil {
		return err
	}
	if err := triggerError(states); err != nil {
		return err
	}
	defer func() {
		// A pooler shared missed keeps a LISTEN on its server connection
		// past this session; leave it, as far as the pooler lets.
		cctx, cancel := context.WithTimeout(context.Background(), bound/4)
		defer cancel()
		_, _ = conn.Exec(cctx, "UNLISTEN *")
	}()
	for _, q := range []string{"LISTEN " + channel, "LISTEN " + tickChannel, staleBeats} {
		if err := bounded(func(ctx context.Context) error { _, err := conn.Exec(ctx, q); return err }); err != nil {
			return err
		}
	}
	var (
		pending  []beat // heartbeats not vouched for yet, oldest first
		vouched  int64  // send time of the last heartbeat vouched for
		nextBeat int64
		again    int64 = -1 // when to send a heartbeat again that read a recent write, -1 for never
		up       bool
	)
	for {
		now := l.c.Clock()
		if now >= nextBeat || again >= 0 && now >= again {
			sent, busy := now, l.c.Busy(bound)
			gap := int64(tickGap(bound, busy))
			var (
				wrote int64
				snap  string
			)
			if err := bounded(func(ctx context.Context) error {
				return l.db.QueryRowContext(ctx, beatStmt, tickName, gap/int64(time.Microsecond)).Scan(&wrote, &snap, &states)
			}); err != nil {
				l.c.Down()
				return fmt.Errorf("sqlstore: write the heartbeat: %w", err)
			}
			if err := triggerError(states); err != nil {
				l.c.Down()
				return err
			}
			again = -1
			if sn, ok := parseSnapshot(snap); ok {
				pending = append(pending, beat{sent, sn})
				if wrote == 0 {
					again = sent + gap + int64(bound/16)
				}
			}
			nextBeat = sent + int64(bound)
			if busy {
				nextBeat = sent + int64(bound/2)
			}
			now = l.c.Clock()
		}
		if len(pending) > 0 && now-pending[0].sent > int64(bound) {
			l.c.Down()
			return fmt.Errorf("%w within %v: copies dropped (a slow link, a trigger that does not fire, or a pooler in transaction mode between the store and the database: then open the store without copies, cache=off)", errNoBeat, bound)
		}
		wake := nextBeat
		if again >= 0 {
			wake = min(wake, again)
		}
		if len(pending) > 0 {
			wake = min(wake, pending[0].sent+int64(bound)+1)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Duration(max(wake-now, 1)))
		note, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil && note == nil:
		case err == nil && note.Channel == channel:
			if note.Payload == "" {
				l.c.InvalidateAll()
			} else {
				l.c.InvalidateKey(note.Payload)
			}
		case err == nil && note.Channel == tickChannel:
			xid, perr := strconv.ParseUint(note.Payload, 10, 64)
			if perr != nil {
				continue
			}
			kept := pending[:0]
			for _, b := range pending {
				if b.snap.after(xid) {
					vouched = max(vouched, b.sent)
					continue
				}
				kept = append(kept, b)
			}
			if len(kept) == len(pending) {
				continue // vouches for no heartbeat of this session's
			}
			pending = kept
			if len(pending) == 0 {
				again = -1
			}
			if !up {
				up = true
				l.c.Up(token)
				l.report(nil) // live: a reason that comes back is reported again
			}
			l.c.Heard(vouched, bound)
		case err == nil:
		case pgconn.Timeout(err):
		default:
			l.c.Down()
			return fmt.Errorf("sqlstore: listen: %w", err)
		}
	}
}

// bound is one circuit of a Store, and its copy.
type bound struct {
	s     *Store
	name  string
	entry *copies.Entry // nil without a cache
	last  *lost.Last    // the latest revision this process saw (lost)
	seen  atomic.Bool   // this process last found a row, not a clear (lost)
}

// Bind returns the named circuit of the store, for the Breaker to keep.
func (s *Store) Bind(name string) driver.BoundStore {
	b := &bound{s: s, name: name, last: new(lost.Last)}
	if s.cache != nil {
		b.entry = s.cache.Entry(name)
	}
	return b
}

// Load is Store.Load, except that a cached store returns the circuit's
// copy, if it has one, and the zero Time, without a round trip.
func (b *bound) Load(ctx context.Context) (*driver.Record, time.Time, error) {
	if b.entry != nil {
		if rec, ok := b.entry.Copy(); ok && b.s.cache.Fresh() {
			return rec, time.Time{}, nil
		}
	}
	var r copies.Reading
	if b.entry != nil {
		r = b.s.cache.Begin(b.entry)
	}
	seen := b.last.Begin()
	rec, now, cleared, err := b.s.load(ctx, b.name)
	switch {
	case err != nil:
	case rec != nil && rec.State == driver.StateClosed && lost.Older(rec, seen):
		rec, now, err = b.lost(ctx, now, rec)
	case rec == nil && !cleared && (b.seen.Load() || b.entry != nil && b.entry.Created()):
		// A row this process read or wrote, or whose creation the database
		// told it of (its copy of none invalidated), is gone.
		rec, now, err = b.lost(ctx, now, nil)
	default:
		if b.entry != nil && (rec != nil || cleared) {
			b.entry.Found(r)
		}
		if found := rec != nil; b.seen.Load() != found {
			b.seen.Store(found) // a clear: the circuit has no row, and lost none
		}
		b.last.Saw(rec)
	}
	if err == nil && b.entry != nil {
		b.s.cache.Saw(now)
		b.s.cache.Install(b.entry, r, rec)
	}
	return rec, now, err
}

// lost handles a circuit whose state the database lost: a closed row
// older than one this process saw (lost.Older: an earlier version of its
// incarnation, or a row of another incarnation written earlier; the
// database was rolled back, by a restore or a failover to a replica that
// had not caught up), or no row and no clear where this
// process last found one (the row was deleted by hand, the table
// truncated, the database recreated). The circuit's state is unknown, not
// closed: lost reports the loss (driver.ErrLost) and replaces what it found
// (stale, or nil for no row) with lost.Unknown, unless another process
// wrote first, so that the next call anywhere is a probe. It returns the
// row it wrote, or the one read anew after another process's write; a row
// lost again meanwhile is made unknown again, a few times, and is never
// returned as no row: that would admit calls as closed.
func (b *bound) lost(ctx context.Context, now time.Time, stale *driver.Record) (*driver.Record, time.Time, error) {
	what := "is gone, though the circuit was not cleared: the row was deleted, the table truncated or the database recreated"
	if stale != nil {
		what = fmt.Sprintf("is older than one this process saw (it holds version %d of incarnation %s, written %s): the database was rolled back", stale.Version, stale.Incarnation, stale.UpdatedAt.Format(time.RFC3339Nano))
	}
	b.s.reports.Send(fmt.Errorf("%w: sqlstore: the row of circuit %q %s; the circuit is treated as unknown, its next call a probe",
		driver.ErrLost, b.name, what))
	rec, at, err := lost.MakeUnknown(b.name, now, stale, b.last, driver.NewID,
		func(prev, next *driver.Record) error { return b.s.Replace(ctx, b.name, prev, next) },
		func() (*driver.Record, time.Time, bool, error) {
			rec, at, cleared, err := b.s.load(ctx, b.name)
			return rec, at, rec == nil && !cleared, err
		})
	if errors.Is(err, lost.ErrLostAgain) {
		err = fmt.Errorf("sqlstore: the row of circuit %q: %w", b.name, err)
	}
	if err != nil {
		return nil, at, err
	}
	b.seen.Store(rec != nil)
	return rec, at, nil
}

var _ driver.Clock = (*Store)(nil)

// Now returns the database's time as the store's latest read returned it,
// carried forward on the local monotonic clock (driver.Clock): the time
// of the Breaker's decisions on copies, which come without the database's
// time (the bucket of a window count). A store without copies, or before
// its first read, returns the local wall clock; its Loads return the
// database's time.
func (s *Store) Now() time.Time {
	if s.cache == nil {
		return time.Now()
	}
	return s.cache.Now()
}

// Replace is Store.Replace, except that a cached store refuses a prev that
// its Load served from a copy: it drops the copy and returns
// driver.ErrConflict without a round trip, so that the Breaker decides
// again on the row and the time the database gives.
func (b *bound) Replace(ctx context.Context, prev, next *driver.Record) error {
	if b.entry != nil {
		if b.s.cache.IsCopy(prev) {
			b.entry.Drop()
			return driver.ErrConflict
		}
		defer b.entry.Drop() // this process sees its own write at once
	}
	err := b.s.Replace(ctx, b.name, prev, next)
	if err == nil {
		if !b.seen.Load() {
			b.seen.Store(true)
		}
		b.last.Saw(next)
	}
	return err
}

// Delete is Store.Delete.
func (b *bound) Delete(ctx context.Context) error {
	if b.entry != nil {
		defer b.entry.Drop()
	}
	err := b.s.Delete(ctx, b.name)
	if err == nil {
		b.seen.Store(false)
	}
	return err
}

// Notify adds a function for the store to call with what it finds about
// its database that an operator must hear of (driver.Notifier): a notify
// trigger missing or not enabled ALWAYS, heartbeats that do not come back
// (errors wrapping ErrNoTrigger), copies off because the server refused
// the listening session or its heartbeat, a row rolled back
// (driver.ErrLost).
// circuit.New calls it once for each Breaker over the store.
func (s *Store) Notify(report func(error)) { s.reports.Add(report) }

// reportSession passes on why a listening session ended, when it is a
// trigger's state, a heartbeat that did not come back, or an error the
// server answered (a read-only database, a standby, a missing grant):
// copies are off. It says so once until the reason changes or a session
// goes live (nil); a failed connection or round trip, which the calls meet
// too, is not reported.
func (s *Store) reportSession(err error) {
	var pe *pgconn.PgError
	switch {
	case err == nil: // the session went live
	case errors.Is(err, ErrNoTrigger), errors.Is(err, errNoBeat), errors.Is(err, errShared):
	case errors.As(err, &pe):
		err = fmt.Errorf("sqlstore: copies are off, every Load reads the database: %w", err)
	default:
		return
	}
	s.reports.SendChange(err)
}
