package circuit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func TestFromFallback(t *testing.T) {
	rejected := &circuit.OpenError{Name: "billing-api"}
	failed := errors.New("connection refused")
	tests := []struct {
		name   string
		ctx    context.Context
		want   error
		wantOK bool
	}{
		{"a caller's context", context.Background(), nil, false},
		{"a rejected call", circuit.WithFallback(context.Background(), rejected), rejected, true},
		{"a failed call", circuit.WithFallback(context.Background(), failed), failed, true},
		{"a nil cause still marks it", circuit.WithFallback(context.Background(), nil), nil, true},
		{"the innermost mark wins", circuit.WithFallback(circuit.WithFallback(context.Background(), failed), rejected), rejected, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := circuit.FromFallback(tt.ctx)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("FromFallback = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	t.Run("the derived context keeps the caller's values and deadline", func(t *testing.T) {
		type key struct{}
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		ctx := circuit.WithFallback(parent, rejected)
		cancel()
		if ctx.Value(key{}) != "v" || ctx.Err() != context.Canceled {
			t.Errorf("derived context: value %v, err %v; want v, context.Canceled", ctx.Value(key{}), ctx.Err())
		}
	})
}
