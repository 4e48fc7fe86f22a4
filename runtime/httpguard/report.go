package httpguard

import (
	"context"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// StatusReport is the JSON document StatusHandler serves.
type StatusReport struct {
	// GeneratedAt is when the report was made, by this server's clock.
	GeneratedAt time.Time `json:"generated_at"`
	// Circuits are the circuits reported, sorted by name.
	Circuits []circuit.Snapshot `json:"circuits"`
	// Unreadable lists the records the store's listing could not read,
	// one entry per record, each saying what is wrong ("corrupt record",
	// "state unreadable") without the store's internals; circuitctl state
	// names them.
	Unreadable []string `json:"unreadable,omitempty"`
	// Error is set when the list of circuits could not be obtained; it
	// says so without the store's internals.
	Error string `json:"error,omitempty"`
}

// report reads every named circuit. One circuit's error is recorded in its
// entry and does not stop the others.
func report(ctx context.Context, b *circuit.Breaker, names []string, now time.Time) StatusReport {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	rep := StatusReport{GeneratedAt: now.UTC(), Circuits: make([]circuit.Snapshot, 0, len(names))}
	for _, name := range names {
		snap, _ := b.Snapshot(ctx, name) // an error is in snap.Error
		rep.Circuits = append(rep.Circuits, snap)
	}
	return rep
}
