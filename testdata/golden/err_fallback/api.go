package api

import (
	"context"
	"errors"
	"iter"
)

// ErrDown is the provider's outage.
var ErrDown = errors.New("down")

// Row reports its error at Scan.
type Row interface{ Scan(dest ...any) error }

// API asks for fallbacks that cannot be.
//
//circuitgen:guard circuit=api errors=ErrDown fallback=sometimes
type API interface {
	//circuitgen:circuit api fallback=failed
	QueryRow(ctx context.Context, q string) Row
	//circuitgen:circuit api fallback=failed
	Items(ctx context.Context) iter.Seq2[int, error]
	Get(ctx context.Context) error
}
