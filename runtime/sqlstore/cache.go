package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/internal/copies"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// DefaultStallBound is how long a cached Store goes without hearing from
// PostgreSQL on its listening connection before it drops every copy.
const DefaultStallBound = time.Second

// channel is the NOTIFY channel of the circuits table's trigger; the
// payload is the circuit's name ("" after a TRUNCATE: every circuit).
const channel = "circuitgen_circuits"

// ListenerName is the application_name of a cached Store's listening
// connection, as pg_stat_activity shows it.
const ListenerName = "circuitgen-invalidations"

// notifySchema creates the trigger that notifies channel of every change
// to a row of circuits, whoever makes it (Migrate runs it on PostgreSQL).
const notifySchema = `CREATE OR REPLACE FUNCTION circuitgen_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		PERFORM pg_notify('` + channel + `', '');
		RETURN NULL;
	END IF;
	IF TG_OP <> 'INSERT' THEN
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
	FOR EACH STATEMENT EXECUTE FUNCTION circuitgen_notify()`

// NewCached is New on PostgreSQL with local copies that the database
// invalidates (see the package documentation): in steady state a healthy
// guarded call makes no round trip. The copies rely on the trigger Migrate
// creates; listen configures the dedicated connection that LISTENs for its
// notifications (the same database and search_path as db). A goroutine
// keeps that connection; until it is up, whenever it is lost, and when
// nothing is heard on it for stallBound (DefaultStallBound when 0), there
// are no copies and every Load reads the database; while sessions keep
// failing, the pause before the next one doubles, from stallBound/4 up to
// 30 s. Close stops it.
//
// NewCached asks the database, for up to stallBound, whether the trigger
// exists, and returns ErrNoTrigger when it answers that it does not.
func NewCached(db *sql.DB, listen *pgx.ConnConfig, stallBound time.Duration) (*Store, error) {
	s, err := New(db, Postgres)
	if err != nil {
		return nil, err
	}
	if stallBound <= 0 {
		stallBound = DefaultStallBound
	}
	cfg := listen.Copy()
	cfg.RuntimeParams["application_name"] = ListenerName
	// A timed-out wait for a notification must leave the connection usable:
	// a deadline, not a cancel request.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	if err := s.checkTrigger(stallBound); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cache, s.stop, s.done = copies.New(), cancel, make(chan struct{})
	go listenLoop(ctx, s.cache, s.done, cfg, stallBound)
	return s, nil
}

// Close stops a cached store's listening connection and drops its copies.
// It does not close the *sql.DB. Close on an uncached store does nothing.
func (s *Store) Close() error {
	if s.cache != nil {
		s.stop()
		<-s.done
	}
	return nil
}

// listenLoop keeps the listening connection until ctx ends: one session
// after another, every copy dropped between two, with pauses that grow
// while sessions keep failing (copies.Cache.Keep).
func listenLoop(ctx context.Context, c *copies.Cache, done chan<- struct{}, cfg *pgx.ConnConfig, bound time.Duration) {
	defer close(done)
	c.Keep(ctx, bound, func(ctx context.Context) error { return listenSession(ctx, c, cfg, bound) })
}

// ErrNoTrigger is NewCached's error when the circuits table has no
// notify trigger (Migrate creates it): without its notifications, copies
// could not be kept.
var ErrNoTrigger = errors.New("sqlstore: the circuits table has no circuitgen_notify trigger (run Migrate)")

// triggerQuery counts the notify triggers on circuits.
const triggerQuery = `SELECT count(*) FROM pg_trigger WHERE tgname = 'circuitgen_notify' AND tgrelid = 'circuits'::regclass`

// checkTrigger returns ErrNoTrigger when the database answers, within
// bound, that the circuits table has no notify trigger. Any other answer
// (no database yet, no table yet) is left to the listening goroutine and
// to Load to report.
func (s *Store) checkTrigger(bound time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var n int
	if err := s.db.QueryRowContext(ctx, triggerQuery).Scan(&n); err == nil && n == 0 {
		return ErrNoTrigger
	}
	return nil
}

// listenSession connects, LISTENs, marks the cache live and applies
// notifications until the connection fails or is silent beyond bound (it
// pings every quarter of it when nothing arrives).
func listenSession(ctx context.Context, c *copies.Cache, cfg *pgx.ConnConfig, bound time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, bound)
	conn, err := pgx.ConnectConfig(cctx, cfg)
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
	var n int
	if err := bounded(func(ctx context.Context) error {
		return conn.QueryRow(ctx, triggerQuery).Scan(&n)
	}); err != nil {
		return err
	}
	if n == 0 {
		return ErrNoTrigger
	}
	if err := bounded(func(ctx context.Context) error { _, err := conn.Exec(ctx, "LISTEN "+channel); return err }); err != nil {
		return err
	}
	c.Up()
	c.Heard(c.Clock(), bound)
	for {
		wctx, cancel := context.WithTimeout(ctx, bound/4)
		note, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			if note.Payload == "" {
				c.InvalidateAll()
			} else {
				c.InvalidateKey(note.Payload)
			}
		case pgconn.Timeout(err):
			if err := bounded(conn.Ping); err != nil {
				c.Down()
				return fmt.Errorf("sqlstore: ping the listening connection: %w", err)
			}
		default:
			c.Down()
			return fmt.Errorf("sqlstore: listen: %w", err)
		}
		c.Heard(c.Clock(), bound)
	}
}

// bound is one circuit of a Store, and its copy.
type bound struct {
	s     *Store
	name  string
	entry *copies.Entry // nil without a cache
}

// Bind returns the named circuit of the store, for the Breaker to keep.
func (s *Store) Bind(name string) circuit.BoundStore {
	if s.cache == nil {
		return &bound{s: s, name: name}
	}
	return &bound{s: s, name: name, entry: s.cache.Entry(name)}
}

// Load is Store.Load, except that a cached store returns the circuit's
// copy, if it has one, and the zero Time, without a round trip.
func (b *bound) Load(ctx context.Context) (*circuit.Record, time.Time, error) {
	if b.entry == nil {
		return b.s.Load(ctx, b.name)
	}
	if rec := b.entry.Copy(); rec != nil && b.s.cache.Fresh() {
		return rec, time.Time{}, nil
	}
	r := b.s.cache.Begin(b.entry)
	rec, now, err := b.s.Load(ctx, b.name)
	if err == nil {
		b.s.cache.Saw(now)
		b.s.cache.Install(b.entry, r, rec)
	}
	return rec, now, err
}

var _ circuit.Clock = (*Store)(nil)

// Now returns the database's time as the store's latest read returned it,
// carried forward on the local monotonic clock (circuit.Clock): the time
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
// circuit.ErrConflict without a round trip, so that the Breaker decides
// again on the row and the time the database gives.
func (b *bound) Replace(ctx context.Context, prev, next *circuit.Record) error {
	if b.entry != nil {
		if b.s.cache.IsCopy(prev) {
			b.entry.Invalidate()
			return circuit.ErrConflict
		}
		defer b.entry.Invalidate() // this process sees its own write at once
	}
	return b.s.Replace(ctx, b.name, prev, next)
}

// Delete is Store.Delete.
func (b *bound) Delete(ctx context.Context) error {
	if b.entry != nil {
		defer b.entry.Invalidate()
	}
	return b.s.Delete(ctx, b.name)
}
