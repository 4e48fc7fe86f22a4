package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// echoServer starts a TCP server that writes back every line it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// dial returns a connection through a new proxy to an echo server.
func dial(t *testing.T) (*Proxy, net.Conn, *bufio.Reader) {
	t.Helper()
	p, err := Listen("tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return p, c, bufio.NewReader(c)
}

// roundTrip writes a line and returns how long its echo took.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if got != line+"\n" {
		t.Fatalf("echo %q, want %q", got, line)
	}
	return time.Since(start)
}

// TestDelay checks that a delay applies to each direction: a round trip
// takes twice it, and no less.
func TestDelay(t *testing.T) {
	p, c, r := dial(t)
	if d := roundTrip(t, c, r, "fast"); d > 100*time.Millisecond {
		t.Fatalf("round trip without delay took %v", d)
	}
	p.SetDelay(100 * time.Millisecond)
	if d := roundTrip(t, c, r, "slow"); d < 200*time.Millisecond {
		t.Fatalf("round trip with 100ms each way took %v, want at least 200ms", d)
	}
}

// TestRamp checks that a ramp ends at its target, in steps.
func TestRamp(t *testing.T) {
	p, c, r := dial(t)
	start := time.Now()
	p.Ramp(20*time.Millisecond, 10*time.Millisecond, 100*time.Millisecond)
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("a ramp of 5 steps of 10ms took %v", d)
	}
	if p.Delay() != 100*time.Millisecond {
		t.Fatalf("delay %v after the ramp, want 100ms", p.Delay())
	}
	if d := roundTrip(t, c, r, "ramped"); d < 200*time.Millisecond {
		t.Fatalf("round trip after the ramp took %v, want at least 200ms", d)
	}
}

// TestOrderKeptAsDelayShrinks checks that bytes sent under a long delay
// are not overtaken by bytes sent after the delay shrank.
func TestOrderKeptAsDelayShrinks(t *testing.T) {
	p, c, r := dial(t)
	p.SetDelay(300 * time.Millisecond)
	if _, err := io.WriteString(c, "1\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	p.SetDelay(0)
	for i := 2; i <= 5; i++ {
		if _, err := io.WriteString(c, strconv.Itoa(i)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 5; i++ {
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != strconv.Itoa(i)+"\n" {
			t.Fatalf("line %d: got %q: order not kept", i, got)
		}
	}
}

// TestHold checks a one-way blackhole: with the server's direction held,
// the request reaches the server but no answer comes until it is released,
// and then it comes whole.
func TestHold(t *testing.T) {
	p, c, r := dial(t)
	roundTrip(t, c, r, "warm")
	conns := p.Conns()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want 1", len(conns))
	}
	conns[0].Hold(Down)
	if _, err := io.WriteString(c, "held\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var ne net.Error
	if _, err := r.ReadString('\n'); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read while held: %v, want a timeout", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	conns[0].Release(Down)
	got, err := r.ReadString('\n')
	if err != nil || got != "held\n" {
		t.Fatalf("after release: %q, %v", got, err)
	}
}

// TestPause checks that a pause stops both directions of every connection
// until it ends.
func TestPause(t *testing.T) {
	p, c, r := dial(t)
	roundTrip(t, c, r, "warm")
	p.Pause()
	go func() {
		time.Sleep(200 * time.Millisecond)
		p.Resume()
	}()
	if d := roundTrip(t, c, r, "paused"); d < 150*time.Millisecond {
		t.Fatalf("round trip across a 200ms pause took %v", d)
	}
}

// TestReset checks that a reset ends the client's connection with an
// error, and that new connections are still accepted.
func TestReset(t *testing.T) {
	p, c, r := dial(t)
	roundTrip(t, c, r, "warm")
	if n := p.Reset(); n != 1 {
		t.Fatalf("reset %d connections, want 1", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("read after a reset succeeded")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	roundTrip(t, c2, bufio.NewReader(c2), "again")
}
