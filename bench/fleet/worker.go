package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// The environment of a worker process.
const (
	envWorker = "CIRCUITGEN_FLEET_WORKER" // the Redis socket; set only in workers
	envCache  = "CIRCUITGEN_FLEET_CACHE"  // "on" or "off"
	envG      = "CIRCUITGEN_FLEET_G"      // goroutines
	envOp     = "CIRCUITGEN_FLEET_OP"     // how long each guarded operation takes
)

// circuitName is the hot circuit every process calls.
const circuitName = "fleet-hot"

// policy is the workers' policy: failures never open the circuit here; the
// parent opens it.
var policy = circuit.Policy{FailureThreshold: 5, Cooldown: time.Minute, ProbeLease: 10 * time.Second}

// report is what a worker prints when told to stop.
type report struct {
	Calls    int64   `json:"calls"`    // admitted calls during the steady phase
	Rejected int64   `json:"rejected"` // calls rejected (OpenError) in the whole run
	Errors   int64   `json:"errors"`   // other errors
	Opens    []int64 `json:"opens"`    // unix nanoseconds at which the process first saw each opening
}

// worker is a server of the fleet: G goroutines calling the hot circuit
// through one store, from "go" until "stop" on its standard input; "mark"
// ends the steady phase (calls are counted until then). It writes "ready"
// once warm and the report as JSON after "stop".
func worker(sock string) error {
	g, err := strconv.Atoi(os.Getenv(envG))
	if err != nil {
		return fmt.Errorf("%s: %w", envG, err)
	}
	opTime, err := time.ParseDuration(os.Getenv(envOp))
	if err != nil {
		return fmt.Errorf("%s: %w", envOp, err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ContextTimeoutEnabled: true, PoolSize: g + 2})
	defer c.Close()
	var opts []redisstore.Option
	if os.Getenv(envCache) == "on" {
		opts = append(opts, redisstore.WithCopies(0))
	}
	s, err := redisstore.New(context.Background(), c, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	b := circuit.New(s)
	ctx := context.Background()
	ok := func(context.Context) (circuit.Outcome, error) {
		if opTime > 0 {
			time.Sleep(opTime) // the call to the dependency
		}
		return circuit.Success, nil
	}
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); {
		if err := b.Run(ctx, circuitName, policy, ok); err != nil {
			return err
		}
	}
	in := bufio.NewScanner(os.Stdin)
	fmt.Println("ready")
	if !in.Scan() || in.Text() != "go" {
		return errors.New("no go")
	}
	var (
		steady   atomic.Bool // counting calls
		stop     atomic.Bool
		calls    atomic.Int64
		rejected atomic.Int64
		failed   atomic.Int64
		open     atomic.Bool // the process's view: the circuit was seen open
		mu       sync.Mutex
		opens    []int64
		wg       sync.WaitGroup
	)
	steady.Store(true)
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			for !stop.Load() {
				err := b.Run(ctx, circuitName, policy, ok)
				switch {
				case err == nil:
					if steady.Load() {
						n++
					}
					if open.Load() {
						open.Store(false)
					}
				case errors.Is(err, circuit.ErrOpen):
					rejected.Add(1)
					if open.CompareAndSwap(false, true) {
						at := time.Now().UnixNano()
						mu.Lock()
						opens = append(opens, at)
						mu.Unlock()
					}
				default:
					failed.Add(1)
				}
			}
			calls.Add(n)
		}()
	}
	for in.Scan() {
		switch in.Text() {
		case "mark":
			steady.Store(false)
		case "stop":
			stop.Store(true)
			wg.Wait()
			return json.NewEncoder(os.Stdout).Encode(report{Calls: calls.Load(), Rejected: rejected.Load(), Errors: failed.Load(), Opens: opens})
		}
	}
	return errors.New("stdin ended before stop")
}
