// Command fleetidle measures what an idle fleet costs its stores: N
// simulated processes (goroutines, each with its own store instance, client
// and connections) with copies on at the default stall bound, making no
// guarded calls, against the private redis-server and PostgreSQL of
// .ci/services.sh. For each store and each N it builds the fleet, lets it
// settle, then for -idle reads from the servers themselves:
//
//   - Redis: commands a second (INFO stats total_commands_processed, less
//     the measurement's own INFO calls) and their kinds (INFO commandstats),
//     connected_clients, and redis-server's CPU (utime+stime of
//     /proc/<process_id>/stat);
//   - PostgreSQL: transactions a second (xact_commit+xact_rollback of
//     pg_stat_database for the database, after a pg_stat_force_next_flush
//     wait), client backends (pg_stat_activity), and the CPU of the
//     postmaster and every backend (utime+stime of their /proc stat files).
//
// It prints a Markdown table per store. make fleet-idle runs it.
//
// Usage:
//
//	CIRCUITGEN_REDIS_URL=... CIRCUITGEN_POSTGRES_DSN=... fleetidle [-n 10,100,1000] [-idle 10s] [-store redis,postgres]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTicks = 100

func main() {
	ns := flag.String("n", "10,100,1000", "fleet sizes")
	idle := flag.Duration("idle", 10*time.Second, "how long each fleet idles while measured")
	settle := flag.Duration("settle", 0, "how long each fleet runs before it is measured (0: 3 s and 10 ms a process)")
	stores := flag.String("store", "redis,postgres", "stores to measure")
	flag.Parse()
	var sizes []int
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			log.Fatalf("-n: %q is not a fleet size", f)
		}
		sizes = append(sizes, n)
	}
	ctx := context.Background()
	for _, st := range strings.Split(*stores, ",") {
		var rows []row
		for _, n := range sizes {
			var (
				r    row
				err  error
				wait = *settle
			)
			if wait == 0 {
				wait = 3*time.Second + time.Duration(n)*10*time.Millisecond
			}
			switch st {
			case "redis":
				r, err = measureRedis(ctx, n, wait, *idle)
			case "postgres":
				r, err = measurePostgres(ctx, n, wait, *idle)
			default:
				log.Fatalf("-store: unknown store %q", st)
			}
			if err != nil {
				log.Printf("%s N=%d: %v", st, n, err)
				continue
			}
			log.Printf("%s N=%d: %+v", st, n, r)
			rows = append(rows, r)
		}
		print(st, *idle, rows)
	}
}

// row is one fleet's measurement.
type row struct {
	n      int
	perSec float64 // Redis commands or PostgreSQL transactions a second
	conns  int
	cpu    float64 // server CPU, cores
	detail string  // the commands by kind (Redis)
}

func print(store string, idle time.Duration, rows []row) {
	what := "commands/s"
	if store == "postgres" {
		what = "transactions/s"
	}
	fmt.Printf("\n%s, idle %v, copies on, default bound\n\n", store, idle)
	fmt.Printf("| N | %s total | per process | connections | per process | server CPU (cores) | by kind |\n", what)
	fmt.Printf("|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, r := range rows {
		fmt.Printf("| %d | %.1f | %.2f | %d | %.2f | %.3f | %s |\n", r.n, r.perSec, r.perSec/float64(r.n),
			r.conns, float64(r.conns)/float64(r.n), r.cpu, r.detail)
	}
}

// cpuTicks returns utime+stime of pid, and of its children too when
// withChildren (every PostgreSQL backend is a child of the postmaster).
func cpuTicks(pid int, withChildren bool) (int64, error) {
	total, err := statTicks(pid)
	if err != nil || !withChildren {
		return total, err
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		f := statFields(string(b))
		if len(f) < 15 || f[1] != strconv.Itoa(pid) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += u + s
	}
	return total, nil
}

// statTicks returns utime+stime of pid.
func statTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := statFields(string(b))
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, nil
}

// statFields returns the fields of a /proc/<pid>/stat line after the
// command: [0] is the state, [1] the parent's pid, [11] utime, [12] stime.
func statFields(line string) []string {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(line[i+1:])
}

// parallel runs f(0..n-1) on at most 32 goroutines at once.
func parallel(n int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
		sem  = make(chan struct{}, 32)
	)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				if ferr == nil {
					ferr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ferr
}

func measureRedis(ctx context.Context, n int, settle, idle time.Duration) (row, error) {
	url := os.Getenv("CIRCUITGEN_REDIS_URL")
	if url == "" {
		return row{}, fmt.Errorf("CIRCUITGEN_REDIS_URL is not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return row{}, err
	}
	opt.ContextTimeoutEnabled = true
	admin := redis.NewClient(opt)
	defer admin.Close()
	info := func(section string) (map[string]string, error) {
		s, err := admin.Info(ctx, section).Result()
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, l := range strings.Split(s, "\r\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				m[k] = v
			}
		}
		return m, nil
	}
	srv, err := info("server")
	if err != nil {
		return row{}, err
	}
	pid, _ := strconv.Atoi(srv["process_id"])
	stores := make([]*redisstore.Store, n)
	clients := make([]*redis.Client, n)
	defer func() {
		_ = parallel(n, func(i int) error {
			if stores[i] != nil {
				_ = stores[i].Close()
			}
			if clients[i] != nil {
				_ = clients[i].Close()
			}
			return nil
		})
	}()
	prefix := fmt.Sprintf("fleetidle:%d:", time.Now().UnixNano())
	if err := parallel(n, func(i int) error {
		o := *opt
		clients[i] = redis.NewClient(&o)
		s, err := redisstore.New(ctx, clients[i], redisstore.WithCopies(0), redisstore.WithPrefix(prefix))
		if err != nil {
			return err
		}
		stores[i] = s
		// One bound circuit with a copy, as a process that has made calls.
		_, _, err = s.Bind("idle").Load(ctx)
		return err
	}); err != nil {
		return row{}, err
	}
	time.Sleep(settle)
	_ = admin.ConfigResetStat(ctx).Err()
	before, err := info("stats")
	if err != nil {
		return row{}, err
	}
	t0, _ := cpuTicks(pid, false)
	start := time.Now()
	time.Sleep(idle)
	t1, _ := cpuTicks(pid, false)
	after, err := info("stats")
	if err != nil {
		return row{}, err
	}
	el := time.Since(start).Seconds()
	cmdstats, err := info("commandstats")
	if err != nil {
		return row{}, err
	}
	clientsInfo, err := info("clients")
	if err != nil {
		return row{}, err
	}
	c0, _ := strconv.ParseFloat(before["total_commands_processed"], 64)
	c1, _ := strconv.ParseFloat(after["total_commands_processed"], 64)
	var kinds []string
	for k, v := range cmdstats {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok || name == "info" || name == "config|resetstat" {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		c, _ := strconv.ParseFloat(calls, 64)
		kinds = append(kinds, fmt.Sprintf("%s %.1f/s", name, c/el))
	}
	conns, _ := strconv.Atoi(clientsInfo["connected_clients"])
	return row{
		n:      n,
		perSec: (c1 - c0 - 1) / el, // less the second INFO
		conns:  conns - 1,          // less the measurement's own
		cpu:    float64(t1-t0) / clockTicks / el,
		detail: strings.Join(kinds, ", "),
	}, nil
}

func measurePostgres(ctx context.Context, n int, settle, idle time.Duration) (row, error) {
	dsn := os.Getenv("CIRCUITGEN_POSTGRES_DSN")
	if dsn == "" {
		return row{}, fmt.Errorf("CIRCUITGEN_POSTGRES_DSN is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		return row{}, err
	}
	defer admin.Close()
	admin.SetMaxOpenConns(1)
	ms, err := sqlstore.New(ctx, admin, sqlstore.Postgres)
	if err != nil {
		return row{}, err
	}
	if err := ms.Migrate(ctx); err != nil {
		return row{}, err
	}
	var pid int
	if err := admin.QueryRowContext(ctx, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").Scan(&pid); err != nil {
		return row{}, err
	}
	postmaster, err := parentOf(pid)
	if err != nil {
		return row{}, err
	}
	stores := make([]*sqlstore.Store, n)
	dbs := make([]*sql.DB, n)
	defer func() {
		_ = parallel(n, func(i int) error {
			if stores[i] != nil {
				_ = stores[i].Close()
			}
			if dbs[i] != nil {
				_ = dbs[i].Close()
			}
			return nil
		})
	}()
	if err := parallel(n, func(i int) error {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return err
		}
		dbs[i] = db
		s, err := sqlstore.New(ctx, db, sqlstore.Postgres, sqlstore.WithCopies(0))
		if err != nil {
			return err
		}
		stores[i] = s
		_, _, err = s.Bind("idle").Load(ctx)
		return err
	}); err != nil {
		return row{}, err
	}
	time.Sleep(settle)
	xacts := func() (float64, error) {
		var x float64
		_, _ = admin.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()")
		err := admin.QueryRowContext(ctx, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&x)
		return x, err
	}
	x0, err := xacts()
	if err != nil {
		return row{}, err
	}
	t0, _ := cpuTicks(postmaster, true)
	start := time.Now()
	time.Sleep(idle)
	t1, _ := cpuTicks(postmaster, true)
	x1, err := xacts()
	if err != nil {
		return row{}, err
	}
	el := time.Since(start).Seconds()
	var conns int
	if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").Scan(&conns); err != nil {
		return row{}, err
	}
	var listeners int
	_ = admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", sqlstore.ListenerName).Scan(&listeners)
	return row{
		n:      n,
		perSec: (x1 - x0 - 3) / el, // less the measurement's own
		conns:  conns - 1,
		cpu:    float64(t1-t0) / clockTicks / el,
		detail: fmt.Sprintf("%d listening", listeners),
	}, nil
}

// parentOf returns pid's parent.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := statFields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	return strconv.Atoi(f[1])
}
