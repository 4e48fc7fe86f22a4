package fakeclient

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// lister is a Lister whose List does what open says, and whose
// iterator yields 1, 2, 3 and counts its ranges.
type lister struct {
	open   func() error // nil: the listing opens
	nilSeq bool         // List returns no iterator and no error
	ranges int
}

func (l *lister) First(ctx context.Context) Row {
	if l.open != nil {
		_ = l.open()
	}
	return nil
}

func (l *lister) List(ctx context.Context) (iter.Seq2[int, error], error) {
	if l.open != nil {
		if err := l.open(); err != nil {
			return nil, err
		}
	}
	if l.nilSeq {
		return nil, nil
	}
	return func(yield func(int, error) bool) {
		l.ranges++
		for i := 1; i <= 3 && yield(i, nil); i++ {
		}
	}, nil
}

// TestListerPanicAtOpen panics in next's List while the circuit is
// half-open: the probe settles as Ignored, as under Run, which reopens
// the circuit; its claim is not held until the lease expires.
func TestListerPanicAtOpen(t *testing.T) {
	kit := circuittest.New()
	g := NewGuardedLister(&lister{open: func() error { panic("boom") }}, kit.Breaker)
	kit.HalfOpen("list")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic at open did not reach the caller")
			}
		}()
		_, _ = g.List(t.Context())
	}()
	kit.RequireState(t, "list", circuit.StateOpen)

	kit.HalfOpen("list") // a row's, likewise
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic at open did not reach the caller")
			}
		}()
		_ = g.First(t.Context())
	}()
	kit.RequireState(t, "list", circuit.StateOpen)
}

// TestListerNilIterator: next returns no iterator and no error, or no
// row; so does the guarded client, and the call is a success.
func TestListerNilIterator(t *testing.T) {
	kit := circuittest.New()
	g := NewGuardedLister(&lister{nilSeq: true}, kit.Breaker)
	kit.HalfOpen("list")
	seq, err := g.List(t.Context())
	if seq != nil || err != nil {
		t.Fatalf("List = (iterator %v, %v), want (nil, nil)", seq != nil, err)
	}
	kit.RequireState(t, "list", circuit.StateClosed)
	kit.HalfOpen("list")
	if row := g.First(t.Context()); row != nil {
		t.Fatal("First over no row returned a row")
	}
	kit.RequireState(t, "list", circuit.StateClosed)
}

// TestListerRangedAgain ranges an iterator again after the circuit
// opened: the range is rejected, with the *circuit.OpenError, and next's
// iterator does not run; ranged again while closed, it runs.
func TestListerRangedAgain(t *testing.T) {
	kit := circuittest.New()
	l := &lister{}
	g := NewGuardedLister(l, kit.Breaker)
	seq, err := g.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sum := func() (n int, err error) {
		for v, err := range seq {
			if err != nil {
				return n, err
			}
			n += v
		}
		return n, nil
	}
	if n, err := sum(); n != 6 || err != nil {
		t.Fatalf("first range: %d, %v; want 6", n, err)
	}
	if n, err := sum(); n != 6 || err != nil || l.ranges != 2 {
		t.Fatalf("second range, closed: %d, %v, next ranged %d times; want 6 and 2", n, err, l.ranges)
	}
	kit.Open("list", time.Minute)
	var open *circuit.OpenError
	if _, err := sum(); !errors.As(err, &open) {
		t.Fatalf("a range on the open circuit: %v, want the *circuit.OpenError", err)
	}
	if l.ranges != 2 {
		t.Errorf("next's iterator ran %d times, want 2: the rejected range ran it", l.ranges)
	}
}
