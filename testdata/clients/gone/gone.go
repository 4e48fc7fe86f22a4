// Package gone is a provider that went away, for the tests of the clients
// beside it: a TCP listener on loopback that accepts every connection and
// closes it at once, counting them.
package gone

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a listener that closes every connection it accepts.
type Server struct {
	ln    net.Listener
	conns atomic.Int64
}

// Start starts a Server on 127.0.0.1, closed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Conns is the number of connections accepted so far.
func (s *Server) Conns() int64 { return s.conns.Load() }

// Settled waits until no connection has arrived for 100ms (a client's
// attempts for the calls before are done) and returns the count.
func (s *Server) Settled() int64 {
	n := s.conns.Load()
	for {
		time.Sleep(100 * time.Millisecond)
		m := s.conns.Load()
		if m == n {
			return n
		}
		n = m
	}
}
