//go:build unix

package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// StartNats starts a nats-server of the test's own with JetStream, its
// store in a directory of the test's, on a loopback port it picks, and
// returns it and its client URL (nats://127.0.0.1:port) once it accepts
// connections. It is killed when the test ends. Without nats-server on PATH
// the test is Missing.
func StartNats(t testing.TB) (*exec.Cmd, string) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		Missing(t, "nats-server is not on PATH: cannot start a server of the test's own (apt-get install -y nats-server)")
	}
	dir := t.TempDir()
	// -p -1: a free port, which the server writes to its ports file in dir
	// once it listens, JetStream enabled.
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", filepath.Join(dir, "store"),
		"--ports_file_dir", dir, "-l", filepath.Join(dir, "nats.log"))
	Start(t, cmd)
	file := filepath.Join(dir, fmt.Sprintf("%s_%d.ports", filepath.Base(bin), cmd.Process.Pid))
	var url string
	Poll(t, 20*time.Millisecond, 10*time.Second, "nats-server listens (its ports file)", func() bool {
		data, err := os.ReadFile(file)
		var ports struct{ Nats []string }
		if err != nil || json.Unmarshal(data, &ports) != nil || len(ports.Nats) == 0 {
			return false
		}
		url = ports.Nats[0]
		return true
	})
	return cmd, url
}
