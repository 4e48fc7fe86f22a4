package httpguard

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// recorder is the http.ResponseWriter Middleware hands to the guarded
// handler: it forwards everything and remembers the final status. Unwrap
// lets http.ResponseController reach the underlying writer's features; Flush
// and Hijack are also methods so that handlers that type-assert
// http.Flusher or http.Hijacker keep working.
type recorder struct {
	http.ResponseWriter
	status   int // the final (non-1xx) status written, 0 until then
	hijacked bool
}

// WriteHeader records the first final status and forwards every call,
// informational (1xx) ones included.
func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records the implicit 200 of a body written without WriteHeader.
func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom copies src to the underlying writer, which keeps its own
// ReadFrom (sendfile for a file), recording the implicit 200.
func (w *recorder) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, src)
}

// Flush sends buffered data, committing the implicit 200 status.
func (w *recorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection over to the handler, when the underlying
// writer supports it.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
