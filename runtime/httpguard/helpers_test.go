package httpguard_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// policy opens a circuit after three failures for ten minutes.
var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 10 * time.Minute, ProbeLease: time.Hour}

var errDown = errors.New("dependency down")

// fixture is a live Breaker over a real file store in a temporary directory.
type fixture struct {
	dir   string
	store *filestore.Store
	b     *circuit.Breaker
	// w makes the fixture's records: b, unless dated moved it.
	w *circuit.Breaker
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	return &fixture{dir: dir, store: store, b: b, w: b}
}

// dated makes the fixture's later records as if written ago: their times
// are that far in the past, so that a page rendered at once, within the
// same second, still shows them as past ("10s ago") and their deadlines as
// less than whole ("in 59m50s").
func (f *fixture) dated(ago time.Duration) {
	f.w = circuit.New(f.store, circuit.WithClock(func() time.Time { return time.Now().Add(-ago) }))
}

// fail runs n failing calls through name under p.
func (f *fixture) fail(t *testing.T, b *circuit.Breaker, name string, p circuit.Policy, n int) {
	t.Helper()
	for range n {
		err := b.Run(context.Background(), name, p, func(context.Context) (circuit.Outcome, error) {
			return circuit.Failure, errDown
		})
		if !errors.Is(err, errDown) {
			t.Fatalf("failing call to %s: %v", name, err)
		}
	}
}

// closed records successful calls, so name has a closed record.
func (f *fixture) closed(t *testing.T, name string, failures int) {
	t.Helper()
	f.fail(t, f.w, name, circuit.Policy{FailureThreshold: failures + 1, Cooldown: time.Minute, ProbeLease: time.Minute}, failures)
	if failures == 0 { // a healthy call writes no record: a Clear writes a closed one
		if err := f.w.Clear(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
}

// open opens name for policy's cooldown.
func (f *fixture) open(t *testing.T, name string) {
	t.Helper()
	f.fail(t, f.w, name, policy, policy.FailureThreshold)
}

// cooledDown leaves name open with its cooldown over a minute ago: ready
// to probe. A Breaker whose clock runs two minutes behind opens it.
func (f *fixture) cooledDown(t *testing.T, name string) {
	t.Helper()
	past := circuit.New(f.store, circuit.WithClock(func() time.Time { return time.Now().Add(-2 * time.Minute) }))
	f.fail(t, past, name, circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Hour}, 1)
}

// halfOpen leaves name half-open with a probe in flight, leased for an hour:
// it cools down, and a call claims the probe and never settles.
func (f *fixture) halfOpen(t *testing.T, name string) {
	t.Helper()
	f.cooledDown(t, name)
	tk, err := f.w.Allow(context.Background(), name, policy)
	if err != nil {
		t.Fatal(err)
	}
	if !tk.Probe() {
		t.Fatalf("%s: the call did not claim the probe", name)
	}
}

// corrupt writes an undecodable record for name.
func (f *fixture) corrupt(t *testing.T, name string) {
	t.Helper()
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, circuit.Key(name)+".json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// send sends req with c and returns the response and its whole body.
func send(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
