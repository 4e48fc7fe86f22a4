package bench

import (
	"context"
	"testing"
)

// BenchmarkFallbackHealthy measures the healthy call of BenchmarkClosedSuccess
// (the file store, a closed circuit) through a wrapper without a fallback
// and one with a fallback set, in the same run: the fallback is looked at
// only after the call returned an error, so the two cost the same.
func BenchmarkFallbackHealthy(b *testing.B) {
	ctx := context.Background()
	run := func(opts ...GuardedBackendOption) func(b *testing.B) {
		return func(b *testing.B) {
			br, _, _ := guarded(stores[0].open(b))
			up := NewGuardedBackend(fake{}, br, opts...)
			_, err := up.Get(ctx, 1) // creates the record
			want(b, err, nil)
			for b.Loop() {
				_, err := up.Get(ctx, 1)
				want(b, err, nil)
			}
		}
	}
	runImpls(b, []impl{
		{"without", run()},
		{"with", run(WithBackendFallback(fake{}))},
	})
}

// BenchmarkFallbackRejected measures a call the open circuit rejects, with
// and without a fallback that answers it: the fallback's cost is the
// errors.As on the *circuit.OpenError, the marked context, and its own
// call.
func BenchmarkFallbackRejected(b *testing.B) {
	ctx := context.Background()
	run := func(opts ...GuardedBackendOption) func(b *testing.B) {
		return func(b *testing.B) {
			br, _, _ := guarded(stores[0].open(b))
			down := NewGuardedBackend(fake{err: ErrDown}, br, opts...)
			_, _ = down.Trip(ctx, 1) // opens bench-trip for a day
			for b.Loop() {
				_, _ = down.Trip(ctx, 1)
			}
		}
	}
	runImpls(b, []impl{
		{"without", run()},
		{"with", run(WithBackendFallback(fake{}))},
	})
}
