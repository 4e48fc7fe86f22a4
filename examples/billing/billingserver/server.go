// Package billingserver is a small billing provider over real HTTP whose
// health the demo and the tests control: healthy, failing with 503, or slow.
// It counts every request that reaches it.
package billingserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how the server answers.
type Mode int32

const (
	// Healthy answers every request.
	Healthy Mode = iota
	// Failing answers every request with 503 Service Unavailable.
	Failing
	// Flaky answers every other request with 503 Service Unavailable, so
	// that failures never come two in a row.
	Flaky
)

// Server is a running billing provider on a loopback port.
type Server struct {
	URL string

	mode    atomic.Int32
	latency atomic.Int64
	hits    atomic.Int64
	srv     *http.Server
	ln      net.Listener

	mu       sync.Mutex
	charges  int
	receipts map[string][]byte
}

// Start starts a server on 127.0.0.1 with a free port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("billingserver: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// SetMode switches between healthy, failing and flaky.
func (s *Server) SetMode(m Mode) { s.mode.Store(int32(m)) }

// SetLatency makes every answer wait d first.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// Hits is the number of requests that reached the server.
func (s *Server) Hits() int64 { return s.hits.Load() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// ServeHTTP answers the billing API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.hits.Add(1)
	if d := time.Duration(s.latency.Load()); d > 0 {
		time.Sleep(d)
	}
	if m := Mode(s.mode.Load()); m == Failing || m == Flaky && n%2 == 0 {
		http.Error(w, "billing backend unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v1/health":
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	case r.URL.Path == "/v1/charges" && r.Method == http.MethodPost:
		var req struct {
			CustomerID string          `json:"customer_id"`
			Amount     json.RawMessage `json:"amount"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.HasPrefix(req.CustomerID, "declined") {
			http.Error(w, `{"error":"card_declined"}`, http.StatusPaymentRequired)
			return
		}
		s.mu.Lock()
		s.charges++
		id := fmt.Sprintf("ch_%04d", s.charges)
		receipt, _ := json.Marshal(map[string]any{
			"id": id, "customer_id": req.CustomerID, "amount": req.Amount, "created_at": time.Now().UTC(),
		})
		if s.receipts == nil {
			s.receipts = map[string][]byte{}
		}
		s.receipts[id] = receipt
		s.mu.Unlock()
		_, _ = w.Write(receipt)
	case strings.HasPrefix(r.URL.Path, "/v1/charges/") && r.Method == http.MethodGet:
		s.mu.Lock()
		receipt, ok := s.receipts[strings.TrimPrefix(r.URL.Path, "/v1/charges/")]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(receipt)
	case r.URL.Path == "/v1/refunds" && r.Method == http.MethodPost:
		_, _ = w.Write([]byte(`{"id":"re_0001","amount":{"amount":0,"currency":"EUR"}}`))
	case strings.HasPrefix(r.URL.Path, "/v1/customers/") && strings.HasSuffix(r.URL.Path, "/invoices"):
		_, _ = w.Write([]byte(`[{"id":"in_1","amount":{"amount":1200,"currency":"EUR"},"paid":true}]`))
	default:
		http.NotFound(w, r)
	}
}
