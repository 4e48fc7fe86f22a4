package fallbackreader

import (
	"io"
	"net/http"
)

// Poster posts bodies, as *http.Client does. Its fallback answers a
// failure too, but next may have read a body, which cannot be made
// again: then the failure is returned.
//
//circuitgen:guard circuit=api statuses=503 fallback=failed
type Poster interface {
	Post(url, contentType string, body io.Reader) (*http.Response, error)
	// Upload's body is a ReadCloser.
	Upload(url string, body io.ReadCloser) (*http.Response, error)
	Get(url string) (*http.Response, error)
	// Send's body is a ReadSeeker, which http.NoBody is not.
	Send(url string, body io.ReadSeeker) (*http.Response, error)
}
