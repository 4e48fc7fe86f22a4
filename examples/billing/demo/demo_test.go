package demo_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/examples/billing/demo"
)

// TestStory runs the whole demo with real worker processes and checks what
// it promises the reader: the provider is not called while the circuit is
// open, every process sees it open, and exactly one probe reaches the
// provider when six processes race after the cooldown; a receipt lookup is
// answered by the provider while the circuit is closed, and by the
// wrapper's fallback, the receipt cache, while it is open.
func TestStory(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo waits out a 5s cooldown")
	}
	bin := filepath.Join(t.TempDir(), "billing-demo")
	build := exec.Command("go", "build", "-o", bin, "github.com/circuitgen/circuitgen/examples/billing/cmd/billing-demo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	sum, err := demo.Run(context.Background(), &out, demo.Config{Worker: []string{bin, "worker"}})
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	want := []demo.Phase{
		{Name: "healthy", Processes: 1, Calls: 3, OK: 3, ServerHits: 3},
		{Name: "provider failing", Processes: 1, Calls: 3, Failed: 3, ServerHits: 3},
		{Name: "open (this process)", Processes: 1, Calls: 3, Rejected: 3, ServerHits: 0},
		{Name: "open (4 processes)", Processes: 4, Calls: 4, Rejected: 4, ServerHits: 0},
		{Name: "half-open race (6 processes)", Processes: 6, Calls: 6, OK: 1, Rejected: 5, ServerHits: 1},
		{Name: "closed again", Processes: 1, Calls: 3, OK: 3, ServerHits: 3},
	}
	if len(sum.Phases) != len(want) {
		t.Fatalf("%d phases, want %d", len(sum.Phases), len(want))
	}
	for i, w := range want {
		if sum.Phases[i] != w {
			t.Errorf("phase %d = %+v, want %+v", i+1, sum.Phases[i], w)
		}
	}
	for _, line := range []string{"receipt ch_0001: from the provider", "receipt ch_0001: answered from the receipt cache (Cached), the provider not called (hits: 0)", "circuit open", "from=closed to=open", "committed open → half_open", "committed half_open → closed", "Summary"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
}
