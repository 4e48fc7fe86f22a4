//go:build unix

package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestPooler puts a real pgbouncer between a cached store and PostgreSQL,
// in session and in transaction pooling mode, while a process connected
// directly opens the circuit. In session mode the copies work: the store
// goes live and sees the opening within the stall bound. In transaction
// mode a LISTEN is not a session's, so invalidations go astray: the store
// must serve no copies, say so once, and it too sees the opening within
// the bound.
func TestPooler(t *testing.T) {
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			direct, pooled := pgbouncer(t, mode)
			s, err := sqlstore.New(t.Context(), openPostgres(t, pooled, nil), sqlstore.Postgres, sqlstore.WithCopies(testStall))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			opener, err := sqlstore.New(t.Context(), openPostgres(t, direct, nil), sqlstore.Postgres)
			if err != nil {
				t.Fatal(err)
			}
			const name = "billing-api"
			rep := &reports{}
			b, ob := circuit.New(s, circuit.WithObserver(rep)), circuit.New(opener)
			ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
			// Healthy calls for two stall bounds: copies go live if they can.
			for end := time.Now().Add(2 * testStall); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if err := b.Run(t.Context(), name, policy, ok); err != nil {
					t.Fatalf("healthy call through pgbouncer (%s pooling): %v", mode, err)
				}
			}
			if mode == "session" && !s.Live() {
				t.Fatal("copies did not go live behind pgbouncer in session pooling")
			}
			if mode == "transaction" && s.Cached(name) {
				t.Fatal("a copy kept behind pgbouncer in transaction pooling")
			}
			for range policy.FailureThreshold {
				_ = ob.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) {
					return circuit.Failure, errors.New("billing down")
				})
			}
			opened := time.Now()
			time.Sleep(testStall + 100*time.Millisecond)
			late := 0
			for range 20 {
				err := b.Run(t.Context(), name, policy, ok)
				var oe *circuit.OpenError
				switch {
				case err == nil:
					late++
				case !errors.As(err, &oe):
					t.Fatalf("call after the opening: %v, want an OpenError", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			rep.mu.Lock()
			said := 0
			for _, err := range rep.errs {
				if strings.Contains(fmt.Sprint(err), "pooler in transaction mode") {
					said++
				}
			}
			rep.mu.Unlock()
			if want := map[string]int{"session": 0, "transaction": 1}[mode]; said != want {
				t.Errorf("the store said %d times that no heartbeat came back, want %d: %v", said, want, rep.errs)
			}
			if late > 0 {
				t.Fatalf("%d of 20 calls admitted more than %v after another process opened the circuit (%s pooling)",
					late, time.Since(opened).Round(time.Millisecond), mode)
			}
		})
	}
}

// pgbouncer creates a database of the test's own, migrated, and starts a
// pgbouncer of the test's own in front of it in pool mode mode. It returns
// the DSN of the database and the DSN through pgbouncer (with pgx's exec
// mode, which prepares no named statement: what transaction pooling
// needs). pgbouncer refuses to run as root: as root it runs as the
// PostgreSQL user, as the server does.
func pgbouncer(t *testing.T, mode string) (direct, pooled string) {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		testenv.Missing(t, "pgbouncer is not on PATH (apt-get install -y pgbouncer)")
	}
	base := testenv.PostgresDSN(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	db := "circuitgen_pool_" + randomHex(6)
	admin := openPostgres(t, base, nil)
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") })
	direct = base + " dbname=" + db
	migrate(t, openPostgres(t, direct, nil), sqlstore.Postgres)

	dir, err := os.MkdirTemp("", "circuitgen-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var run []string
	if os.Geteuid() == 0 {
		pu, err := user.Lookup(cfg.User)
		if err != nil {
			testenv.Missing(t, "running as root and no user "+cfg.User+" to run pgbouncer as: "+err.Error())
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		run = []string{"runuser", "-u", cfg.User, "--"}
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
default_pool_size = 4
max_client_conn = 200
logfile = %s
`, cfg.Host, cfg.Port, db, cfg.User, port, filepath.Join(dir, "users.txt"), mode, filepath.Join(dir, "pgbouncer.log"))
	for file, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": fmt.Sprintf("%q \"\"\n", cfg.User)} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	argv := append(run, bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd := exec.Command(argv[0], argv[1:]...)
	testenv.Start(t, cmd)
	pooled = fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=circuits sslmode=disable default_query_exec_mode=exec connect_timeout=2", port, cfg.User)
	testenv.WaitFor(t, 10*time.Second, "pgbouncer answers", func() bool {
		c, err := pgx.Connect(t.Context(), pooled)
		if err != nil {
			return false
		}
		defer c.Close(context.Background())
		return c.Ping(t.Context()) == nil
	})
	return direct, pooled
}

// freePort returns a loopback TCP port no one listens on.
func freePort(t *testing.T) int {
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
