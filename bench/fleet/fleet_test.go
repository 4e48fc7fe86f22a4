package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMain runs the worker when the test binary is re-executed as one.
func TestMain(m *testing.M) {
	if sock := os.Getenv(envWorker); sock != "" {
		if err := worker(sock); err != nil {
			os.Stderr.WriteString("fleet worker: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFleet is the short form of make fleet: 3 processes × 2 goroutines,
// 100µs operations, a 1 s steady phase and 10 openings each way, checked against issue 16's
// targets: at most 0.01 Redis commands per healthy call with copies, at
// least 100 times fewer than without, every opening seen by every process
// within 50 ms, no call errors, and a healthy call within 2× the file
// store's latency plus the two monotonic clock readings a cached call makes
// (about 20 ns each where the clock is the TSC; over 100 ns on this kind of
// virtual machine's kvm-clock).
func TestFleet(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not on PATH")
		}
		t.Skip("redis-server is not on PATH")
	}
	cfg := config{K: 3, G: 2, Steady: time.Second, Openings: 10, Op: 100 * time.Microsecond}
	r, err := simulate(t.Context(), cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	var md, svg bytes.Buffer
	r.markdown(&md)
	r.chart(&svg)
	t.Logf("\n%s", md.String())
	if !bytes.HasPrefix(svg.Bytes(), []byte("<svg")) {
		t.Errorf("chart: %.80q", svg.String())
	}
	if c := r.on.commandsPerCall(); c > 0.01 {
		t.Errorf("%.6f Redis commands per healthy call with copies, want at most 0.01", c)
	}
	if r.on.commandsPerCall()*100 > r.off.commandsPerCall() {
		t.Errorf("commands per call %.4f without copies, %.6f with: less than 100× fewer", r.off.commandsPerCall(), r.on.commandsPerCall())
	}
	for _, m := range []mode{r.off, r.on} {
		if m.Errors != 0 || m.MissedOpening != 0 {
			t.Errorf("cache %v: %d call errors, %d processes missed an opening", m.Cache, m.Errors, m.MissedOpening)
		}
	}
	if d := percentile(r.on.RoundMax, 100); d > 50*time.Millisecond {
		t.Errorf("an opening took %v to reach every process, want at most 50ms", d)
	}
	if r.cachedNs > 2*r.fileNs+2*r.clockNs {
		t.Errorf("healthy call: %.0f ns cached, %.0f ns on the file store, %.0f ns a clock reading: more than 2× plus two readings", r.cachedNs, r.fileNs, r.clockNs)
	}
}
