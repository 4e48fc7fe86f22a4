//go:build linux

package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// hammerPolicies are the rate-rule policies the hammer script runs under,
// by its argument: a window of time, and one of the last calls.
var hammerPolicies = map[string]circuit.Policy{
	windowName:     {FailureRate: 0.5, MinCalls: 100, Window: time.Minute, Cooldown: 10 * time.Minute},
	callWindowName: {FailureRate: 0.5, MinCalls: 100, WindowCalls: 200, Cooldown: 10 * time.Minute},
}

// TestWindowTruncatedUnderRunningProcess: truncating the window file a
// process has mapped and counts in on every call is a StateError in that
// process, never a SIGBUS (in a race-detector build too); while the file is
// not a window file, calls get a StateError that says to remove it, and once
// it is removed they work again.
func TestWindowTruncatedUnderRunningProcess(t *testing.T) {
	for file, p := range hammerPolicies {
		for _, size := range []int64{0, 100} {
			t.Run(fmt.Sprintf("%s/%d", file, size), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "state")
				ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
				if err := circuit.New(openDir(t, dir)).Run(t.Context(), helperCircuit, p, ok); err != nil {
					t.Fatal(err)
				}
				sc := startScript(t, "hammer", dir, file, nil, "")
				sc.expect(t, "ready")
				time.Sleep(50 * time.Millisecond)
				path := filepath.Join(dir, file)
				if err := os.Truncate(path, size); err != nil {
					t.Fatal(err)
				}
				got := sc.next(t)
				if !strings.HasPrefix(got, "state: ") || !strings.Contains(got, "window") {
					t.Errorf("the running process's call after the truncation: %q, want a StateError about the window", got)
				}
				err := circuit.New(openDir(t, dir)).Run(t.Context(), helperCircuit, p, ok)
				var se *circuit.StateError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), "remove it") {
					t.Errorf("a call of another store on the truncated window file: %v, want a StateError saying to remove it", err)
				}
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				sc.expect(t, "ok")
				sc.wait(t) // exit 0: no signal
				t.Logf("%s truncated to %d: %s", file, size, got)
			})
		}
	}
}
