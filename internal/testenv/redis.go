//go:build unix

package testenv

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RedisSettings are the settings the Redis store's guarantees need
// (docs/distributed-stores.md), which the test servers run with: every
// write in the append-only file, written out every second, and no key
// ever evicted.
var RedisSettings = []string{"--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"}

// StartRedis starts a redis-server of the test's own on a unix socket,
// for a test that stops or freezes it, with RedisSettings and then extra
// (which may override them), and returns it and its socket once it
// answers. It is killed when the test ends (after a SIGCONT, should it be
// frozen). Without redis-server on PATH the test is Missing.
func StartRedis(t testing.TB, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	return StartRedisIn(t, t.TempDir(), extra...)
}

// StartRedisIn is StartRedis with the server's files (its socket, its
// append-only file) in dir, so that a server started again in dir finds
// what the last one persisted.
func StartRedisIn(t testing.TB, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Missing(t, "redis-server is not on PATH: cannot start a server of the test's own (apt-get install -y redis-server)")
	}
	sock := filepath.Join(shortDir(t, dir), "redis.sock")
	logFile := filepath.Join(dir, "redis.log")
	args := append([]string{"--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--dir", dir, "--save", "",
		"--logfile", logFile}, RedisSettings...)
	cmd := exec.Command(bin, append(args, extra...)...)
	Start(t, cmd)
	// A loaded machine (a CI run's tests, six packages at a time under
	// -race) has taken more than two seconds to start one.
	for deadline := time.Now().Add(15 * time.Second); !pongs(sock); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			data, _ := os.ReadFile(logFile)
			t.Fatalf("redis-server did not answer within 15s; its log:\n%s", data)
		}
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

// shortDir returns dir, or a short name of it when a socket's path in it
// would pass the 104 to 108 bytes a unix socket's path may have (a test's
// temporary directory under a long TMPDIR): a symlink to it in /tmp, not
// TMPDIR, named by dir's hash, so that a server started again in dir has
// the same socket.
func shortDir(t testing.TB, dir string) string {
	if len(dir) < 80 {
		return dir
	}
	sum := sha256.Sum256([]byte(dir))
	link := filepath.Join("/tmp", "redis-"+hex.EncodeToString(sum[:6]))
	if to, err := os.Readlink(link); err == nil && to == dir {
		return link
	}
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(link) })
	return link
}
