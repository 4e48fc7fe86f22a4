//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
)

// TestUnsafeSettingWarned runs state on a Redis server that persists
// nothing: circuitctl warns, naming the setting.
func TestUnsafeSettingWarned(t *testing.T) {
	t.Parallel()
	_, sock := testenv.StartRedis(t, "--appendonly", "no")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"state", "-store", "unix://" + sock}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	t.Logf("stderr: %s", stderr.String())
	if !strings.Contains(stderr.String(), "circuitctl state: warning: ") || !strings.Contains(stderr.String(), "appendonly is \"no\"") {
		t.Errorf("stderr %q, want a warning naming appendonly", stderr.String())
	}
}

// TestDeadRedisWatchQuiet watches a Redis server that dies: go-redis's own
// log lines must not reach the output, only circuitctl's errors.
func TestDeadRedisWatchQuiet(t *testing.T) {
	t.Parallel()
	srv, sock := testenv.StartRedis(t)
	cmd := exec.Command(binary(t), "state", "-watch", "-json", "-timeout", "3s", "-store", "unix://"+sock)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	time.Sleep(500 * time.Millisecond)
	_ = srv.Process.Kill()
	time.Sleep(6 * time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	t.Logf("output:\n%s", out.String())
	for _, line := range strings.Split(out.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "{") && !strings.HasPrefix(line, "circuitctl state: ") {
			t.Errorf("a line not circuitctl's: %q", line)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for two writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
