package filestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestWindowCellsShared checks that two stores on one directory (as two
// processes would open it) count in the same cells, that each circuit and
// span has cells of its own, and that a window file that is not one is
// refused rather than misread.
func TestWindowCellsShared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a, _ := Open(dir)
	b, _ := Open(dir)
	ca, err := a.WindowCells("billing-api", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.WindowCells("billing-api", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const e = 5<<32 | 1
	ca.Add(e, 100, true)
	cb.Add(e, 100, false)
	if got, want := ca.Counts(e, 100), (circuit.Counts{Calls: 2, Failures: 1}); got != want {
		t.Errorf("counts seen through one store = %+v, want %+v (both stores' calls)", got, want)
	}
	other, _ := a.WindowCells("payments", time.Minute)
	span, _ := a.WindowCells("billing-api", time.Hour)
	if other == ca || span == ca || other.Counts(e, 100) != (circuit.Counts{}) {
		t.Error("another circuit or span shares billing-api's 1m cells")
	}
	if fi, err := os.Stat(filepath.Join(dir, windowName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("window file: %v, %v; want mode 0600", fi, err)
	}

	for name, spoil := range map[string]func(path string) error{
		"short":   func(p string) error { return os.WriteFile(p, []byte(windowMagic), 0o600) },
		"format":  func(p string) error { return os.WriteFile(p, make([]byte, windowSize), 0o600) },
		"symlink": func(p string) error { return os.Symlink(filepath.Join(dir, "elsewhere"), p) },
	} {
		t.Run(name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := spoil(filepath.Join(d, windowName)); err != nil {
				t.Fatal(err)
			}
			s, _ := Open(d)
			if _, err := s.WindowCells("billing-api", time.Minute); err == nil || !strings.Contains(err.Error(), "window") {
				t.Errorf("WindowCells over a %s window file = %v, want an error naming it", name, err)
			}
		})
	}
}
