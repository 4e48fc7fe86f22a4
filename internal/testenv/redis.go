//go:build unix

package testenv

import (
	"bufio"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// StartRedis starts a redis-server of the test's own on a unix socket,
// for a test that stops or freezes it, and returns it and its socket once
// it answers. It is killed when the test ends (after a SIGCONT, should it
// be frozen). Without redis-server on PATH the test is Missing.
func StartRedis(t testing.TB) (*exec.Cmd, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Missing(t, "redis-server is not on PATH: cannot start a server of the test's own (apt-get install -y redis-server)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--dir", dir, "--save", "", "--appendonly", "no")
	Start(t, cmd)
	for i := 0; !pongs(sock); i++ {
		if i == 100 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, sock
}

// pongs reports whether the server on unix socket sock answers a PING.
func pongs(sock string) bool {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
