package circuit

import "context"

// fallbackKey is the context key WithFallback stores its cause under.
type fallbackKey struct{}

// fallbackCause is the value WithFallback stores, so that a nil cause
// still marks the context.
type fallbackCause struct{ err error }

// WithFallback returns a context, derived from ctx, marked as the context
// of a fallback answering for a call that did not go through: cause is
// the *OpenError of a rejected call, or the error of a failed one.
// Generated guarded clients call it before they call a fallback.
func WithFallback(ctx context.Context, cause error) context.Context {
	return context.WithValue(ctx, fallbackKey{}, fallbackCause{cause})
}

// FromFallback reports whether ctx is the context of a fallback, and
// why it was called: the *OpenError of a rejected call or the error of a
// failed one. A fallback, or code it calls, uses it to tell that it is
// answering for another implementation.
func FromFallback(ctx context.Context) (cause error, ok bool) {
	c, ok := ctx.Value(fallbackKey{}).(fallbackCause)
	return c.err, ok
}
