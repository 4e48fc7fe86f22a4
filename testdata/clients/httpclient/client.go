// Package httpclient guards net/http's Client, a struct client (its
// interface written by circuitgen init -source net/http.Client, then cut),
// selecting *url.Error: a request its caller cancelled is no failure of
// the provider, although *url.Error carries the cancellation, unless
// context.Canceled is selected.
package httpclient

import (
	"io"
	"net/http"
)

//go:generate go tool circuitgen

// Doer is the part of *http.Client this package calls.
//
//circuitgen:guard circuit=provider threshold=3 cooldown=1m errors=*net/url.Error statuses=502-504
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// CancelCounting is Doer for a provider whose callers' cancellations
// count: it selects context.Canceled.
//
//circuitgen:guard circuit=provider-cancel threshold=3 cooldown=1m errors=*net/url.Error,context.Canceled statuses=502-504
type CancelCounting interface {
	Do(req *http.Request) (*http.Response, error)
}

// Poster posts, as *http.Client does; its fallback answers a 503 too.
//
//circuitgen:guard circuit=poster threshold=3 cooldown=1m errors=*net/url.Error statuses=503 fallback=failed
type Poster interface {
	Post(url, contentType string, body io.Reader) (*http.Response, error)
}

var (
	_ Doer           = (*http.Client)(nil)
	_ CancelCounting = (*http.Client)(nil)
	_ Poster         = (*http.Client)(nil)
)
