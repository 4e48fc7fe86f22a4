package definedfrom

import (
	"io"
	"net/http"
)

// Transport is a type defined from another package's interface.
//
//circuitgen:guard circuit=transport statuses=502-504
type Transport http.RoundTripper

// Body is an alias of another package's interface.
//
//circuitgen:guard circuit=body errors=io.ErrUnexpectedEOF
type Body = io.ReadCloser
