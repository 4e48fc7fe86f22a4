//go:build linux

package filestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

var hourPolicy = circuit.Policy{FailureThreshold: 1, Cooldown: time.Hour, ProbeLease: time.Minute}

// dropBreaker makes a Breaker over s, runs calls through n circuits
// (opening them when open is set, then calling each once more, which keeps
// its open record with an alarm), and drops it. The returned flag is set
// once the Breaker is garbage collected.
func dropBreaker(t *testing.T, s *filestore.Store, prefix string, n int, open bool) *atomic.Bool {
	ctx := context.Background()
	b := circuit.New(s)
	for i := range n {
		name := prefix + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
		if open {
			_ = b.Run(ctx, name, hourPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errors.New("x") })
		}
		err := b.Run(ctx, name, hourPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
		if open != errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("%s: %v", name, err)
		}
		if open { // once more: the record is kept now, with its alarm
			if err := b.Run(ctx, name, hourPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); !errors.Is(err, circuit.ErrOpen) {
				t.Fatal(err)
			}
		}
	}
	var gone atomic.Bool
	runtime.AddCleanup(b, func(f *atomic.Bool) { f.Store(true) }, &gone)
	return &gone
}

func collected(f *atomic.Bool) bool {
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if f.Load() {
			return true
		}
	}
	return false
}

// TestDroppedBreakerWithAlarmsIsCollected: a Breaker dropped while it keeps
// open records with their alarms (an hour away) is garbage collected, as
// one of healthy circuits is: the alarm clock's timer holds the clock and
// its rejections, not the Breaker.
func TestDroppedBreakerWithAlarmsIsCollected(t *testing.T) {
	s, err := filestore.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	healthy := dropBreaker(t, s, "h", 100, false)
	if !collected(healthy) {
		t.Fatal("control: a dropped Breaker of healthy circuits is not collected")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var flags []*atomic.Bool
	for i := range 3 {
		flags = append(flags, dropBreaker(t, s, string(rune('A'+i)), 30, true))
	}
	kept := 0
	for _, f := range flags {
		if !collected(f) {
			kept++
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("heap after dropping 3 Breakers of 30 open circuits each: +%d KiB", (int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024)
	if kept > 0 {
		t.Fatalf("%d of 3 dropped Breakers with open circuits are still alive: their alarms (an hour away) hold them", kept)
	}
}
