package fallbackbody

import "net/http"

// Doer sends requests, as *http.Client does. Its fallback answers a
// failure too: the fallback's request has the body again.
//
//circuitgen:guard circuit=api statuses=503 fallback=failed
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}
