package pkgnames

import (
	"context"
	"net/http"
	"time"
)

// Clash has parameters named like the packages and locals the wrapper uses.
//
//circuitgen:guard circuit=clash errors=context.Canceled statuses=503
type Clash interface {
	Packages(context context.Context, circuit string, errors []error, http *http.Request, time time.Duration) (*http.Response, error)
	Locals(g, err, r0, ctx, b, next string) (string, error)
	Target(target, code, ok int, result string) (int, error)
	Outcome(policyClashOutcome int) error
}
