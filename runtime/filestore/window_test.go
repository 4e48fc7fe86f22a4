package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
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
	if got, want := ca.Counts(e, 100), (driver.Counts{Calls: 2, Failures: 1}); got != want {
		t.Errorf("counts seen through one store = %+v, want %+v (both stores' calls)", got, want)
	}
	other, _ := a.WindowCells("payments", time.Minute)
	span, _ := a.WindowCells("billing-api", time.Hour)
	if other == ca || span == ca || other.Counts(e, 100) != (driver.Counts{}) {
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
			s := spoiled(t, windowName, spoil)
			if _, err := s.WindowCells("billing-api", time.Minute); err == nil || !strings.Contains(err.Error(), "window") {
				t.Errorf("WindowCells over a %s window file = %v, want an error naming it", name, err)
			}
		})
	}
}

// spoiled opens a store whose directory holds, as its window file name, what
// spoil makes.
func spoiled(t *testing.T, name string, spoil func(path string) error) *Store {
	t.Helper()
	d := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := spoil(filepath.Join(d, name)); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(d)
	return s
}

// TestCallCellsShared checks that two stores on one directory count the
// windows of the last calls in the same cells, in a file of their own, that
// each circuit and window length has cells of its own, and that a count
// window file that is not one is refused, the time window's included.
func TestCallCellsShared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a, _ := Open(dir)
	b, _ := Open(dir)
	ca, err := a.CallCells("billing-api", 4)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.CallCells("billing-api", 4)
	if err != nil {
		t.Fatal(err)
	}
	const e = 5<<32 | 1
	for _, failure := range []bool{true, true, false, true, false, true} {
		ca.Add(e, 4, failure)
		cb.Add(e, 4, failure)
	}
	if got, want := cb.Counts(e, 4), (driver.Counts{Calls: 4, Failures: 2}); got != want {
		t.Errorf("counts seen through one store = %+v, want %+v (the last 4 of both stores' calls)", got, want)
	}
	other, _ := a.CallCells("payments", 4)
	longer, _ := a.CallCells("billing-api", 5)
	if other == ca || longer == ca || other.Counts(e, 4) != (driver.Counts{}) {
		t.Error("another circuit or window length shares billing-api's cells")
	}
	for _, name := range []string{callWindowName, windowName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if name == windowName && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("count windows made the time window file: %v", err)
		}
		if name == callWindowName && (err != nil || fi.Size() != int64(callWindowSize) || fi.Mode().Perm() != 0o600) {
			t.Errorf("count window file: %v, %v; want %d bytes, mode 0600", fi, err, callWindowSize)
		}
	}

	for name, spoil := range map[string]func(path string) error{
		"short":              func(p string) error { return os.WriteFile(p, []byte(callWindowMagic), 0o600) },
		"format":             func(p string) error { return os.WriteFile(p, make([]byte, callWindowSize), 0o600) },
		"a time window file": func(p string) error { return createWindow(filepath.Dir(p), p, timeWindows) },
	} {
		t.Run(name, func(t *testing.T) {
			s := spoiled(t, callWindowName, spoil)
			if _, err := s.CallCells("billing-api", 4); err == nil || !strings.Contains(err.Error(), "window") {
				t.Errorf("CallCells over a %s = %v, want an error naming it", name, err)
			}
		})
	}
}
