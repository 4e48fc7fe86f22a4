package bench

// hystrix, a peer of peers_test.go's rows: github.com/afex/hystrix-go of
// 2018-05-02 (fa1af6a; the synchronous hystrix.Do, no fallback), one
// command per sub-benchmark: its circuits are global, by name, and live as
// long as the process. It has no consecutive-failure rule: a circuit opens
// when its rolling 10s window holds at least RequestVolumeThreshold
// requests and ErrorPercentThreshold percent of them failed, so N requests
// that all failed (100%) stand for N consecutive failures. Every call runs
// in a new goroutine, with a timer goroutine beside it, and is counted in
// the metrics by another, after Do has returned: a failure opens the
// circuit at the first call that finds it counted.

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/afex/hystrix-go/hystrix"
	"github.com/circuitgen/circuitgen/internal/testenv"
)

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
	testenv.WaitFor(b, 5*time.Second, "hystrix circuit "+name+" open after its failures", cb.IsOpen)
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
