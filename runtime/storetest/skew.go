package storetest

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// SkewedFlush checks that a flush to ws from a process whose clock is far
// ahead of the server's does not drop the window's current buckets: the
// server drops buckets by its own time. now is the server's time.
func SkewedFlush(t *testing.T, ws circuit.WindowSharer, now time.Time) {
	t.Helper()
	ctx := t.Context()
	const name, w = "billing-api", time.Minute
	const e = 7<<32 | 1
	bk := circuit.Bucket(now, w)
	add := []circuit.BucketCounts{{Bucket: bk, Counts: circuit.Counts{Calls: 3, Failures: 2}}}
	if _, err := ws.ShareWindow(ctx, name, w, e, bk, add); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ShareWindow(ctx, name, w, e, bk+1000, nil); err != nil { // an hour and a half ahead
		t.Fatal(err)
	}
	n, err := ws.ShareWindow(ctx, name, w, e, bk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (circuit.Counts{Calls: 3, Failures: 2}); n != want {
		t.Errorf("after a skewed process's flush the window = %+v, want %+v", n, want)
	}
}
