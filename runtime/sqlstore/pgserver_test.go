package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
)

// pgServer is a throwaway PostgreSQL server of a test's own, on a unix
// socket in a temporary directory, for tests that stop it. It is started
// the way .ci/services.sh starts the shared one: the newest
// /usr/lib/postgresql/*/bin, and as root through runuser as the "postgres"
// user (or $CIRCUITGEN_PG_USER), since PostgreSQL refuses to run as root.
type pgServer struct {
	bin  string   // the directory of initdb, pg_ctl and postgres
	dir  string   // the socket directory; the cluster is dir/data
	user string   // the user the server runs as
	run  []string // the command prefix that runs a command as user
}

// newestPostgresBin returns the bin directory of the newest PostgreSQL
// installed under /usr/lib/postgresql, or "".
func newestPostgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestMajor := "", -1.0
	for _, d := range dirs {
		major, err := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		if _, serr := os.Stat(filepath.Join(d, "initdb")); err != nil || serr != nil {
			continue
		}
		if major > bestMajor {
			best, bestMajor = d, major
		}
	}
	return best
}

// startThrowawayPostgres creates a cluster in a fresh directory and starts
// a server on it, stopped and removed when the test ends. Without
// PostgreSQL's binaries the test fails when CI=true and is skipped
// otherwise.
func startThrowawayPostgres(t *testing.T) *pgServer {
	t.Helper()
	bin := newestPostgresBin()
	if bin == "" {
		testenv.Missing(t, "no initdb under /usr/lib/postgresql/*/bin: cannot start a server to stop (apt-get install -y postgresql)")
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	srv := &pgServer{bin: bin, user: u.Username}
	// Not t.TempDir(): the server's user must reach the directory, and a
	// unix socket path must stay short.
	dir, err := os.MkdirTemp("", "circuitgen-pg-")
	if err != nil {
		t.Fatal(err)
	}
	srv.dir = dir
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		srv.user = os.Getenv("CIRCUITGEN_PG_USER")
		if srv.user == "" {
			srv.user = "postgres"
		}
		pu, err := user.Lookup(srv.user)
		if err != nil {
			testenv.Missing(t, "running as root and no user "+srv.user+" to run PostgreSQL as: "+err.Error())
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			testenv.Missing(t, "running as root and no runuser to run PostgreSQL as "+srv.user)
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		srv.run = []string{runuser, "-u", srv.user, "--"}
	}
	srv.exec(t, 30*time.Second, "initdb", "-D", srv.data(), "-U", srv.user, "--auth=trust", "--no-sync", "-E", "UTF8")
	srv.start(t)
	t.Cleanup(func() {
		// Stop it whatever state the test left it in.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.command(ctx, "pg_ctl", "stop", "-D", srv.data(), "-m", "immediate", "-w").Run()
		srv.killPostmaster()
	})
	return srv
}

func (s *pgServer) data() string { return filepath.Join(s.dir, "data") }

// DSN returns the server's DSN, with a connect timeout.
func (s *pgServer) DSN() string {
	return "host=" + s.dir + " port=5432 user=" + s.user + " dbname=postgres sslmode=disable connect_timeout=2"
}

// command returns a command that runs the PostgreSQL program prog as the
// server's user.
func (s *pgServer) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.run...), filepath.Join(s.bin, prog)), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second
	return cmd
}

// exec runs prog to completion within timeout; the test fails if it fails.
func (s *pgServer) exec(t *testing.T, timeout time.Duration, prog string, args ...string) {
	t.Helper()
	if err := s.tryExec(timeout, prog, args...); err != nil {
		t.Fatal(err)
	}
}

// tryExec runs prog to completion within timeout, its output in a log file
// (never a pipe: a server it starts must not hold one open), included in
// the error when it fails.
func (s *pgServer) tryExec(timeout time.Duration, prog string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	log, err := os.CreateTemp("", "circuitgen-pg-log-")
	if err != nil {
		return err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	cmd := s.command(ctx, prog, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(log.Name())
		return fmt.Errorf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
	return nil
}

// start starts the server and waits until it accepts connections. No TCP:
// it listens on a unix socket in s.dir only. fsync is off, but not
// synchronous_commit: an immediate stop must not lose committed records.
//
// After a SIGKILL, the old postmaster's backends may hold its shared memory
// for a moment, and the new one refuses to start: it is tried again for up
// to 10s.
func (s *pgServer) start(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := s.tryExec(30*time.Second, "pg_ctl", "start", "-D", s.data(), "-w", "-t", "20",
			"-l", filepath.Join(s.dir, "postgres.log"),
			"-o", "-k "+s.dir+" -c listen_addresses= -p 5432 -c fsync=off -c full_page_writes=off")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
			t.Fatalf("%v\npostgres.log:\n%s", err, log)
		}
	}
}

// stop stops the server at once, as a crash would: pg_ctl stop -m
// immediate (SIGQUIT to the postmaster, which ends every backend without a
// checkpoint); the next start recovers from the WAL.
func (s *pgServer) stop(t *testing.T) {
	t.Helper()
	s.exec(t, 20*time.Second, "pg_ctl", "stop", "-D", s.data(), "-m", "immediate", "-w", "-t", "15")
}

// kill SIGKILLs the postmaster and its backends, as a crash of the whole
// server would (a backend left alone can still answer the query in flight
// before it notices), and waits (up to 10s) until the postmaster is gone;
// the socket file stays behind, refusing connections.
func (s *pgServer) kill(t *testing.T) {
	t.Helper()
	pid := s.killPostmaster()
	if pid == 0 {
		t.Fatal("no postmaster to kill")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Gone, or a zombie its parent (init) has yet to reap.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if _, after, ok := strings.Cut(string(stat), ") "); err != nil || ok && strings.HasPrefix(after, "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("postmaster %d still running 10s after SIGKILL", pid)
		}
	}
}

// killPostmaster SIGKILLs the postmaster if its pid file is still there and
// names a process running on s's cluster.
// It returns the pid it killed, or 0.
func (s *pgServer) killPostmaster() int {
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0
	}
	// Only our server: a stale pid file's pid may be another process now.
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), s.data()) {
		return 0
	}
	children := childrenOf(pid) // the backends, which outlive a killed postmaster until they notice
	p, err := os.FindProcess(pid)
	if err != nil || p.Kill() != nil {
		return 0
	}
	for _, c := range children {
		if cp, err := os.FindProcess(c); err == nil {
			_ = cp.Kill()
		}
	}
	return pid
}

// childrenOf returns the pids of the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		_, after, ok := strings.Cut(string(stat), ") ")
		if f := strings.Fields(after); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}
