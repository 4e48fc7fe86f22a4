//go:build linux

package fleetnemesis

// The fleet worker: this test binary, re-executed with
// -test.run=^TestHelperProcessFleetWorker$, opens a cached store through
// the proxy, makes healthy guarded calls on the fleet's circuits from a
// few goroutines, and appends what happened to its history file
// (check_test.go has the format) until its standard input ends.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// Environment of a worker.
const (
	envRole   = "CIRCUITGEN_FLEET_ROLE"  // "worker"
	envStore  = "CIRCUITGEN_FLEET_STORE" // "redis" or "postgres"
	envAddr   = "CIRCUITGEN_FLEET_ADDR"  // the Redis URL or PostgreSQL DSN, through the proxy
	envPrefix = "CIRCUITGEN_FLEET_PREFIX"
	envHist   = "CIRCUITGEN_FLEET_HISTORY"
	envBound  = "CIRCUITGEN_FLEET_BOUND"
)

// fleetCircuits are the circuits every worker calls and the nemesis opens.
var fleetCircuits = []string{"fleet-a", "fleet-b", "fleet-c"}

// fleetPolicy opens only when forced: the workers' calls all succeed.
var fleetPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: time.Second, ProbeLease: time.Second}

// workerGoroutines is how many loops of calls a worker runs.
const workerGoroutines = 2

// mono reads CLOCK_MONOTONIC, which every process on the machine shares
// and SIGSTOP does not stop: the histories' clock.
func mono() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// TestHelperProcessFleetWorker is not a test: it is the body of a fleet
// worker. Run without envRole it does nothing.
//
// An admission's line has the time its call began and the time its
// operation began: the decision to admit it was made in between.
func TestHelperProcessFleetWorker(t *testing.T) {
	if os.Getenv(envRole) != "worker" {
		return
	}
	if err := fleetWorker(); err != nil {
		fmt.Fprintf(os.Stderr, "fleet worker: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// history appends lines to a worker's history file.
type history struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (h *history) printf(format string, args ...any) {
	h.mu.Lock()
	fmt.Fprintf(h.w, format+"\n", args...)
	h.mu.Unlock()
}

func (h *history) flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.Flush()
}

// call is what the observer learns of one call, through its context.
type call struct {
	probe  atomic.Bool // it claimed the half-open probe
	closed atomic.Bool // its settlement closed the circuit
}

type callKey struct{}

// observer marks the calls that claim a probe or close a circuit.
type observer struct{}

func (observer) ObserveTransition(circuit.Transition) {}

func (observer) ObserveTransitionContext(ctx context.Context, t circuit.Transition) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return
	}
	switch t.To {
	case circuit.StateHalfOpen:
		c.probe.Store(true)
	case circuit.StateClosed:
		c.closed.Store(true)
	}
}

func (observer) ObserveRejection(context.Context, *circuit.OpenError)                   {}
func (observer) ObserveOutcome(context.Context, string, circuit.Outcome, time.Duration) {}

// The observer must hear transitions with the call's context: an observer
// that is not a CallObserver would mark no probe and no closing, and the
// checker would take every probe after a loss for a lost opening.
var _ circuit.Observer = observer{}

// openStore opens the worker's cached store.
func openStore(ctx context.Context, bound time.Duration) (circuit.Store, func(), error) {
	switch os.Getenv(envStore) {
	case "redis":
		redis.SetLogger(quiet{})
		opt, err := redis.ParseURL(os.Getenv(envAddr))
		if err != nil {
			return nil, nil, err
		}
		opt.ContextTimeoutEnabled = true
		c := redis.NewClient(opt)
		s, err := redisstore.New(ctx, c, redisstore.WithPrefix(os.Getenv(envPrefix)), redisstore.WithCopies(bound))
		if err != nil {
			_ = c.Close()
			return nil, nil, err
		}
		return s, func() { _ = s.Close(); _ = c.Close() }, nil
	case "postgres":
		cfg, err := pgx.ParseConfig(os.Getenv(envAddr))
		if err != nil {
			return nil, nil, err
		}
		db := stdlib.OpenDB(*cfg)
		s, err := sqlstore.New(ctx, db, sqlstore.Postgres, sqlstore.WithCopies(bound))
		if err != nil {
			_ = db.Close()
			return nil, nil, err
		}
		return s, func() { _ = s.Close(); _ = db.Close() }, nil
	}
	return nil, nil, fmt.Errorf("%s=%q: want redis or postgres", envStore, os.Getenv(envStore))
}

// quiet is a go-redis logger that says nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func fleetWorker() error {
	bound, err := time.ParseDuration(os.Getenv(envBound))
	if err != nil {
		return fmt.Errorf("%s: %w", envBound, err)
	}
	f, err := os.OpenFile(os.Getenv(envHist), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	h := &history{w: bufio.NewWriterSize(f, 1<<20)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s, closeStore, err := openStore(ctx, bound)
	cancel()
	if err != nil {
		return err
	}
	defer closeStore()
	b := circuit.New(s, circuit.WithObserver(observer{}))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, admitted atomic.Int64
	for range workerGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := fleetCircuits[rand.IntN(len(fleetCircuits))]
				c := &call{}
				cctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callKey{}, c), 2*time.Second)
				var end int64
				begin := mono()
				err := b.Run(cctx, name, fleetPolicy, func(context.Context) (circuit.Outcome, error) {
					probe := 0
					if c.probe.Load() {
						probe = 1
					}
					h.printf("A %s %d %d %d", name, begin, mono(), probe)
					admitted.Add(1)
					time.Sleep(time.Millisecond) // the dependency's call
					end = mono()
					return circuit.Success, nil
				})
				cancel()
				calls.Add(1)
				if c.closed.Load() {
					h.printf("C %s %d", name, end)
				}
				if err != nil && !errors.Is(err, circuit.ErrOpen) {
					time.Sleep(time.Millisecond) // the store is failing: no busy loop
				}
			}
		}()
	}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			_ = h.flush()
		}
	}()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the nemesis closes it
	close(stop)
	wg.Wait()
	h.printf("T %d %d", calls.Load(), admitted.Load())
	return h.flush()
}
