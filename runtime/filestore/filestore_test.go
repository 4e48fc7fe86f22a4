//go:build linux

package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

const name = "billing-api"

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

var errDown = errors.New("billing down")

// newClock returns a test clock.
func newClock() *testenv.Clock { return testenv.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) }

// stateDir returns a path for a state directory that does not exist yet.
func stateDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "circuits")
}

func openStore(t *testing.T, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	return s
}

func recordPath(dir, name string) string { return filepath.Join(dir, circuit.Key(name)+".json") }

func lockPath(dir, name string) string { return filepath.Join(dir, circuit.Key(name)+".lock") }

// replaceFile puts data at path the way a writer does, through a rename, so
// that it is a new file (a new inode), whatever any reader has cached.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".test-tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// op returns an operation with the given result that records in *ran that
// it was invoked.
func op(ran *bool, o circuit.Outcome, err error) func(context.Context) (circuit.Outcome, error) {
	return func(context.Context) (circuit.Outcome, error) {
		*ran = true
		return o, err
	}
}

func run(t *testing.T, b *circuit.Breaker, o circuit.Outcome, err error) error {
	t.Helper()
	var ran bool
	return b.Run(t.Context(), name, policy, op(&ran, o, err))
}

func snapshot(t *testing.T, b *circuit.Breaker) circuit.Snapshot {
	t.Helper()
	snap, err := b.Snapshot(t.Context(), name)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return snap
}

// wantStateError fails the test unless err is a *circuit.StateError whose
// Corrupt() is corrupt.
func wantStateError(t *testing.T, err error, corrupt bool) *circuit.StateError {
	t.Helper()
	var se *circuit.StateError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *circuit.StateError", err, err)
	}
	if se.Corrupt() != corrupt {
		t.Fatalf("StateError %v: Corrupt() = %v, want %v", se, se.Corrupt(), corrupt)
	}
	return se
}

// TestOpenCreatesNothing: Open and New create nothing; the first Load (a
// call, or a Snapshot) makes the directory and its change index, which
// let a circuit with no record be served from a copy, and no record.
func TestOpenCreatesNothing(t *testing.T) {
	dir := stateDir(t)
	b := circuit.New(openStore(t, dir))
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Open and New: Lstat(dir) = %v, want it not to exist", err)
	}
	snap := snapshot(t, b)
	if snap.Exists || snap.State != circuit.StateClosed {
		t.Errorf("Snapshot on a missing directory = %+v, want a closed circuit with no record", snap)
	}
	if err := run(t, b, circuit.Success, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("after the first Load: Lstat(dir) = %v, %v; want a 0700 directory", fi, err)
	}
	if recs, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(recs) != 0 {
		t.Fatalf("a healthy call wrote records: %q", recs)
	}
	if _, err := os.Lstat(filepath.Join(dir, "index")); err != nil {
		t.Fatalf("no change index after the first Load: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	for _, tt := range []struct {
		name  string
		umask int
	}{{"Umask0000", 0}, {"Umask0077", 0o077}, {"Umask0022", 0o022}} {
		t.Run(tt.name, func(t *testing.T) {
			old := syscall.Umask(tt.umask)
			defer syscall.Umask(old)

			dir := stateDir(t)
			b := circuit.New(openStore(t, dir))
			if err := run(t, b, circuit.Failure, errDown); !errors.Is(err, errDown) {
				t.Fatalf("first call: Run = %v, want the operation's error", err)
			}
			fi, err := os.Lstat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != fs.ModeDir|0o700 {
				t.Errorf("state directory: mode %v, want %v", fi.Mode(), fs.ModeDir|0o700)
			}
			// The record, its lock, and whatever else the store keeps there.
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, de := range entries {
				fi, err := de.Info()
				if err != nil {
					t.Fatal(err)
				}
				seen[de.Name()] = true
				if fi.Mode() != 0o600 {
					t.Errorf("%s: mode %v, want %v", de.Name(), fi.Mode(), fs.FileMode(0o600))
				}
			}
			for _, path := range []string{recordPath(dir, name), lockPath(dir, name)} {
				if !seen[filepath.Base(path)] {
					t.Errorf("%s was not created", filepath.Base(path))
				}
			}
		})
	}
}

func TestRefuse(t *testing.T) {
	// valid returns a directory holding a valid record for name.
	valid := func(t *testing.T) string {
		dir := stateDir(t)
		if err := run(t, circuit.New(openStore(t, dir)), circuit.Failure, errDown); !errors.Is(err, errDown) {
			t.Fatalf("setup: Run = %v", err)
		}
		return dir
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) (dir string)
	}{
		{"SymlinkedRecord", func(t *testing.T) string {
			elsewhere := valid(t)
			dir := stateDir(t)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(recordPath(elsewhere, name), recordPath(dir, name)); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t)
			b := circuit.New(openStore(t, dir))
			var ran bool
			err := b.Run(t.Context(), name, policy, op(&ran, circuit.Success, nil))
			wantStateError(t, err, false)
			if ran {
				t.Fatal("the operation ran")
			}
		})
	}
}

// TestSymlinkedLockRefusedForFirstFailure: without a record, the first
// failure writes one under the circuit's lock; a lock planted as a symlink
// is refused, and the call's settlement is a *circuit.StateError.
func TestSymlinkedLockRefusedForFirstFailure(t *testing.T) {
	dir := stateDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target.lock")
	if err := os.Symlink(target, lockPath(dir, name)); err != nil {
		t.Fatal(err)
	}
	b := circuit.New(openStore(t, dir))
	var ran bool
	if err := b.Run(t.Context(), name, policy, op(&ran, circuit.Success, nil)); err != nil || !ran {
		t.Fatalf("a healthy call: %v (ran %t), want nil: it takes no lock", err, ran)
	}
	ran = false
	err := b.Run(t.Context(), name, policy, op(&ran, circuit.Failure, errDown))
	if se := wantStateError(t, err, false); !se.Ran || !ran {
		t.Fatalf("the first failure's settlement: %v (ran %t), want a StateError after the run", err, ran)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the lock's symlink was followed: Lstat(target) = %v", err)
	}
}

func TestSymlinkedLockRefusedForProbe(t *testing.T) {
	dir := stateDir(t)
	clk := newClock()
	b := circuit.New(openStore(t, dir), circuit.WithClock(clk.Now))
	for range policy.FailureThreshold {
		_ = run(t, b, circuit.Failure, errDown)
	}
	lock := lockPath(dir, name)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "target.lock"), lock); err != nil {
		t.Fatal(err)
	}
	clk.Advance(policy.Cooldown)
	var ran bool
	err := b.Run(t.Context(), name, policy, op(&ran, circuit.Success, nil))
	wantStateError(t, err, false)
	if ran {
		t.Fatal("the probe ran although its claim could not be recorded")
	}
}

func TestWritesRefusedWhenDirBecomesWritable(t *testing.T) {
	dir := stateDir(t)
	b := circuit.New(openStore(t, dir))
	if err := run(t, b, circuit.Failure, errDown); !errors.Is(err, errDown) {
		t.Fatal(err)
	}
	// The directory becomes writable while a call runs, admitted on the
	// record the Breaker keeps: its settlement must not write into it.
	err := b.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) {
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		return circuit.Failure, errDown
	})
	se := wantStateError(t, err, false)
	if !se.Ran || !errors.Is(err, errDown) {
		t.Fatalf("settling failure: %v, Ran = %v; want Ran and the operation's error reachable", err, se.Ran)
	}
	if err := b.Clear(t.Context(), name); err == nil {
		t.Fatal("Clear in a world-writable directory succeeded")
	}
}

// canonical is a record as the store writes it; the strict decoding cases
// are edits of it.
const canonical = `{"v":1,"name":"billing-api","state":"closed","failures":2,"generation":3,` +
	`"incarnation":"0123456789abcdef0123456789abcdef","version":7,"updated_at":"2030-01-02T03:04:05Z"}` + "\n"

const openRecord = `{"v":1,"name":"billing-api","state":"open","failures":3,"generation":3,` +
	`"incarnation":"0123456789abcdef0123456789abcdef","version":8,"open_until":"2030-01-02T03:04:35Z","updated_at":"2030-01-02T03:04:05Z"}` + "\n"

const halfOpenRecord = `{"v":1,"name":"billing-api","state":"half_open","failures":3,"generation":3,` +
	`"incarnation":"0123456789abcdef0123456789abcdef","version":9,"open_until":"2030-01-02T03:04:35Z",` +
	`"probe_token":"fedcba9876543210fedcba9876543210","lease_until":"2030-01-02T03:04:45Z","updated_at":"2030-01-02T03:04:35Z"}` + "\n"

// edit returns s with old replaced once by new; it panics when old is absent
// so that a stale case cannot pass by accident.
func edit(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic("edit: " + old + " not in record")
	}
	return strings.Replace(s, old, new, 1)
}

func TestValidRecordsDecode(t *testing.T) {
	pretty := func(s string) string {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(s), "", "\t"); err != nil {
			panic(err)
		}
		return buf.String()
	}
	tests := []struct {
		name, data string
		state      circuit.State
	}{
		{"Closed", canonical, circuit.StateClosed},
		{"Open", openRecord, circuit.StateOpen},
		{"HalfOpen", halfOpenRecord, circuit.StateHalfOpen},
		{"NoFinalNewline", strings.TrimSuffix(canonical, "\n"), circuit.StateClosed},
		// decode compares the compacted bytes with the canonical encoding:
		// whitespace between tokens is insignificant in JSON and does not
		// change the record, so a pretty-printed record of canonical
		// content (an operator's viewer saved it) is the same record.
		{"PrettyPrinted", pretty(canonical), circuit.StateClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			replaceFile(t, recordPath(dir, name), []byte(tt.data))
			snap := snapshot(t, circuit.New(openStore(t, dir)))
			if !snap.Exists || snap.State != tt.state || snap.Failures < 2 || snap.Generation != 3 {
				t.Fatalf("Snapshot = %+v, want the record as written", snap)
			}
		})
	}
}

func TestStrictDecoding(t *testing.T) {
	tests := []struct{ name, data string }{
		{"TruncatedJSON", canonical[:len(canonical)/2]},
		{"Empty", ""},
		{"Null", "null\n"},
		{"NotAnObject", "[1]\n"},
		{"TrailingObject", canonical + "{}\n"},
		{"TrailingGarbage", canonical + "x"},
		{"TrailingBrace", strings.TrimSuffix(canonical, "\n") + "}\n"},
		{"UnknownField", edit(canonical, `"failures":2,`, `"failures":2,"extra":1,`)},
		{"DuplicateKey", edit(canonical, `"failures":2,`, `"failures":2,"failures":2,`)},
		{"DuplicateKeyDifferentValue", edit(canonical, `"failures":2,`, `"failures":5,"failures":2,`)},
		{"CaseVariantKey", edit(canonical, `"state"`, `"State"`)},
		{"ReorderedKeys", edit(canonical, `"name":"billing-api","state":"closed"`, `"state":"closed","name":"billing-api"`)},
		{"WrongTypeFailures", edit(canonical, `"failures":2`, `"failures":"2"`)},
		{"WrongTypeGeneration", edit(canonical, `"generation":3`, `"generation":-3`)},
		{"FloatFailures", edit(canonical, `"failures":2`, `"failures":2.0`)},
		{"UnknownState", edit(canonical, `"state":"closed"`, `"state":"ajar"`)},
		{"Version2", edit(canonical, `"v":1`, `"v":2`)},
		{"MissingVersion", edit(canonical, `"v":1,`, ``)},
		{"MissingIncarnation", edit(canonical, `"incarnation":"0123456789abcdef0123456789abcdef",`, ``)},
		{"MissingUpdatedAt", edit(canonical, `,"updated_at":"2030-01-02T03:04:05Z"`, ``)},
		{"ZeroGeneration", edit(canonical, `"generation":3`, `"generation":0`)},
		{"FailuresOutOfRange", edit(canonical, `"failures":2`, `"failures":1001`)},
		{"NonCanonicalTime", edit(canonical, `"2030-01-02T03:04:05Z"`, `"2030-01-02T03:04:05+00:00"`)},
		{"ClosedWithOpenUntil", edit(canonical, `"updated_at"`, `"open_until":"2030-01-02T03:04:35Z","updated_at"`)},
		{"OpenWithoutOpenUntil", edit(openRecord, `"open_until":"2030-01-02T03:04:35Z",`, ``)},
		{"OpenWithProbeToken", edit(openRecord, `"updated_at"`, `"probe_token":"fedcba9876543210fedcba9876543210","updated_at"`)},
		{"HalfOpenWithoutToken", edit(halfOpenRecord, `"probe_token":"fedcba9876543210fedcba9876543210",`, ``)},
		{"HalfOpenWithoutLease", edit(halfOpenRecord, `"lease_until":"2030-01-02T03:04:45Z",`, ``)},
		{"OtherCircuitsRecord", edit(canonical, `"name":"billing-api"`, `"name":"payments-api"`)},
		{"InvalidName", edit(canonical, `"name":"billing-api"`, `"name":"https://billing"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			replaceFile(t, recordPath(dir, name), []byte(tt.data))
			s := openStore(t, dir)
			b := circuit.New(s)
			ctx := t.Context()

			if _, _, err := s.Load(ctx, name); !errors.Is(err, driver.ErrCorrupt) {
				t.Fatalf("Load = %v, want an error matching driver.ErrCorrupt", err)
			}
			var ran bool
			wantStateError(t, b.Run(ctx, name, policy, op(&ran, circuit.Success, nil)), true)
			if ran {
				t.Fatal("the operation ran over a corrupt record")
			}
			_, err := b.Snapshot(ctx, name)
			wantStateError(t, err, true)

			if err := b.Clear(ctx, name); err != nil {
				t.Fatalf("Clear: %v", err)
			}
			if err := b.Run(ctx, name, policy, op(&ran, circuit.Success, nil)); err != nil || !ran {
				t.Fatalf("Run after Clear = %v, ran = %v; want nil, true", err, ran)
			}
			if snap := snapshot(t, b); !snap.Exists || snap.State != circuit.StateClosed || snap.Generation != 1 {
				t.Fatalf("after Clear: %+v, want a fresh closed record", snap)
			}
		})
	}
}

// TestCorruptRecordIsNeverOverwritten corrupts the record while a call
// admitted on it runs: the settlement, which must read the record under
// the lock, reports it as corrupt and leaves it for Clear.
func TestCorruptRecordIsNeverOverwritten(t *testing.T) {
	dir := stateDir(t)
	b := circuit.New(openStore(t, dir))
	if err := run(t, b, circuit.Failure, errDown); !errors.Is(err, errDown) {
		t.Fatal(err)
	}
	garbage := []byte(`{"v":1,"name":"billing-api","sta`)
	err := b.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) {
		replaceFile(t, recordPath(dir, name), garbage)
		return circuit.Failure, errDown
	})
	se := wantStateError(t, err, true)
	if !se.Ran || !errors.Is(err, errDown) {
		t.Fatalf("settling over a corrupt record: %v, Ran = %v; want Ran and the operation's error reachable", err, se.Ran)
	}
	if data, err := os.ReadFile(recordPath(dir, name)); err != nil || !bytes.Equal(data, garbage) {
		t.Fatalf("the corrupt record was changed to %q (%v)", data, err)
	}
	if err := b.Clear(t.Context(), name); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	if err := run(t, b, circuit.Success, nil); err != nil {
		t.Fatalf("Run after Clear: %v", err)
	}
}

func TestIgnoredInClosedConsumesNothing(t *testing.T) {
	dir := stateDir(t)
	b := circuit.New(openStore(t, dir))
	if err := run(t, b, circuit.Failure, errDown); !errors.Is(err, errDown) {
		t.Fatal(err)
	}
	before, err := os.ReadFile(recordPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	unselected := errors.New("not selected")
	for range 2 * policy.FailureThreshold {
		if err := run(t, b, circuit.Ignored, unselected); err != unselected {
			t.Fatalf("Run = %v, want the unselected error unchanged", err)
		}
	}
	after, err := os.ReadFile(recordPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("ignored calls changed the record:\n%s\n%s", before, after)
	}
	if snap := snapshot(t, b); snap.State != circuit.StateClosed || snap.Failures != 1 {
		t.Fatalf("after ignored calls: %v with %d failures, want closed with 1", snap.State, snap.Failures)
	}
	// Ignored calls neither count nor reset: two more failures reach the
	// threshold of three.
	for range policy.FailureThreshold - 1 {
		_ = run(t, b, circuit.Failure, errDown)
	}
	if snap := snapshot(t, b); snap.State != circuit.StateOpen {
		t.Fatalf("after %d failures around ignored calls: %v, want open", policy.FailureThreshold, snap.State)
	}
}

// openBreaker returns a Breaker over a new store, its clock, and the circuit
// opened by policy.FailureThreshold failures.
func openBreaker(t *testing.T) (*circuit.Breaker, *testenv.Clock) {
	t.Helper()
	clk := newClock()
	b := circuit.New(openStore(t, stateDir(t)), circuit.WithClock(clk.Now))
	for range policy.FailureThreshold {
		if err := run(t, b, circuit.Failure, errDown); !errors.Is(err, errDown) {
			t.Fatal(err)
		}
	}
	if snap := snapshot(t, b); snap.State != circuit.StateOpen {
		t.Fatalf("setup: %v, want open", snap.State)
	}
	return b, clk
}

func TestProbeOutcomes(t *testing.T) {
	unselected := errors.New("not selected")
	tests := []struct {
		name         string
		outcome      circuit.Outcome
		err          error
		wantState    circuit.State
		wantFailures int
		wantGenDelta uint64
	}{
		{"Success", circuit.Success, nil, circuit.StateClosed, 0, 1},
		{"Failure", circuit.Failure, errDown, circuit.StateOpen, policy.FailureThreshold + 1, 0},
		{"IgnoredReopensWithoutCounting", circuit.Ignored, unselected, circuit.StateOpen, policy.FailureThreshold, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, clk := openBreaker(t)
			gen := snapshot(t, b).Generation
			clk.Advance(policy.Cooldown + time.Second)
			var ran bool
			if err := b.Run(t.Context(), name, policy, op(&ran, tt.outcome, tt.err)); err != tt.err || !ran {
				t.Fatalf("probe: Run = %v, ran = %v; want %v, true", err, ran, tt.err)
			}
			snap := snapshot(t, b)
			if snap.State != tt.wantState || snap.Failures != tt.wantFailures || snap.Generation != gen+tt.wantGenDelta {
				t.Fatalf("after the probe: %v, %d failures, generation %d; want %v, %d, %d",
					snap.State, snap.Failures, snap.Generation, tt.wantState, tt.wantFailures, gen+tt.wantGenDelta)
			}
			if tt.wantState == circuit.StateOpen {
				if want := clk.Now().Add(policy.Cooldown); !snap.OpenUntil.Equal(want) {
					t.Fatalf("OpenUntil = %v, want a new cooldown until %v", snap.OpenUntil, want)
				}
				err := run(t, b, circuit.Success, nil)
				if !errors.As(err, new(*circuit.OpenError)) {
					t.Fatalf("Run after the probe reopened the circuit = %v, want *circuit.OpenError", err)
				}
			}
		})
	}
}

func TestProbePanicReopens(t *testing.T) {
	b, clk := openBreaker(t)
	clk.Advance(policy.Cooldown)
	func() {
		defer func() {
			if recover() != "boom" {
				t.Fatal("the panic did not propagate")
			}
		}()
		_ = b.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) { panic("boom") })
	}()
	if snap := snapshot(t, b); snap.State != circuit.StateOpen || snap.Failures != policy.FailureThreshold {
		t.Fatalf("after a panicking probe: %v with %d failures, want open with %d", snap.State, snap.Failures, policy.FailureThreshold)
	}
}

func TestStaleSettlementChangesNothing(t *testing.T) {
	ctx := context.Background()
	allow := func(t *testing.T, b *circuit.Breaker) *circuit.Ticket {
		t.Helper()
		tk, err := b.Allow(ctx, name, policy)
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		return tk
	}
	t.Run("EarlierGeneration", func(t *testing.T) {
		clk := newClock()
		b := circuit.New(openStore(t, stateDir(t)), circuit.WithClock(clk.Now))
		old := allow(t, b) // admitted in generation 1
		for range policy.FailureThreshold {
			_ = run(t, b, circuit.Failure, errDown)
		}
		clk.Advance(policy.Cooldown)
		if err := run(t, b, circuit.Success, nil); err != nil {
			t.Fatalf("probe: %v", err)
		}
		want := snapshot(t, b)
		if want.State != circuit.StateClosed || want.Generation != 2 {
			t.Fatalf("after recovery: %+v, want closed in generation 2", want)
		}
		for range policy.FailureThreshold {
			if err := old.Done(circuit.Failure); err != nil {
				t.Fatalf("Done: %v", err)
			}
		}
		if got := snapshot(t, b); got != want {
			t.Fatalf("a call from generation 1 changed generation 2:\n got %+v\nwant %+v", got, want)
		}
	})
	t.Run("ClosedCallCompletesWhileOpen", func(t *testing.T) {
		b := circuit.New(openStore(t, stateDir(t)), circuit.WithClock(newClock().Now))
		_ = run(t, b, circuit.Success, nil) // create the record
		lateFailure, lateSuccess := allow(t, b), allow(t, b)
		for range policy.FailureThreshold {
			_ = run(t, b, circuit.Failure, errDown)
		}
		want := snapshot(t, b)
		if want.State != circuit.StateOpen {
			t.Fatalf("setup: %v, want open", want.State)
		}
		for _, tc := range []struct {
			tk *circuit.Ticket
			o  circuit.Outcome
		}{{lateFailure, circuit.Failure}, {lateSuccess, circuit.Success}} {
			if err := tc.tk.Done(tc.o); err != nil {
				t.Fatalf("Done(%v): %v", tc.o, err)
			}
			if got := snapshot(t, b); got != want {
				t.Fatalf("a closed-admitted %v settled while open changed the record:\n got %+v\nwant %+v", tc.o, got, want)
			}
		}
	})
	t.Run("ProbeWithExpiredLease", func(t *testing.T) {
		b, clk := openBreaker(t)
		clk.Advance(policy.Cooldown)
		first := allow(t, b)
		clk.Advance(policy.ProbeLease) // the first probe's lease expires
		second := allow(t, b)
		if !first.Probe() || !second.Probe() {
			t.Fatal("tickets after the cooldown and after the lease are not probes")
		}
		want := snapshot(t, b)
		if err := first.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
		if got := snapshot(t, b); got != want {
			t.Fatalf("the superseded probe settled:\n got %+v\nwant %+v", got, want)
		}
		if err := second.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
		if got := snapshot(t, b); got.State != circuit.StateClosed {
			t.Fatalf("the current probe's success: %v, want closed", got.State)
		}
	})
	t.Run("TicketFromBeforeClear", func(t *testing.T) {
		b := circuit.New(openStore(t, stateDir(t)))
		_ = run(t, b, circuit.Failure, errDown)
		stale := allow(t, b)
		stale2 := allow(t, b)
		if err := b.Clear(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := stale.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if snap := snapshot(t, b); snap.State != circuit.StateClosed || snap.Failures != 0 {
			t.Fatalf("a ticket from before Clear counted: %+v", snap)
		}
		// A new record (a new incarnation) ignores it as well.
		if err := run(t, b, circuit.Success, nil); err != nil {
			t.Fatal(err)
		}
		want := snapshot(t, b)
		if err := stale2.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if got := snapshot(t, b); got != want || got.Failures != 0 {
			t.Fatalf("a ticket from before Clear counted after it:\n got %+v\nwant %+v", got, want)
		}
	})
}
