package policyvalues

import "context"

// API's policy has a rate in percent with a fraction, and durations finer
// than a millisecond.
//
//circuitgen:guard circuit=api statuses=503 rate=33.3% min_calls=10 window=1m slow=1500us
type API interface {
	Get(ctx context.Context) error
	//circuitgen:circuit api-put rate=0.1% slow=2500ns
	Put(ctx context.Context) error
	//circuitgen:circuit api-del rate=7% slow=1ms500us
	Del(ctx context.Context) error
}
