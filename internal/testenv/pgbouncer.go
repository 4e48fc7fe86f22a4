//go:build unix

package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A PostgresTarget is the database a pgbouncer pools: its server's host
// (a socket directory, or an address), port, database and user.
type PostgresTarget struct {
	Host     string
	Port     uint16
	Database string
	User     string
}

// StartPgbouncer starts a pgbouncer of the test's own in pool mode mode
// (session, transaction or statement) in front of db, stopped when the test
// ends. It returns the DSN that reaches db through it, as database
// "circuits", with pgx's exec mode (no named prepared statement: what
// transaction pooling needs). pgbouncer refuses to run as root: as root it
// runs as db's user, as the server does. settings are more lines of its
// [pgbouncer] section ("server_round_robin = 1").
func StartPgbouncer(t testing.TB, mode string, db PostgresTarget, settings ...string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		Missing(t, "pgbouncer is not on PATH (apt-get install -y pgbouncer)")
	}
	cfg := db
	dir, err := os.MkdirTemp("", "circuitgen-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// As root it runs as db's user, set by exec itself: a runuser between
	// would be the process the test kills, and its pgbouncer would outlive
	// the test.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		pu, err := user.Lookup(cfg.User)
		if err != nil {
			Missing(t, "running as root and no user "+cfg.User+" to run pgbouncer as: "+err.Error())
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	port := freePort(t)
	ini := fmt.Sprintf(`[databases]
circuits = host=%s port=%d dbname=%s user=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
default_pool_size = 8
max_client_conn = 400
logfile = %s
%s
`, cfg.Host, cfg.Port, cfg.Database, cfg.User, port, filepath.Join(dir, "users.txt"), mode, filepath.Join(dir, "pgbouncer.log"), strings.Join(settings, "\n"))
	for file, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": fmt.Sprintf("%q \"\"\n", cfg.User)} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	Start(t, cmd)
	pooled := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=circuits sslmode=disable default_query_exec_mode=exec connect_timeout=2", port, cfg.User)
	WaitFor(t, 10*time.Second, "pgbouncer listens", func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return pooled
}

// freePort returns a loopback TCP port no one listens on.
func freePort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := 20000 + rand.IntN(30000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			_ = l.Close()
			return p
		}
	}
	t.Fatal("no free loopback port")
	return 0
}
