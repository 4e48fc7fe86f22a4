// Package bench measures circuitgen against its peers: sony/gobreaker/v2,
// failsafe-go, a naive file store that locks and reads the record on every
// admission and settlement, and one raw durable file replace. Everything in
// it is test code or generated; see BENCHMARKS.md at the repository root and
// bench/run.sh.
package bench

import (
	"context"
	"errors"
)

//go:generate go tool circuitgen

// ErrDown is the failure every guarded method counts.
var ErrDown = errors.New("backend down")

// Backend is the client interface the benchmarks guard. Each method has its
// own circuit, so that each benchmark row has a policy of its own: the
// wrapper the generator writes for it is what an application would use.
//
//circuitgen:guard wrapper=GuardedBackend errors=ErrDown
type Backend interface {
	// Get is the healthy call: a circuit that stays closed.
	//
	//circuitgen:circuit bench-closed threshold=3 cooldown=30s lease=10s
	Get(ctx context.Context, id int) (int, error)

	// Count is guarded by a circuit whose threshold is never reached in a
	// benchmark: every failure is counted, and written.
	//
	//circuitgen:circuit bench-count threshold=1000 cooldown=1m lease=1m
	Count(ctx context.Context, id int) (int, error)

	// Trip is guarded by a circuit that opens on the first failure and
	// stays open for a day: rejections.
	//
	//circuitgen:circuit bench-trip threshold=1 cooldown=24h lease=1m
	Trip(ctx context.Context, id int) (int, error)

	// Cycle is guarded by a circuit that opens on the first failure for the
	// shortest cooldown: with an injected clock, a half-open cycle.
	//
	//circuitgen:circuit bench-cycle threshold=1 cooldown=1s lease=1s
	Cycle(ctx context.Context, id int) (int, error)
}
