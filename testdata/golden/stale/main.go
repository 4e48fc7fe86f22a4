package stale

// New returns the guarded API.
func New(a API) API { return NewGuardedAPI(a, nil) }
