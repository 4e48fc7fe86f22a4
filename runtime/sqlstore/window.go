package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The window counts of the rate rule live in the table circuit_windows,
// one row per circuit, window span and bucket, tagged with the window's
// epoch (incarnation hash and generation). Each process flushes its counts
// in batches (driver.WindowSharer): a flush deletes the rows that left the
// window or belong to an earlier epoch, adds its counts, and sums the
// window; on PostgreSQL it also deletes up to 100 rows of any circuit and
// span that left their window (a circuit gone quiet, or counting over
// another span), so that such rows last at most a window and a flush, and
// Delete deletes a circuit's rows with its record. On PostgreSQL that is one call of the function
// circuit_share_window, so one round trip; SQLite is embedded and runs the
// same statements in one transaction. Migrate creates both.
var _ driver.WindowSharer = (*Store)(nil)

const windowSchema = `CREATE TABLE IF NOT EXISTS circuit_windows (
	name      TEXT   NOT NULL,
	span_ms   BIGINT NOT NULL,
	bucket    BIGINT NOT NULL,
	epoch_inc BIGINT NOT NULL,
	epoch_gen BIGINT NOT NULL,
	calls     BIGINT NOT NULL,
	failures  BIGINT NOT NULL,
	PRIMARY KEY (name, span_ms, bucket)
)`

// The statements of a flush, $1 name, $2 span_ms, $3 latest bucket, $4
// epoch_inc, $5 epoch_gen.
const (
	windowDelete = `DELETE FROM circuit_windows WHERE name = $1 AND span_ms = $2
	AND (bucket <= $3 - 10 OR epoch_inc <> $4 OR epoch_gen < $5)`
	windowNewer = `SELECT count(*) FROM circuit_windows WHERE name = $1 AND span_ms = $2 AND epoch_inc = $4 AND epoch_gen > $5 AND $3 = $3`
	windowAdd   = `INSERT INTO circuit_windows AS w (name, span_ms, bucket, epoch_inc, epoch_gen, calls, failures)
	VALUES ($1, $2, $6, $4, $5, $7, $8)
	ON CONFLICT (name, span_ms, bucket) DO UPDATE SET calls = w.calls + excluded.calls, failures = w.failures + excluded.failures`
	windowSum = `SELECT COALESCE(sum(calls), 0), COALESCE(sum(failures), 0) FROM circuit_windows
	WHERE name = $1 AND span_ms = $2 AND bucket > $3 - 10 AND bucket <= $3 AND epoch_inc = $4 AND epoch_gen = $5`
)

// windowFunction is the flush as one PostgreSQL function.
const windowFunction = `CREATE OR REPLACE FUNCTION circuit_share_window(p_name TEXT, p_span BIGINT, p_bucket BIGINT,
	p_inc BIGINT, p_gen BIGINT, p_buckets BIGINT[], p_calls BIGINT[], p_failures BIGINT[],
	OUT calls BIGINT, OUT failures BIGINT) AS $f$
DECLARE
	-- Buckets leave the window by the database's time (a bucket ahead, for
	-- rounding), not by a process's clock, which may be far ahead.
	v_now BIGINT := floor(extract(epoch FROM clock_timestamp()) * 10000 / p_span)::BIGINT + 1;
	v_drop BIGINT := LEAST(p_bucket, v_now);
BEGIN
	DELETE FROM circuit_windows w WHERE w.name = p_name AND w.span_ms = p_span
		AND (w.bucket <= v_drop - 10 OR w.epoch_inc <> p_inc OR w.epoch_gen < p_gen);
	-- Rows of every other circuit and span that left their window by the
	-- database's time (a circuit gone quiet, or counting over another span
	-- now), a bounded number a flush.
	DELETE FROM circuit_windows w WHERE w.ctid IN (SELECT x.ctid FROM circuit_windows x
		WHERE x.bucket <= floor(extract(epoch FROM clock_timestamp()) * 10000 / x.span_ms)::BIGINT - 10
		AND NOT (x.name = p_name AND x.span_ms = p_span) LIMIT 100);
	IF NOT EXISTS (SELECT 1 FROM circuit_windows w WHERE w.name = p_name AND w.span_ms = p_span
			AND w.epoch_inc = p_inc AND w.epoch_gen > p_gen) THEN
		INSERT INTO circuit_windows AS w (name, span_ms, bucket, epoch_inc, epoch_gen, calls, failures)
			SELECT p_name, p_span, u.b, p_inc, p_gen, u.c, u.f FROM unnest(p_buckets, p_calls, p_failures) AS u(b, c, f)
			WHERE u.b > v_drop - 10 AND u.b <= v_now
		ON CONFLICT (name, span_ms, bucket) DO UPDATE SET calls = w.calls + excluded.calls, failures = w.failures + excluded.failures;
	END IF;
	SELECT COALESCE(sum(w.calls), 0), COALESCE(sum(w.failures), 0) INTO calls, failures FROM circuit_windows w
		WHERE w.name = p_name AND w.span_ms = p_span AND w.bucket > p_bucket - 10 AND w.bucket <= p_bucket
		AND w.epoch_inc = p_inc AND w.epoch_gen = p_gen;
END
$f$ LANGUAGE plpgsql`

// ShareWindow adds a process's flushed window counts to the database's and
// returns the window's sums (driver.WindowSharer): one round trip on
// PostgreSQL.
func (s *Store) ShareWindow(ctx context.Context, name string, w time.Duration, e uint64, b int64, add []driver.BucketCounts) (driver.Counts, error) {
	args := []any{name, w.Milliseconds(), b, int64(e >> 32), int64(e & (1<<32 - 1))}
	var calls, failures int64
	var err error
	if s.dialect == Postgres {
		bs, cs, fs := make([]int64, len(add)), make([]int64, len(add)), make([]int64, len(add))
		for i, c := range add {
			bs[i], cs[i], fs[i] = c.Bucket, int64(c.Calls), int64(c.Failures)
		}
		err = s.db.QueryRowContext(ctx, "SELECT calls, failures FROM circuit_share_window($1, $2, $3, $4, $5, $6, $7, $8)",
			append(args, bs, cs, fs)...).Scan(&calls, &failures)
	} else {
		calls, failures, err = s.shareLocal(ctx, args, b, driver.Bucket(time.Now(), w), add)
	}
	if err != nil {
		return driver.Counts{}, fmt.Errorf("sqlstore: window %q: %w", name, err)
	}
	if calls < 0 || failures < 0 {
		return driver.Counts{}, fmt.Errorf("sqlstore: window %q: negative counts", name)
	}
	return driver.Counts{Calls: uint64(calls), Failures: uint64(failures)}, nil
}

// shareLocal is the flush as a transaction, for SQLite. Buckets leave the
// window by the earlier of b and now, the local clock's bucket (one ahead,
// for rounding, as on PostgreSQL); counts of a bucket ahead of it are not
// added.
func (s *Store) shareLocal(ctx context.Context, args []any, b, now int64, add []driver.BucketCounts) (calls, failures int64, err error) {
	drop := min(b, now+1)
	dargs := slices.Clone(args)
	dargs[2] = drop
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err = tx.ExecContext(ctx, windowDelete, dargs...); err != nil {
		return 0, 0, err
	}
	var newer int
	if err = tx.QueryRowContext(ctx, windowNewer, args...).Scan(&newer); err != nil {
		return 0, 0, err
	}
	for _, c := range add {
		if newer > 0 {
			break
		}
		if c.Bucket <= drop-driver.WindowBuckets || c.Bucket > now+1 {
			continue // out of the window; the others are in no order
		}
		if _, err = tx.ExecContext(ctx, windowAdd, append(args, c.Bucket, int64(c.Calls), int64(c.Failures))...); err != nil {
			return 0, 0, err
		}
	}
	if err = tx.QueryRowContext(ctx, windowSum, args...).Scan(&calls, &failures); err != nil {
		return 0, 0, err
	}
	return calls, failures, tx.Commit()
}
