//go:build linux

package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func init() {
	// detachedwrite: run as an unprivileged user on a state directory it
	// owns. Two stores (two mappings of the index, as two processes have):
	// reader keeps a closed record in its Breaker; writer opens the circuit.
	// While the writer holds its mapping (temporary record written, counter
	// not yet moved), the state directory has a short permission fault and
	// the writer process's recheck (another goroutine's call) fails, which
	// retires and detaches that mapping; the fault clears and the write goes
	// on, moving its counter in the detached memory.
	helperScripts["detachedwrite"] = func() error {
		ctx := context.Background()
		dir := os.Getenv(envDir)
		reader, err := Open(dir)
		if err != nil {
			return err
		}
		writer, err := Open(dir)
		if err != nil {
			return err
		}
		now := writer.Now()
		rec1 := &driver.Record{Name: "api", State: circuit.StateClosed, Generation: 1,
			Incarnation: driver.FirstIncarnation, Version: 1, UpdatedAt: now}
		if err := writer.Replace(ctx, "api", nil, rec1); err != nil {
			return err
		}
		br := circuit.New(reader)
		p := circuit.Policy{FailureThreshold: 3, Cooldown: 10 * time.Minute, ProbeLease: 10 * time.Second}
		ran := false
		if err := br.Run(ctx, "api", p, succeedOp(&ran)); err != nil || !ran {
			return fmt.Errorf("reader's first call: %v %v", err, ran)
		}
		var once sync.Once
		stepHook = func(step string) {
			if step != "close" {
				return
			}
			once.Do(func() {
				_ = os.Chmod(dir, 0) // the permission fault
				time.Sleep(recheck + 300*time.Millisecond)
				say("writer's recheck during the fault: %v", writer.Refresh(ctx))
				_ = os.Chmod(dir, 0o700) // the fault clears
			})
		}
		rec2 := *rec1
		rec2.State, rec2.Failures, rec2.Version, rec2.OpenUntil = circuit.StateOpen, 3, 2, now.Add(10*time.Minute)
		rec2.UpdatedAt = now.Add(time.Millisecond)
		err = writer.Replace(ctx, "api", rec1, &rec2)
		stepHook = nil
		say("writer's replace: %v", err)
		fresh, err := Open(dir)
		if err != nil {
			return err
		}
		cur, _, err := fresh.Load(ctx, "api")
		if err != nil {
			return err
		}
		say("record on disk: %s until %v", cur.State, cur.OpenUntil.Sub(fresh.Now()).Round(time.Second))
		time.Sleep(recheck + 300*time.Millisecond) // the reader's own recheck comes and goes
		for i := range 3 {
			ran = false
			err := br.Run(ctx, "api", p, succeedOp(&ran))
			say("reader's call %d after the circuit opened: ran=%v err=%v", i, ran, err)
			time.Sleep(recheck)
		}
		return nil
	}
}

// TestWriteDuringARecheckFault: a write whose mapping a recheck released
// meanwhile (a short permission fault on the directory) still moves the
// directory's counter: a process keeping the replaced record admits no
// call into the circuit the write opened (script detachedwrite).
func TestWriteDuringARecheckFault(t *testing.T) {
	bin, _ := unprivileged(t)
	root, err := os.MkdirTemp("/dev/shm", "fs-detached-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	chownTree(t, dir, 65534)
	sc := startScript(t, "detachedwrite", dir, "", &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, bin)
	var admitted []string
	for {
		if !sc.lines.Scan() {
			break
		}
		l := sc.lines.Text()
		t.Log(l)
		if strings.HasPrefix(l, "reader's call") && strings.Contains(l, "ran=true") {
			admitted = append(admitted, l)
		}
	}
	if err := sc.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, sc.log.String())
	}
	if len(admitted) > 0 {
		t.Fatalf("calls admitted by a process after another opened the circuit for 10m:\n%s", strings.Join(admitted, "\n"))
	}
}
