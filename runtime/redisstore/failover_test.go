//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// seenWithin is how long an opening made by another server may take to
// reach a cached store after a failover: the target on loopback is 50 ms
// (the delays are logged); this leaves room for a loaded machine.
const seenWithin = time.Second

// TestClusterFailover fails over a master of a Redis Cluster of the test's
// own (three masters, one replica each) under a cached store, gracefully
// (CLUSTER FAILOVER) and by killing the master, and checks that no call is
// admitted from a copy that the failover made stale.
func TestClusterFailover(t *testing.T) {
	cl := startCluster(t)
	touched := map[string]bool{} // the nodes of the shards failed over
	t.Run("Manual", func(t *testing.T) { testManualFailover(t, cl, touched) })
	t.Run("MasterKilled", func(t *testing.T) { testMasterKilled(t, cl, touched) })
}

// testManualFailover has the replica of the master that holds a circuit
// take over (CLUSTER FAILOVER), while a cached store keeps a copy of the
// circuit, closed. Another process then opens the circuit on the new
// master: the store must see the opening within seenWithin, whether or not
// it has noticed the failover yet. The store then drops the copies it took
// before the failover and tracks the new master (and no longer the old),
// and an opening made on the new master reaches it through that
// connection.
func testManualFailover(t *testing.T, cl *testCluster, touched map[string]bool) {
	s, b, prefix := cachedOnCluster(t, cl)
	name, master, replica := circuitOn(t, cl, s, touched, "")
	bystander, _, _ := circuitOn(t, cl, s, nil, master) // another circuit of the same master, which nobody writes
	touched[master], touched[replica] = true, true
	o := startOpener(t, cl, prefix, name)
	keepCopy(t, b, s, name)
	keepCopy(t, b, s, bystander)
	if n := cl.trackers(t, master); n != 1 {
		t.Fatalf("%d invalidation connections on the master %s before the failover, want 1", n, master)
	}

	if err := cl.client[replica].Do(t.Context(), "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatalf("CLUSTER FAILOVER on %s: %v", replica, err)
	}
	slot := cl.slot(t, s.Key(name))
	took := poll(t, 10*time.Second, "the replica serves the slot", func() bool { return cl.agreed(t, slot, replica) })
	t.Logf("CLUSTER FAILOVER: %s took over slot %d from %s in %v", replica, slot, master, took.Round(time.Millisecond))

	// At once: the store may still be tracking the old master, now a
	// replica, which passes the invalidations of the writes it replicates.
	what := fmt.Sprintf("an opening on the new master right after the failover (the store still tracking the old: %v)", cl.trackers(t, master) == 1)
	openingSeen(t, what, b, o, name)

	// The copies taken before the failover are dropped, and the store
	// tracks the new master instead of the old.
	poll(t, 5*time.Second, "the copy taken before the failover is dropped", func() bool { return !s.Cached(bystander) })
	moved := poll(t, 5*time.Second, "an invalidation connection on the new master and none on the old", func() bool {
		return s.Live() && cl.trackers(t, replica) == 1 && cl.trackers(t, master) == 0
	})
	t.Logf("invalidation connection moved to the new master %v after the opening", moved.Round(time.Millisecond))

	if _, _, err := o.do("clear"); err != nil {
		t.Fatal(err)
	}
	keepCopy(t, b, s, name)
	openingSeen(t, "an opening on the new master, tracked", b, o, name)
}

// testMasterKilled kills, with SIGKILL, the master that holds a circuit of
// which a cached store has a copy. The store drops its copies as soon as
// its invalidation connection to that master ends (within 100ms, well
// before the stall bound would drop them), and admits no call of
// the circuit until the master's replica has taken over (calls fail closed
// with a StateError). Once it has, calls are admitted again, the store
// tracks the new master, and an opening made there by another process
// reaches it within seenWithin. A store without copies, whose client knew
// the cluster's layout before the kill, is admitted again too, within
// five seconds of the promotion.
func testMasterKilled(t *testing.T, cl *testCluster, touched map[string]bool) {
	s, b, prefix := cachedOnCluster(t, cl)
	name, master, replica := circuitOn(t, cl, s, touched, "")
	touched[master], touched[replica] = true, true
	o := startOpener(t, cl, prefix, name)
	keepCopy(t, b, s, name)
	// And a store without copies, on a client of its own that knows the
	// cluster's layout before the kill.
	ub := circuit.New(open(t, cl.newClient(t), redisstore.WithPrefix(prefix)))
	if ran, err := call(t, ub, name, time.Second); !ran || err != nil {
		t.Fatalf("a call through the store without copies: %v", err)
	}

	cl.kill(t, master)
	killed := time.Now()
	d := testenv.WaitFor(t, 100*time.Millisecond, "the copies are dropped", func() bool { return !s.Live() && !s.Cached(name) })
	t.Logf("master %s killed: copies dropped after %v", master, d)

	// Until the replica is master, nothing serves the circuit's slot: a
	// call that ends before the replica says it is master was not
	// admitted by any server, so admitting it would be serving a copy.
	var calls, failed int
	for strings.Contains(cl.info(t, replica), "role:slave") {
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("the replica %s was not promoted within 20s", replica)
		}
		ran, err := call(t, b, name, 300*time.Millisecond)
		if !strings.Contains(cl.info(t, replica), "role:slave") {
			break // promoted during the call
		}
		calls++
		var se *circuit.StateError
		switch {
		case ran:
			t.Fatalf("a call was admitted %v after the master was killed, with no master for its slot (%v)", time.Since(killed), err)
		case errors.As(err, &se):
			failed++
		default:
			t.Fatalf("a call with no master for its slot: %v, want a StateError", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	promoted := time.Since(killed)
	t.Logf("replica %s promoted %v after the kill; meanwhile %d calls, all refused (%d StateErrors)", replica, promoted.Round(time.Millisecond), calls, failed)
	if calls == 0 {
		t.Fatal("no call was made while the slot had no master")
	}

	for _, st := range []struct {
		what string
		b    *circuit.Breaker
	}{{"with copies", b}, {"without copies", ub}} {
		poll(t, 5*time.Second, "a call admitted again "+st.what, func() bool {
			ran, err := call(t, st.b, name, 300*time.Millisecond)
			return ran && err == nil
		})
		t.Logf("calls admitted again %s %v after the promotion", st.what, (time.Since(killed) - promoted).Round(time.Millisecond))
	}
	poll(t, 5*time.Second, "the new master tracked", func() bool { return s.Live() && cl.trackers(t, replica) == 1 })
	t.Logf("the new master tracked %v after the promotion", (time.Since(killed) - promoted).Round(time.Millisecond))
	keepCopy(t, b, s, name)
	openingSeen(t, "an opening on the promoted replica", b, o, name)
}

// cachedOnCluster returns a cached store on a client of the cluster, under
// a prefix of its own, a Breaker on it, and the prefix.
func cachedOnCluster(t *testing.T, cl *testCluster) (*redisstore.Store, *circuit.Breaker, string) {
	t.Helper()
	prefix := "circuitgen-test:" + driver.NewID()[:16] + ":"
	s := newCached(t, cl.newClient(t), prefix)
	return s, circuit.New(s), prefix
}

// circuitOn returns the name of a circuit whose slot is served by a master,
// with one replica, neither of which is in avoid; or, with master given,
// one of that master's other than any returned so far.
func circuitOn(t *testing.T, cl *testCluster, s *redisstore.Store, avoid map[string]bool, master string) (name, m, replica string) {
	t.Helper()
	live := ""
	for _, addr := range cl.addrs {
		if !cl.dead[addr] {
			live = addr
			break
		}
	}
	for i := range 1000 {
		name = fmt.Sprintf("billing-api-%d", i)
		if master != "" {
			name = fmt.Sprintf("ledger-%d", i)
		}
		m, replicas := cl.owner(t, live, cl.slot(t, s.Key(name)))
		switch {
		case master != "" && m == master:
			return name, m, ""
		case master == "" && len(replicas) == 1 && !avoid[m] && !avoid[replicas[0]]:
			return name, m, replicas[0]
		}
	}
	t.Fatal("no circuit name falls on a suitable master")
	return
}

// keepCopy makes calls until the store keeps a copy of the circuit.
func keepCopy(t *testing.T, b *circuit.Breaker, s *redisstore.Store, name string) {
	t.Helper()
	testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connection is up", s.Live)
	for i := 0; !s.Cached(name); i++ {
		if ran, err := call(t, b, name, time.Second); !ran || err != nil || i > 100 {
			t.Fatalf("%s: call %d = %v (ran %v), copy %v", name, i, err, ran, s.Cached(name))
		}
	}
}

// call makes one call of a healthy operation under a context of d, and
// reports whether it was admitted.
func call(t *testing.T, b *circuit.Breaker, name string, d time.Duration) (ran bool, err error) {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	err = b.Run(ctx, name, failoverPolicy, func(context.Context) (circuit.Outcome, error) {
		ran = true
		return circuit.Success, nil
	})
	return ran, err
}

// openingSeen has the opener open the circuit while this process calls it
// through b, which keeps a copy of it, closed. It fails the test unless a
// call is rejected with an *OpenError within seenWithin of the opening,
// and every call after that first rejection is rejected too. It logs the
// delay from the opening to the start of the first rejected call, as a
// range: from the start of the opener's successful try (what the test
// holds to seenWithin) and from its acknowledgement by the server (0 when
// the opening was seen before the opener read its clock), and how many
// calls begun after the start were admitted.
func openingSeen(t *testing.T, what string, b *circuit.Breaker, o *opener, name string) {
	t.Helper()
	type opening struct {
		began, acked time.Time
		err          error
	}
	done := make(chan opening, 1)
	go func() {
		began, acked, err := o.do("open")
		done <- opening{began, acked, err}
	}()
	type attempt struct {
		began time.Time
		ran   bool
	}
	var (
		calls  []attempt
		opened opening
		got    bool
	)
	for {
		if !got {
			select {
			case opened = <-done:
				got = true
				if opened.err != nil {
					t.Fatal(opened.err)
				}
			default:
			}
		}
		began := time.Now()
		ran, err := call(t, b, name, time.Second)
		calls = append(calls, attempt{began, ran})
		if errors.Is(err, circuit.ErrOpen) {
			break
		}
		if time.Since(calls[0].began) > 30*time.Second {
			t.Fatalf("%s: no call rejected 30s after the opener was told to open the circuit (opened: %v; last call: %v, ran %v)", what, got, err, ran)
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !got {
		if opened = <-done; opened.err != nil {
			t.Fatal(opened.err)
		}
	}
	first := calls[len(calls)-1].began
	stale := 0
	for _, c := range calls {
		if c.ran && c.began.After(opened.began) {
			stale++
		}
	}
	hi, lo := first.Sub(opened.began), max(first.Sub(opened.acked), 0)
	t.Logf("%s: seen %v to %v after the opening (%d calls admitted meanwhile)", what, lo, hi, stale)
	if hi > seenWithin {
		t.Errorf("%s: an opening made by another process was seen %v after it began (%d calls admitted meanwhile), want at most %v", what, hi, stale, seenWithin)
	}
	for i := range 10 {
		if ran, err := call(t, b, name, time.Second); ran || !errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("%s: call %d after the opening was seen: %v (ran %v), want an OpenError", what, i, err, ran)
		}
	}
}
