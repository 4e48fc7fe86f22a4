package fakeclient

import (
	"context"
	"errors"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// batch is a Batch whose Send fails, and counts its sends.
type batch[T any] struct{ sends *int }

func (b batch[T]) Add(T) Batch[T] { return b }

func (b batch[T]) Send(context.Context) error {
	*b.sends++
	return &ConnError{Addr: "batch"}
}

// TestGenericBuilderKeepsTheCircuit builds a generic batch on a circuit
// the caller prepared under FailureThreshold 1: Add returns it guarded on
// that circuit, so one failed Send opens it and the next is rejected
// without being sent.
func TestGenericBuilderKeepsTheCircuit(t *testing.T) {
	kit := circuittest.New()
	sends := 0
	g := NewGuardedBatchWithCircuits[int](batch[int]{&sends}, kit.Breaker.Circuit("batch", circuit.Policy{FailureThreshold: 1}))
	var conn *ConnError
	if err := g.Add(1).Add(2).Send(t.Context()); !errors.As(err, &conn) {
		t.Fatalf("first Send = %v, want the *ConnError", err)
	}
	var open *circuit.OpenError
	if err := g.Add(3).Send(t.Context()); !errors.As(err, &open) || sends != 1 {
		t.Fatalf("Send after one failure = %v, %d sends; want the *circuit.OpenError and 1", err, sends)
	}
}
