//go:build linux

package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestNoAlarmsOfUnlistedHandles: Breaker.Circuit with a policy other than
// the name's first handle's returns a new Circuit each time. Code that
// makes its Circuit per request on an open circuit must not grow the heap
// for the whole cooldown: only a name's listed handle sets alarms.
func TestNoAlarmsOfUnlistedHandles(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	b := circuit.New(openDir(t, dir))
	const name = "ledger"
	if ran, _ := failN(ctx, b, name, 3); ran != 3 {
		t.Fatal(ran)
	}
	other := p3
	other.ProbeLease = 20 * time.Second // another policy for the same circuit
	const n = 20000
	heap := func() uint64 {
		var ms runtime.MemStats
		readMem(&ms)
		return ms.HeapAlloc
	}
	rejectAll := func(c func() *circuit.Circuit) uint64 {
		before := heap()
		for range n {
			ran := false
			if err := c().Run(ctx, succeedOp(&ran)); ran || !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("a call on the open circuit: %v, ran %v", err, ran)
			}
		}
		after := heap()
		if after < before {
			return 0
		}
		return after - before
	}
	same := rejectAll(func() *circuit.Circuit { return b.Circuit(name, p3) })
	perHandle := rejectAll(func() *circuit.Circuit { return b.Circuit(name, other) })
	t.Logf("heap growth after %d rejections, GC'd: %d B with the first policy's handle, %d B with a handle per call (%d B a call)",
		n, same, perHandle, perHandle/n)
	if perHandle > 64*n {
		t.Fatalf("%d handles made for %d calls, then dropped, still hold %d B after GC (%d B each): "+
			"their alarms stay set until the cooldown ends", n, n, perHandle, perHandle/n)
	}
}

// alarmCircuits is how many circuits TestAlarmsRingTogether opens, for
// alarmCooldown.
const (
	alarmCircuits = 20000
	alarmCooldown = 3 * time.Second
)

func init() {
	// alarms: opens alarmCircuits circuits (one failure each, a 1s
	// cooldown), makes one more call on each so that its Breaker keeps the
	// open record with its alarm, says "armed", and waits for a line on
	// its input (the parent stops it past every deadline meanwhile). Then,
	// once the alarms have run, it says how many goroutines ran at once at
	// most (sampled every 20us) and the peak of its resident memory.
	helperScripts["alarms"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		ctx := context.Background()
		b := circuit.New(s)
		p := circuit.Policy{FailureThreshold: 1, Cooldown: alarmCooldown, ProbeLease: time.Minute}
		cs := make([]*circuit.Circuit, alarmCircuits)
		for i := range cs {
			cs[i] = b.Circuit(circuitName(i), p)
			if err := cs[i].Run(ctx, failOp); err != errBoom {
				return err
			}
			ran := false
			if err := cs[i].Run(ctx, succeedOp(&ran)); !errors.Is(err, circuit.ErrOpen) {
				return fmt.Errorf("circuit %d: %v (ran %v), want open", i, err, ran)
			}
		}
		hwm0 := vmHWM()
		peak := atomic.Int64{}
		go func() {
			for {
				if n := int64(runtime.NumGoroutine()); n > peak.Load() {
					peak.Store(n)
				}
				time.Sleep(20 * time.Microsecond)
			}
		}()
		say("armed")
		bufio.NewScanner(os.Stdin).Scan()
		time.Sleep(500 * time.Millisecond) // the alarms run
		say("peak %d hwm %d", peak.Load(), vmHWM()-hwm0)
		runtime.KeepAlive(cs)
		return nil
	}
}

// vmHWM returns the process's peak resident set size in KiB (VmHWM).
func vmHWM() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// TestAlarmsRingTogether: a process stopped past the deadlines of many
// open circuits' alarms (SIGSTOP, a paused VM), or whose circuits opened
// together, rings them all at once on resuming: one timer a Breaker, not a
// goroutine an alarm.
func TestAlarmsRingTogether(t *testing.T) {
	sc := startScript(t, "alarms", shmDir(t), "", nil, "")
	sc.expect(t, "armed")
	if err := sc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(alarmCooldown + 500*time.Millisecond) // past every cooldown
	if err := sc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(sc.in, "go\n"); err != nil {
		t.Fatal(err)
	}
	var peak, hwm int64
	if _, err := fmt.Sscanf(sc.expect(t, "peak "), "peak %d hwm %d", &peak, &hwm); err != nil {
		t.Fatal(err)
	}
	sc.wait(t)
	t.Logf("%d open circuits, stopped past their deadlines: %d goroutines at once at most; peak RSS +%d KiB",
		alarmCircuits, peak, hwm)
	if peak > alarmCircuits/10 {
		t.Fatalf("%d goroutines ran at once when %d alarms fired together (time.AfterFunc: one goroutine per alarm); "+
			"peak resident memory grew by %d KiB", peak, alarmCircuits, hwm)
	}
}
