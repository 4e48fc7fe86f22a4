package bench

// Two more in-memory peers, in the rows of the lean peers of peers_test.go
// (closedPeers, rejectionPeers, BenchmarkClosedSuccessParallel; rubyist in
// manyPeers too):
//
//   - rubyist: github.com/rubyist/circuitbreaker v2.2.1 (Breaker.Call, no
//     call timeout), with ConsecutiveTripFunc and a constant backoff of the
//     open timeout: once tripped it lets a call through when the backoff has
//     passed since the last failure, and its default backoff is exponential
//     from 500ms;
//   - hystrix: github.com/afex/hystrix-go of 2018-05-02 (fa1af6a; the
//     synchronous hystrix.Do, no fallback), one command per sub-benchmark:
//     its circuits are global, by name, and live as long as the process. It
//     has no consecutive-failure rule: a circuit opens when its rolling 10s
//     window holds at least RequestVolumeThreshold requests and
//     ErrorPercentThreshold percent of them failed, so N requests that all
//     failed (100%) is what stands for N consecutive failures. Every call
//     runs in a new goroutine, with a timer goroutine beside it, and is
//     counted in the metrics by another, after Do has returned: a failure
//     opens the circuit at the first call that finds it counted.
//
// Each is configured as the other peers are: opens after 3 failures for
// 30s (closed rows), or after 1 for a day (rejection rows).

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/afex/hystrix-go/hystrix"
	"github.com/cenk/backoff"
	rubyist "github.com/rubyist/circuitbreaker"
)

// newRubyist returns a rubyist breaker that opens after threshold
// consecutive failures for timeout.
func newRubyist(threshold int64, timeout time.Duration) *rubyist.Breaker {
	return rubyist.NewBreakerWithOptions(&rubyist.Options{
		ShouldTrip: rubyist.ConsecutiveTripFunc(threshold),
		BackOff:    backoff.NewConstantBackOff(timeout),
	})
}

// hystrixMaxConcurrent is the hystrix commands' MaxConcurrentRequests. Do
// returns as soon as the call has, before its goroutine gives the ticket
// back (through an unbuffered channel to one goroutine per circuit), so a
// loop of calls keeps thousands of tickets out: up to 5,500 seen with one
// goroutine and 8,500 with 8, over 300ms. With 10 (the default) or even
// 2,048 the loop fails with ErrMaxConcurrency.
const hystrixMaxConcurrent = 1 << 16

// hystrixSeq numbers the hystrix commands.
var hystrixSeq atomic.Int64

// newHystrix configures a new hystrix command, for b, that opens once its
// rolling window holds threshold requests, all failed, for sleep, and
// returns its name. It creates the command's circuit, which the first call
// would (with its tickets: a millisecond and 0.5 MB), before the timed loop.
func newHystrix(b *testing.B, threshold int, sleep time.Duration) string {
	name := fmt.Sprintf("%s#%d", b.Name(), hystrixSeq.Add(1))
	hystrix.ConfigureCommand(name, hystrix.CommandConfig{
		RequestVolumeThreshold: threshold,
		ErrorPercentThreshold:  100,
		SleepWindow:            int(sleep / time.Millisecond),
		MaxConcurrentRequests:  hystrixMaxConcurrent,
	})
	if _, _, err := hystrix.GetCircuit(name); err != nil {
		b.Fatal(err)
	}
	return name
}

// hystrixOpened waits until the failure made on the command name is
// counted and opens its circuit, failing b if that takes 5s, then checks
// that a call is rejected. It polls IsOpen, the check a call makes (and
// which opens the circuit), rather than calls: a call that passed before
// the failure was counted would be a success, and the window no longer
// all failures.
func hystrixOpened(b *testing.B, name string) {
	cb, _, err := hystrix.GetCircuit(name)
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !cb.IsOpen(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			b.Fatalf("hystrix: circuit %s still closed 5s after its failures", name)
		}
	}
	want(b, hystrix.Do(name, eapacheUp, nil), hystrix.ErrCircuitOpen)
}

// hystrixSettle stops the timer and waits until hystrix's goroutines have
// done what the calls left them (the metrics of up to 2,000 calls are
// queued when the last returns): until the process uses less than a tenth
// of a CPU over 5ms, for at most a second. That work then counts in
// hystrix's cpu-ns/op, not in the next sub-benchmark's.
func hystrixSettle(b *testing.B) {
	b.StopTimer()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		start := cpuTime()
		time.Sleep(5 * time.Millisecond)
		if cpuTime()-start < 500*time.Microsecond {
			return
		}
	}
}

// closedMorePeers are closedPeers' sub-benchmarks of rubyist and hystrix.
func closedMorePeers() []impl {
	return []impl{
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(3, 30*time.Second)
			for b.Loop() {
				want(b, cb.Call(eapacheUp, 0), nil)
			}
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 3, 30*time.Second)
			for b.Loop() {
				want(b, hystrix.Do(name, eapacheUp, nil), nil)
			}
			hystrixSettle(b)
		}},
	}
}

// rejectionMorePeers are rejectionPeers' sub-benchmarks of rubyist and
// hystrix: one failure opens for a day, then every call is rejected.
func rejectionMorePeers() []impl {
	return []impl{
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(1, 24*time.Hour)
			want(b, cb.Call(eapacheDown, 0), ErrDown)
			for b.Loop() {
				want(b, cb.Call(eapacheUp, 0), rubyist.ErrBreakerOpen)
			}
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 1, 24*time.Hour)
			want(b, hystrix.Do(name, eapacheDown, nil), ErrDown)
			hystrixOpened(b, name)
			for b.Loop() {
				want(b, hystrix.Do(name, eapacheUp, nil), hystrix.ErrCircuitOpen)
			}
			hystrixSettle(b)
		}},
	}
}

// parallelMorePeers are BenchmarkClosedSuccessParallel's sub-benchmarks of
// rubyist and hystrix; loop runs a call in its 8 goroutines.
func parallelMorePeers(loop func(b *testing.B, call func() error)) []impl {
	return []impl{
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(3, 30*time.Second)
			loop(b, func() error { return cb.Call(eapacheUp, 0) })
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 3, 30*time.Second)
			loop(b, func() error { return hystrix.Do(name, eapacheUp, nil) })
			hystrixSettle(b)
		}},
	}
}
