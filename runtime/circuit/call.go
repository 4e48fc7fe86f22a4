package circuit

import "context"

// Call runs op through the named circuit like Breaker.Run, classifying its
// result with classify, and returns op's result. It is the typed form for
// hand-written guarded calls.
func Call[T any](ctx context.Context, b *Breaker, name string, p Policy, classify func(T, error) Outcome, op func(context.Context) (T, error)) (T, error) {
	var v T
	err := b.Run(ctx, name, p, func(ctx context.Context) (Outcome, error) {
		var err error
		v, err = op(ctx)
		return classify(v, err), err
	})
	return v, err
}
