// Package pgxdb guards a pgx v5 pool: QueryRow's error comes at Scan,
// which settles the call, and a catalog streams rows as an
// iter.Seq2[T, error].
package pgxdb

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:generate go tool circuitgen

// Pool is the part of *pgxpool.Pool this package calls (written by
// circuitgen init -source github.com/jackc/pgx/v5/pgxpool.Pool, then cut).
//
//circuitgen:guard circuit=postgres threshold=3 cooldown=1m errors=*pgconn.ConnectError,context.DeadlineExceeded
type Pool interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
}

var _ Pool = (*pgxpool.Pool)(nil)

// Catalog streams the numbers of a series, as rows of PostgreSQL.
//
//circuitgen:guard circuit=postgres-catalog threshold=3 cooldown=1m errors=*pgconn.ConnectError,context.DeadlineExceeded
type Catalog interface {
	// Numbers streams 1..n.
	Numbers(ctx context.Context, n int) iter.Seq2[int, error]
	// Ints sends a query returning one integer column, then streams its
	// rows: an error at open comes with the iterator, a later one in it.
	Ints(ctx context.Context, sql string, args ...any) (iter.Seq2[int, error], error)
}

// PoolCatalog is a Catalog over a pool.
type PoolCatalog struct{ Pool *pgxpool.Pool }

// Numbers streams 1..n from generate_series; the first error ends it.
func (c PoolCatalog) Numbers(ctx context.Context, n int) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		seq, err := c.Ints(ctx, "SELECT generate_series(1, $1)", n)
		if err != nil {
			yield(0, err)
			return
		}
		for v, err := range seq {
			if !yield(v, err) {
				return
			}
		}
	}
}

// Ints sends sql, then streams its integer column; the first error ends it.
func (c PoolCatalog) Ints(ctx context.Context, sql string, args ...any) (iter.Seq2[int, error], error) {
	rows, err := c.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return func(yield func(int, error) bool) {
		defer rows.Close()
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				yield(0, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(0, err)
		}
	}, nil
}
