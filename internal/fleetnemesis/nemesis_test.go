//go:build linux

package fleetnemesis

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/faultproxy"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// fleetBound is the stall bound of the workers' stores: the longest a
// copy may be served after the send time of the last heartbeat its server
// answered, and so the documented bound of every opening's reach.
const fleetBound = 500 * time.Millisecond

// fleetWorkers is how many worker processes a run has.
const fleetWorkers = 3

// forcedFor is how long each opening holds its circuit open: each
// circuit is open about a quarter of the time, and closed, with copies,
// the rest.
const forcedFor = time.Second

// duration is how long the faults go on.
func duration(t *testing.T) time.Duration {
	if v := os.Getenv("CIRCUITGEN_FLEET_NEMESIS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("CIRCUITGEN_FLEET_NEMESIS=%q: want a positive duration", v)
		}
		return d
	}
	return 20 * time.Second
}

// kinds returns the fault kinds to inject of those a store has: every one,
// or those of CIRCUITGEN_FLEET_NEMESIS_FAULTS.
func kinds(t *testing.T, all []string) []string {
	v := os.Getenv("CIRCUITGEN_FLEET_NEMESIS_FAULTS")
	if v == "" || v == "all" {
		return all
	}
	var only []string
	for _, k := range strings.Split(v, ",") {
		for _, a := range all {
			if a == k {
				only = append(only, k)
			}
		}
	}
	return only
}

// TestFleetNemesis runs the fleet nemesis on each distributed store.
func TestFleetNemesis(t *testing.T) {
	t.Run("redis", func(t *testing.T) { runFleet(t, newRedisFleet(t)) })
	t.Run("postgres", func(t *testing.T) { runFleet(t, newPostgresFleet(t, "")) })
	t.Run("postgres-pgbouncer-transaction", func(t *testing.T) { runFleet(t, newPostgresFleet(t, "transaction")) })
}

// target is a store's side of a run: its server, how workers reach it
// through the proxy, an opener on the server itself, and its faults.
type target struct {
	name   string
	proxy  *faultproxy.Proxy
	addr   string // the workers' URL or DSN, through the proxy
	prefix string
	opener *circuit.Breaker
	faults map[string]func(t *testing.T, f *fleet) // by kind: inject, wait, heal
}

// fleet is a run in progress.
type fleet struct {
	target
	workers []*worker
}

// worker is a worker process.
type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	hist   string
	stderr strings.Builder
	mu     sync.Mutex // guards stderr
	done   chan struct{}
	err    error
}

func (w *worker) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stderr.Len() < 16<<10 {
		w.stderr.Write(p)
	}
	return len(p), nil
}

// startWorker starts a worker and waits until its store is open.
func startWorker(t *testing.T, tg target, dir string, i int) *worker {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{hist: filepath.Join(dir, fmt.Sprintf("worker-%d", i)), done: make(chan struct{})}
	w.cmd = exec.Command(self, "-test.run=^TestHelperProcessFleetWorker$", "-test.count=1")
	w.cmd.Env = append(os.Environ(), envRole+"=worker", envStore+"="+tg.name, envAddr+"="+tg.addr,
		envPrefix+"="+tg.prefix, envHist+"="+w.hist, envBound+"="+fleetBound.String())
	w.cmd.Stderr = w
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if sc.Text() == "ready" && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
		<-w.done
	})
	select {
	case ok := <-ready:
		if !ok {
			<-w.done
			t.Fatalf("worker %d did not start: %v\n%s", i, w.err, w.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("worker %d not ready after 30s:\n%s", i, w.stderr.String())
	}
	return w
}

// runFleet starts the workers, opens circuits and injects faults for the
// run's duration, then stops the workers and checks their histories.
func runFleet(t *testing.T, tg target) {
	dir := t.TempDir()
	f := &fleet{target: tg}
	for i := range fleetWorkers {
		f.workers = append(f.workers, startWorker(t, tg, dir, i))
	}
	var (
		mu       sync.Mutex
		openings []opening
		faults   []fault
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the opener
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(1000+mrand.IntN(1000)) * time.Millisecond):
			}
			name := fleetCircuits[mrand.IntN(len(fleetCircuits))]
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			sent := mono()
			err := tg.opener.ForceOpen(ctx, name, forcedFor)
			ret := mono()
			cancel()
			if err == nil {
				mu.Lock()
				openings = append(openings, opening{circuit: name, sent: sent, ret: ret, till: sent + int64(forcedFor-10*time.Millisecond)})
				mu.Unlock()
			}
		}
	}()
	enabled := kinds(t, sortedKinds(tg.faults))
	// The faults go on for the run's duration, and until every kind was
	// injected once (on a loaded machine a round takes longer), within
	// twice the duration.
	start, d := time.Now(), duration(t)
	var order []string
	injected := map[string]bool{}
	for len(enabled) > 0 && (time.Since(start) < d || len(injected) < len(enabled) && time.Since(start) < 2*d) {
		if len(order) == 0 { // every kind once, in a random order, then again
			order = append([]string(nil), enabled...)
			mrand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		kind := order[0]
		order = order[1:]
		injected[kind] = true
		began := mono()
		tg.faults[kind](t, f)
		mu.Lock()
		faults = append(faults, fault{kind: kind, start: began, end: mono()})
		mu.Unlock()
		time.Sleep(time.Duration(200+mrand.IntN(600)) * time.Millisecond)
	}
	time.Sleep(3 * forcedFor) // openings with no fault, the copies back
	close(stop)
	wg.Wait()
	for _, w := range f.workers {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.in.Close()
	}
	h := &histories{}
	for i, w := range f.workers {
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("worker %d did not exit within 30s of the end:\n%s", i, w.stderr.String())
		}
		if w.err != nil {
			t.Errorf("worker %d: %v\n%s", i, w.err, w.stderr.String())
		}
		r, err := os.Open(w.hist)
		if err != nil {
			t.Fatal(err)
		}
		err = h.parse(r)
		r.Close()
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	rep := check(h, openings, faults, fleetBound)
	t.Logf("%s (stall bound %v, %d workers × %d goroutines)\n%s", tg.name, fleetBound, fleetWorkers, workerGoroutines, rep)
	for _, v := range rep.violations {
		t.Errorf("%s: %s", v.kind, v.detail)
	}
	for _, k := range enabled {
		if rep.faults[k] == 0 {
			t.Errorf("fault %s was never injected: run longer (CIRCUITGEN_FLEET_NEMESIS)", k)
		}
	}
	if rep.admitted == 0 || len(openings) == 0 {
		t.Errorf("%d calls admitted, %d openings: the run tested nothing", rep.admitted, len(openings))
	}
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
