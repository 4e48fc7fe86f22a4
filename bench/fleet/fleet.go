package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// stallBound is the stall bound of the copies of the stores the fleet
// opens with redisstore.WithCopies(0): the default.
const stallBound = time.Second

// config is one simulation.
type config struct {
	K, G     int           // processes, goroutines each
	Steady   time.Duration // the steady phase
	Openings int           // openings made after it
	Op       time.Duration // how long each guarded operation (the dependency) takes
}

// mode is one run of the fleet, with copies or without.
type mode struct {
	Cache         bool
	Calls         int64   // admitted calls in the steady phase, every process
	Seconds       float64 // its length
	Commands      int64   // Redis commands in it (INFO commandstats)
	Pings         int64   // of which PINGs: the invalidation connections' heartbeats
	RedisCPU      float64 // Redis CPU seconds in it (INFO cpu, user + sys), less the idle server's
	Delays        []time.Duration
	RoundMax      []time.Duration // per opening, the delay until every process saw it
	Errors        int64
	MissedOpening int // processes that never saw an opening
}

func (m mode) callsPerSecond() float64  { return float64(m.Calls) / m.Seconds }
func (m mode) commandsPerCall() float64 { return float64(m.Commands) / float64(m.Calls) }

// callCommandsPerCall is commandsPerCall without the heartbeats, whose
// number grows with time and servers, not with calls.
func (m mode) callCommandsPerCall() float64 { return float64(m.Commands-m.Pings) / float64(m.Calls) }

// serversPerCore is how many servers each making perServer guarded calls a
// second on the hot circuit one Redis core serves: the Redis CPU a server
// costs is the CPU per call times perServer, plus its share of what does not
// grow with calls (heartbeats), measured over the steady phase.
func (m mode) serversPerCore(k int, perServer float64) float64 {
	cpuPerSecond := m.RedisCPU / m.Seconds // cores used by k servers at their measured rate
	perCall := cpuPerSecond / m.callsPerSecond()
	if m.Cache {
		// Healthy calls reach Redis only as heartbeats, whose cost is per
		// server, not per call.
		return float64(k) / cpuPerSecond
	}
	return 1 / (perCall * perServer)
}

// redisServer is a private redis-server on a unix socket.
type redisServer struct {
	cmd  *exec.Cmd
	sock string
	dir  string
}

func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not on PATH: %w", err)
	}
	dir, err := os.MkdirTemp("", "circuitgen-fleet-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--dir", dir, "--save", "", "--appendonly", "no", "--maxclients", "10000")
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &redisServer{cmd: cmd, sock: sock, dir: dir}
	c := s.client()
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 200 {
			s.stop()
			return nil, errors.New("redis-server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, nil
}

func (s *redisServer) client() *redis.Client {
	return redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, ContextTimeoutEnabled: true})
}

func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	os.RemoveAll(s.dir)
}

// proc is a worker process.
type proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startWorker(sock string, cache bool, g int, op time.Duration) (*proc, error) {
	cmd := exec.Command(os.Args[0])
	onoff := "off"
	if cache {
		onoff = "on"
	}
	cmd.Env = append(os.Environ(), envWorker+"="+sock, envCache+"="+onoff, envG+"="+strconv.Itoa(g), envOp+"="+op.String())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &proc{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

func (p *proc) send(line string) error {
	_, err := io.WriteString(p.in, line+"\n")
	return err
}

func (p *proc) line() (string, error) {
	s, err := p.out.ReadString('\n')
	return strings.TrimSpace(s), err
}

// stats reads the server's command count, of which PINGs, and CPU seconds.
func stats(ctx context.Context, c *redis.Client) (commands, pings int64, cpu float64, err error) {
	info, err := c.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			if strings.HasPrefix(rest, "info:") || strings.HasPrefix(rest, "config|resetstat:") {
				continue
			}
			_, v, _ := strings.Cut(rest, "calls=")
			v, _, _ = strings.Cut(v, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			commands += n
			if strings.HasPrefix(rest, "ping:") {
				pings += n
			}
		}
		for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				cpu += f
			}
		}
	}
	return commands, pings, cpu, nil
}

// runMode runs the fleet once against a fresh server.
func runMode(ctx context.Context, cfg config, cache bool, logf func(string, ...any)) (mode, error) {
	m := mode{Cache: cache}
	srv, err := startRedis()
	if err != nil {
		return m, err
	}
	defer srv.stop()
	c := srv.client()
	defer c.Close()

	// The idle server's own CPU (its cron), over as long as the steady
	// phase, is subtracted from the fleet's.
	_, _, idle0, err := stats(ctx, c)
	if err != nil {
		return m, err
	}
	time.Sleep(cfg.Steady)
	_, _, idle1, err := stats(ctx, c)
	if err != nil {
		return m, err
	}
	idle := idle1 - idle0

	procs := make([]*proc, cfg.K)
	defer func() {
		for _, p := range procs {
			if p != nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	}()
	for i := range procs {
		if procs[i], err = startWorker(srv.sock, cache, cfg.G, cfg.Op); err != nil {
			return m, err
		}
	}
	for i, p := range procs {
		if l, err := p.line(); err != nil || l != "ready" {
			return m, fmt.Errorf("worker %d: %q, %v", i, l, err)
		}
	}
	time.Sleep(2 * stallBound / 4) // every invalidation connection is up
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return m, err
	}
	cmd0, ping0, cpu0, err := stats(ctx, c)
	if err != nil {
		return m, err
	}
	start := time.Now()
	for _, p := range procs {
		if err := p.send("go"); err != nil {
			return m, err
		}
	}
	time.Sleep(cfg.Steady)
	cmd1, ping1, cpu1, err := stats(ctx, c)
	if err != nil {
		return m, err
	}
	for _, p := range procs {
		if err := p.send("mark"); err != nil {
			return m, err
		}
	}
	m.Seconds = time.Since(start).Seconds()
	m.Commands, m.Pings = cmd1-cmd0, ping1-ping0
	m.RedisCPU = max(cpu1-cpu0-idle*m.Seconds/cfg.Steady.Seconds(), 0)
	logf("cache %v: steady phase over, %d commands, %.3f s Redis CPU (idle server: %.3f s)", cache, m.Commands, m.RedisCPU, idle)

	// Openings: another client opens the circuit, and clears it again.
	unc, err := redisstore.New(ctx, c)
	if err != nil {
		return m, err
	}
	opener := circuit.New(unc)
	one := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil }
	var opened []time.Time
	for range cfg.Openings {
		at := time.Now()
		if err := opener.Run(ctx, circuitName, one, fail); err != nil {
			return m, fmt.Errorf("opening: %w", err)
		}
		opened = append(opened, at)
		time.Sleep(150 * time.Millisecond)
		if err := opener.Clear(ctx, circuitName); err != nil {
			return m, err
		}
		time.Sleep(150 * time.Millisecond)
	}
	var reports []report
	for i, p := range procs {
		if err := p.send("stop"); err != nil {
			return m, err
		}
		l, err := p.line()
		var r report
		if err == nil {
			err = json.Unmarshal([]byte(l), &r)
		}
		if err != nil {
			return m, fmt.Errorf("worker %d report: %q: %w", i, l, err)
		}
		reports = append(reports, r)
		m.Calls += r.Calls
		m.Errors += r.Errors
	}
	for _, at := range opened {
		var roundMax time.Duration
		for _, r := range reports {
			i := slices.IndexFunc(r.Opens, func(ns int64) bool { return ns >= at.UnixNano() })
			if i < 0 {
				m.MissedOpening++
				continue
			}
			d := time.Duration(r.Opens[i] - at.UnixNano())
			m.Delays = append(m.Delays, d)
			roundMax = max(roundMax, d)
		}
		m.RoundMax = append(m.RoundMax, roundMax)
	}
	slices.Sort(m.Delays)
	slices.Sort(m.RoundMax)
	return m, nil
}

// latency measures a healthy guarded call from one goroutine on the file
// store and on a cached Redis store, and a reading of the monotonic clock
// (a cached store reads it twice per call, to serve no copy beyond the
// stall bound), interleaved over rounds: the median ns of each.
func latency(ctx context.Context, rounds int, per time.Duration) (file, cached, clock float64, err error) {
	srv, err := startRedis()
	if err != nil {
		return 0, 0, 0, err
	}
	defer srv.stop()
	c := srv.client()
	defer c.Close()
	rs, err := redisstore.New(ctx, c, redisstore.WithCopies(0))
	if err != nil {
		return 0, 0, 0, err
	}
	defer rs.Close()
	dir, err := os.MkdirTemp("", "circuitgen-fleet-file-")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(dir)
	fs, err := filestore.Open(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	measure := func(b *circuit.Breaker) (float64, error) {
		n, start := 0, time.Now()
		for time.Since(start) < per {
			for range 1000 {
				if err := b.Run(ctx, circuitName, policy, ok); err != nil {
					return 0, err
				}
			}
			n += 1000
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n), nil
	}
	origin := time.Now()
	var sink time.Duration
	readClock := func() float64 {
		n, start := 0, time.Now()
		for time.Since(start) < per {
			for range 1000 {
				sink += time.Since(origin)
			}
			n += 1000
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	bf, bc := circuit.New(fs), circuit.New(rs)
	for _, b := range []*circuit.Breaker{bf, bc} { // warm: records, copies
		if _, err := measure(b); err != nil {
			return 0, 0, 0, err
		}
	}
	time.Sleep(stallBound / 2)
	var fv, cv, kv []float64
	for range rounds {
		f, err := measure(bf)
		if err != nil {
			return 0, 0, 0, err
		}
		r, err := measure(bc)
		if err != nil {
			return 0, 0, 0, err
		}
		fv, cv, kv = append(fv, f), append(cv, r), append(kv, readClock())
	}
	_ = sink
	for _, v := range [][]float64{fv, cv, kv} {
		slices.Sort(v)
	}
	return fv[len(fv)/2], cv[len(cv)/2], kv[len(kv)/2], nil
}

// percentile returns the p-th percentile (0..100) of sorted ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, len(ds)*p/100)]
}
