// Package demo is circuitgen's billing demo: a story, told in the terminal,
// of a guarded billing client whose provider fails and recovers while
// several processes share the circuit's state directory.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/examples/billing/billingserver"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// Circuit is the circuit the demo exercises: Charge's.
const Circuit = "billing-api:charge"

// Config is how the demo runs.
type Config struct {
	// StateDir is the shared state directory; a temporary one when empty.
	StateDir string
	// Worker is the command that runs one worker process; it gets the
	// worker's flags appended. Required.
	Worker []string
}

// Summary counts what happened, per phase.
type Summary struct {
	Phases []Phase
}

// Phase is one step of the story.
type Phase struct {
	Name       string
	Processes  int
	Calls      int
	OK         int
	Failed     int
	Rejected   int
	ServerHits int64
}

type story struct {
	w     io.Writer
	cfg   Config
	srv   *billingserver.Server
	b     *circuit.Breaker
	api   billing.BillingAPI
	cache *billing.ReceiptCache
	sum   Summary
	nstep int
	// first is the first charge's receipt, looked up again later.
	first string
}

// Run tells the story on w and returns its summary.
func Run(ctx context.Context, w io.Writer, cfg Config) (Summary, error) {
	if cfg.StateDir == "" {
		dir, err := os.MkdirTemp("", "circuitgen-demo-")
		if err != nil {
			return Summary{}, err
		}
		defer os.RemoveAll(dir)
		cfg.StateDir = dir + "/state"
	}
	srv, err := billingserver.Start()
	if err != nil {
		return Summary{}, err
	}
	defer srv.Close()
	store, err := filestore.Open(cfg.StateDir)
	if err != nil {
		return Summary{}, err
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	b := circuit.New(store, circuit.WithObserver(circuit.SlogObserver(log)))
	// Receipt lookups the open circuit rejects are answered from the
	// receipts this process remembered.
	cache := billing.NewReceiptCache()
	api := billing.NewGuardedBillingAPI(billing.NewClient(srv.URL, nil), b, billing.WithBillingAPIFallback(cache))
	defer api.Close()
	s := &story{w: w, cfg: cfg, srv: srv, b: b, api: api, cache: cache}

	fmt.Fprintf(w, "billing provider on %s; circuit state in %s\n", srv.URL, cfg.StateDir)
	fmt.Fprintf(w, "circuit %q: opens after 3 consecutive failures, cools down 5s, probe lease 2s\n", Circuit)

	s.step("The provider is healthy: charges go through")
	s.calls(ctx, "healthy", 3)
	s.lookup(ctx)

	s.step("The provider starts failing with 503: each failure counts")
	srv.SetMode(billingserver.Failing)
	s.calls(ctx, "provider failing", 3)

	s.step("The circuit is open: calls fail fast, the provider is not called; a receipt lookup is answered from the cache")
	s.calls(ctx, "open (this process)", 3)
	s.lookup(ctx)

	s.step("Four other processes share the state directory: all see it open")
	if err := s.workers(ctx, "open (4 processes)", 4); err != nil {
		return s.sum, err
	}

	snap, err := b.Snapshot(ctx, Circuit)
	if err != nil {
		return s.sum, err
	}
	wait := time.Until(snap.OpenUntil)
	s.step(fmt.Sprintf("The provider recovers (slowly: 1s per answer); cooldown ends in %.1fs", wait.Seconds()))
	srv.SetMode(billingserver.Healthy)
	srv.SetLatency(time.Second)
	time.Sleep(wait % time.Second) // so that each line below falls on a whole second left
	for left := time.Until(snap.OpenUntil).Round(time.Second); left > 0; left -= time.Second {
		fmt.Fprintf(w, "   … %ds\n", int(left/time.Second))
		time.Sleep(time.Second)
	}
	time.Sleep(max(0, time.Until(snap.OpenUntil)))

	s.step("Six processes call at once: exactly one probe reaches the provider")
	if err := s.workers(ctx, "half-open race (6 processes)", 6); err != nil {
		return s.sum, err
	}
	srv.SetLatency(0)

	s.step("The probe succeeded: the circuit is closed again")
	s.calls(ctx, "closed again", 3)

	s.table()
	return s.sum, nil
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func (s *story) step(title string) {
	s.nstep++
	fmt.Fprintf(s.w, "\n%d. %s\n", s.nstep, title)
}

// calls makes n guarded charges in this process, remembering their
// receipts in the cache.
func (s *story) calls(ctx context.Context, phase string, n int) {
	p := Phase{Name: phase, Processes: 1}
	before := s.srv.Hits()
	for i := range n {
		var r Result
		receipt, err := charge(ctx, s.api, fmt.Sprintf("cus_%d", i+1))
		classify(&r, err)
		if err == nil {
			s.cache.Remember(receipt)
			if s.first == "" {
				s.first = receipt.ID
			}
		}
		s.count(&p, r)
		fmt.Fprintf(s.w, "   charge %d: %s\n", i+1, describe(r))
	}
	p.ServerHits = s.srv.Hits() - before
	fmt.Fprintf(s.w, "   provider hits in this step: %d\n", p.ServerHits)
	s.sum.Phases = append(s.sum.Phases, p)
}

// lookup looks the first charge's receipt up: from the provider while
// the circuit is closed, from the cache (the wrapper's fallback) while it
// rejects the call. The receipt's Cached field tells which.
func (s *story) lookup(ctx context.Context) {
	before := s.srv.Hits()
	r, err := s.api.Receipt(ctx, s.first)
	switch {
	case err != nil:
		fmt.Fprintf(s.w, "   receipt %s: failed: %v\n", s.first, err)
	case r.Cached:
		fmt.Fprintf(s.w, "   receipt %s: answered from the receipt cache (Cached), the provider not called (hits: %d)\n", r.ID, s.srv.Hits()-before)
	default:
		fmt.Fprintf(s.w, "   receipt %s: from the provider\n", r.ID)
	}
}

// workers starts n worker processes that call at the same moment.
func (s *story) workers(ctx context.Context, phase string, n int) error {
	p := Phase{Name: phase, Processes: n}
	before := s.srv.Hits()
	at := time.Now().Add(500 * time.Millisecond).UnixNano()
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			args := append(append([]string{}, s.cfg.Worker[1:]...),
				"-state", s.cfg.StateDir, "-url", s.srv.URL, "-at", fmt.Sprint(at))
			cmd := exec.CommandContext(ctx, s.cfg.Worker[0], args...)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				errs[i] = fmt.Errorf("worker: %w", err)
				return
			}
			errs[i] = json.Unmarshal(out, &results[i])
		})
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			return errs[i]
		}
		s.count(&p, r)
		fmt.Fprintf(s.w, "   process %d: %s\n", r.PID, describe(r))
		for _, t := range r.Transitions {
			fmt.Fprintf(s.w, "      committed %s\n", t)
		}
	}
	p.ServerHits = s.srv.Hits() - before
	fmt.Fprintf(s.w, "   provider hits in this step: %d\n", p.ServerHits)
	s.sum.Phases = append(s.sum.Phases, p)
	return nil
}

func (s *story) count(p *Phase, r Result) {
	p.Calls++
	switch r.Outcome {
	case "ok":
		p.OK++
	case "rejected":
		p.Rejected++
	default:
		p.Failed++
	}
}

func describe(r Result) string {
	switch r.Outcome {
	case "ok":
		return "ok"
	case "rejected":
		why := "open"
		if r.HalfOpen {
			why = "half-open, another process's probe in flight"
		}
		return fmt.Sprintf("rejected without calling the provider (OpenError: %s; Retry-After %ds)", why, r.RetryAfter)
	}
	return "failed: " + r.Error
}

func (s *story) table() {
	fmt.Fprintf(s.w, "\nSummary\n")
	tw := tabwriter.NewWriter(s.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   phase\tprocesses\tcalls\tok\tfailed\trejected\tprovider hits")
	var t Phase
	for _, p := range s.sum.Phases {
		fmt.Fprintf(tw, "   %s\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Name, p.Processes, p.Calls, p.OK, p.Failed, p.Rejected, p.ServerHits)
		t.Calls += p.Calls
		t.OK += p.OK
		t.Failed += p.Failed
		t.Rejected += p.Rejected
		t.ServerHits += p.ServerHits
	}
	fmt.Fprintf(tw, "   total\t\t%d\t%d\t%d\t%d\t%d\n", t.Calls, t.OK, t.Failed, t.Rejected, t.ServerHits)
	_ = tw.Flush()
}
