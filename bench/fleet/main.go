// Command fleet simulates a fleet of servers sharing one hot circuit on one
// redis-server: K processes, each standing for a server, × G
// goroutines making healthy guarded calls through runtime/redisstore, with
// local copies (cache on) and without (cache off), each against a fresh
// private redis-server on a unix socket. For each it measures the guarded
// calls a second, the Redis commands a second and per call (INFO
// commandstats), Redis's CPU (INFO cpu, less the idle server's), and, for
// openings made by another client, the delay until each process sees the
// opening (p50, p99, max over every process and opening, and per opening
// the delay until every process saw it). From them it states how many
// servers making 1,000 guarded calls a second one Redis core supports each
// way. It also measures a healthy call's latency on the file store and on a
// cached Redis store, and the cost of a monotonic clock reading (a cached
// store makes two per call), interleaved.
//
// It prints a Markdown report and writes an SVG chart.
//
// Usage:
//
//	go run ./bench/fleet [-k 8] [-g 4] [-op 100µs] [-steady 5s] [-openings 20] [-svg bench/fleet.svg]
//
// Each guarded operation sleeps for -op, standing for the call to the
// dependency: guarded operations that never block would keep every
// processor busy and measure the Go scheduler (how late the goroutine that
// reads invalidations runs) rather than the store.
//
// make fleet runs the long form; TestFleet in this directory the short one.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"
)

// perServer is the call rate of one server in the "servers per Redis core"
// figure.
const perServer = 1000

func main() {
	if sock := os.Getenv(envWorker); sock != "" {
		if err := worker(sock); err != nil {
			log.Fatalf("fleet worker: %v", err)
		}
		return
	}
	var cfg config
	flag.IntVar(&cfg.K, "k", 8, "processes (servers)")
	flag.IntVar(&cfg.G, "g", 4, "goroutines per process")
	flag.DurationVar(&cfg.Steady, "steady", 5*time.Second, "length of the steady phase")
	flag.IntVar(&cfg.Openings, "openings", 20, "openings to time")
	flag.DurationVar(&cfg.Op, "op", 100*time.Microsecond, "how long each guarded operation (the call to the dependency) takes")
	svg := flag.String("svg", "bench/fleet.svg", "the SVG chart to write")
	flag.Parse()
	res, err := simulate(context.Background(), cfg, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	res.markdown(os.Stdout)
	f, err := os.Create(*svg)
	if err != nil {
		log.Fatal(err)
	}
	res.chart(f)
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// result is a whole simulation.
type result struct {
	cfg               config
	off, on           mode
	fileNs, cachedNs  float64 // healthy-call latency, ns
	clockNs           float64 // a monotonic clock reading, ns
	started, finished time.Time
}

func simulate(ctx context.Context, cfg config, logf func(string, ...any)) (*result, error) {
	r := &result{cfg: cfg, started: time.Now()}
	var err error
	if r.off, err = runMode(ctx, cfg, false, logf); err != nil {
		return nil, fmt.Errorf("cache off: %w", err)
	}
	if r.on, err = runMode(ctx, cfg, true, logf); err != nil {
		return nil, fmt.Errorf("cache on: %w", err)
	}
	if r.fileNs, r.cachedNs, r.clockNs, err = latency(ctx, 9, 200*time.Millisecond); err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	r.finished = time.Now()
	return r, nil
}

func (r *result) markdown(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("Fleet simulation: %d processes × %d goroutines on one hot circuit, one redis-server (unix socket), each guarded operation %v, steady phase %v, %d openings; %s.",
		r.cfg.K, r.cfg.G, r.cfg.Op, r.cfg.Steady, r.cfg.Openings, r.started.UTC().Format("2006-01-02 15:04 UTC"))
	p("")
	p("| | cache off | cache on | ratio |")
	p("|---|--:|--:|--:|")
	p("| guarded calls/s (all processes) | %.0f | %.0f | %.1f× |", r.off.callsPerSecond(), r.on.callsPerSecond(), r.on.callsPerSecond()/r.off.callsPerSecond())
	p("| Redis commands/s | %.0f | %.1f | %.0f× fewer |", float64(r.off.Commands)/r.off.Seconds, float64(r.on.Commands)/r.on.Seconds, (float64(r.off.Commands)/r.off.Seconds)/max(float64(r.on.Commands)/r.on.Seconds, 1e-9))
	p("| Redis commands per guarded call | %.3f | %.7f | %.0f× fewer |", r.off.commandsPerCall(), r.on.commandsPerCall(), r.off.commandsPerCall()/max(r.on.commandsPerCall(), 1e-12))
	p("| of which heartbeat PINGs/s per server; other commands per call | %.1f; %.3f | %.1f; %.7f | |",
		float64(r.off.Pings)/r.off.Seconds/float64(r.cfg.K), r.off.callCommandsPerCall(), float64(r.on.Pings)/r.on.Seconds/float64(r.cfg.K), r.on.callCommandsPerCall())
	p("| Redis CPU (cores, less the idle server's) | %.3f | %.4f | |", r.off.RedisCPU/r.off.Seconds, r.on.RedisCPU/r.on.Seconds)
	p("| servers at %d calls/s one Redis core supports | %.0f | %.0f | |", perServer, r.off.serversPerCore(r.cfg.K, perServer), r.on.serversPerCore(r.cfg.K, perServer))
	p("| opening seen by a process: p50 / p99 / max | %v / %v / %v | %v / %v / %v | |",
		rd(percentile(r.off.Delays, 50)), rd(percentile(r.off.Delays, 99)), rd(percentile(r.off.Delays, 100)),
		rd(percentile(r.on.Delays, 50)), rd(percentile(r.on.Delays, 99)), rd(percentile(r.on.Delays, 100)))
	p("| opening seen by every process: p50 / max | %v / %v | %v / %v | |",
		rd(percentile(r.off.RoundMax, 50)), rd(percentile(r.off.RoundMax, 100)), rd(percentile(r.on.RoundMax, 50)), rd(percentile(r.on.RoundMax, 100)))
	p("| processes that missed an opening; call errors | %d; %d | %d; %d | |", r.off.MissedOpening, r.off.Errors, r.on.MissedOpening, r.on.Errors)
	p("")
	p("Healthy guarded call, one goroutine, median of 9 interleaved rounds: file store %.0f ns, cached Redis store %.0f ns (%.2f× the file store's), "+
		"of which 2 monotonic clock readings (%.0f ns each here) keep a frozen server's copies from being served beyond the stall bound.",
		r.fileNs, r.cachedNs, r.cachedNs/r.fileNs, r.clockNs)
}

func rd(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d
}
