package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// watcher is a running `circuitctl state -watch` whose standard output is a
// pipe, read a line at a time.
type watcher struct {
	t     *testing.T
	cmd   *exec.Cmd
	lines chan string
}

func startWatch(t *testing.T, args ...string) *watcher {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"state", "-watch"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watcher{t: t, cmd: cmd, lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return w
}

// until reads lines until one satisfies ok, within 10 seconds, and returns
// the lines read.
func (w *watcher) until(what string, ok func(string) bool) []string {
	w.t.Helper()
	var seen []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line, open := <-w.lines:
			if !open {
				w.t.Fatalf("the watch ended before %s:\n%s", what, strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			if ok(line) {
				return seen
			}
		case <-deadline:
			w.t.Fatalf("no %s within 10s:\n%s", what, strings.Join(seen, "\n"))
		}
	}
}

// interrupt sends os.Interrupt and checks that the watch ends with status 0.
func (w *watcher) interrupt() {
	w.t.Helper()
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		w.t.Fatal(err)
	}
	for range w.lines {
	}
	if err := w.cmd.Wait(); err != nil {
		w.t.Fatalf("the watch ended with %v after an interrupt, want status 0", err)
	}
}

func contains(s string) func(string) bool {
	return func(l string) bool { return strings.Contains(l, s) }
}

// TestWatch runs state -watch in a process of its own and changes the
// circuits from the test's process, as an application sharing the store
// would: each change shows, and only changes print again.
func TestWatch(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	b := breakerOn(t, storeURL)
	w := startWatch(t, "-store", storeURL, "billing-api", "payments")
	w.until("the first table", contains("payments     open    3"))

	start := time.Now()
	if err := b.ForceOpen(context.Background(), "billing-api", time.Hour); err != nil {
		t.Fatal(err)
	}
	seen := w.until("the forced circuit", contains("billing-api  open (forced)"))
	if d := time.Since(start); d > 3*watchInterval {
		t.Errorf("the change showed after %v, want within %v", d, 3*watchInterval)
	}
	if strings.Contains(strings.Join(seen, "\n"), clearScreen) {
		t.Error("the watch cleared a screen that is not a terminal")
	}
	if err := b.Clear(context.Background(), "payments"); err != nil {
		t.Fatal(err)
	}
	// payments is left a closed record of a fresh incarnation, generation 1.
	w.until("the cleared circuit", regexp.MustCompile(`^payments +closed +0 +1 +- `).MatchString)

	w.until("the end of the table", func(l string) bool { return l == "" })
	// Nothing changes: nothing more is printed.
	select {
	case line := <-w.lines:
		t.Errorf("printed %q with nothing changed", line)
	case <-time.After(2500 * time.Millisecond):
	}
	w.interrupt()
}

func TestWatchJSON(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	b := breakerOn(t, storeURL)
	w := startWatch(t, "-json", "-store", storeURL)
	read := func(what string, ok func(stateReport) bool) {
		t.Helper()
		w.until(what, func(line string) bool {
			var rep stateReport
			if err := json.Unmarshal([]byte(line), &rep); err != nil {
				t.Fatalf("a line that is not a JSON report: %v\n%s", err, line)
			}
			return ok(rep)
		})
	}
	byName := func(rep stateReport, name string) circuit.Snapshot {
		for _, c := range rep.Circuits {
			if c.Name == name {
				return c
			}
		}
		return circuit.Snapshot{}
	}
	read("the first report", func(rep stateReport) bool {
		return byName(rep, "payments").State.String() == "open" && len(rep.Errors) == 1
	})
	if err := b.ForceOpen(context.Background(), "billing-api", time.Hour); err != nil {
		t.Fatal(err)
	}
	read("the forced circuit", func(rep stateReport) bool { return byName(rep, "billing-api").Forced })
	w.interrupt()
}

// TestWatchTerminal runs state -watch on a pseudo-terminal (util-linux's
// script): the table is redrawn in place, every second.
func TestWatchTerminal(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	cmd := onTerminal(t, ctx, "state -watch -store '"+storeURL+"' payments")
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(out)
	_ = cmd.Wait()
	screens := strings.Split(string(data), clearScreen)[1:]
	if len(screens) < 2 {
		t.Fatalf("%d screens drawn in 2.5s, want at least 2:\n%q", len(screens), data)
	}
	for _, s := range screens {
		if !strings.Contains(s, "Ctrl-C to stop") || !strings.Contains(s, "payments  open") {
			t.Errorf("a screen without the table:\n%s", s)
		}
	}
}
