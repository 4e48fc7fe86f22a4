//go:build unix

package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// envOpener gives an opener process the cluster's addresses (separated by
// commas), the key prefix and the circuit's name, separated by spaces.
const envOpener = "CIRCUITGEN_TEST_REDIS_OPENER"

// openerSays marks an opener process's replies on its standard output.
const openerSays = "@@opener "

// failoverPolicy is the policy of the failover tests: one failure opens
// the circuit, for longer than a test.
var failoverPolicy = circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}

// opener is another server of the fleet: this test binary re-executed
// (TestClusterOpenerProcess), with a store of its own, without copies, on
// a cluster client of its own. It opens the circuit, or clears it, when
// told to.
type opener struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan string
	stderr  strings.Builder
}

// startOpener starts an opener process of circuit name on the cluster,
// under prefix, and waits until it is connected.
func startOpener(t *testing.T, cl *testCluster, prefix, name string) *opener {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	o := &opener{replies: make(chan string, 1)}
	o.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^TestClusterOpenerProcess$", "-test.count=1")
	o.cmd.Env = append(os.Environ(), envOpener+"="+strings.Join(cl.addrs, ",")+" "+prefix+" "+name)
	o.cmd.Stderr = &o.stderr
	var err error
	if o.in, err = o.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := o.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(o.replies)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if msg, ok := strings.CutPrefix(sc.Text(), openerSays); ok {
				o.replies <- msg
			}
		}
	}()
	t.Cleanup(func() {
		_ = o.in.Close() // the process ends at the end of its input
		for range o.replies {
		}
		_ = o.cmd.Wait()
		cancel()
	})
	if msg, err := o.reply(); err != nil || msg != "ready" {
		t.Fatalf("opener process: %q, %v", msg, err)
	}
	return o
}

// reply returns the opener's next reply.
func (o *opener) reply() (string, error) {
	select {
	case msg, ok := <-o.replies:
		if !ok {
			return "", fmt.Errorf("the opener process ended: %s", o.stderr.String())
		}
		return msg, nil
	case <-time.After(30 * time.Second):
		return "", errors.New("the opener process did not answer within 30s")
	}
}

// do has the opener open ("open") or clear ("clear") the circuit, and
// returns when the try that made the change began and when it returned,
// the server having acknowledged the change, as the opener's clock (the
// same host's) read them.
func (o *opener) do(verb string) (began, acked time.Time, err error) {
	if _, err := io.WriteString(o.in, verb+"\n"); err != nil {
		return began, acked, err
	}
	msg, err := o.reply()
	if err != nil {
		return began, acked, err
	}
	f := strings.Fields(msg)
	if len(f) != 3 || f[0] != "done" {
		return began, acked, fmt.Errorf("opener process: %s: %q", verb, msg)
	}
	b, err1 := strconv.ParseInt(f[1], 10, 64)
	a, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return began, acked, fmt.Errorf("opener process: %s: %q", verb, msg)
	}
	return time.Unix(0, b), time.Unix(0, a), nil
}

// TestClusterOpenerProcess is the body of the opener processes. Outside one
// it passes at once.
func TestClusterOpenerProcess(t *testing.T) {
	spec := os.Getenv(envOpener)
	if spec == "" {
		return
	}
	f := strings.Fields(spec)
	if len(f) != 3 {
		t.Fatalf("%s=%q: want addresses, prefix and name", envOpener, spec)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(f[0], ","), ContextTimeoutEnabled: true})
	defer c.Close()
	b := circuit.New(open(t, c, redisstore.WithPrefix(f[1])))
	name := f[2]
	ctx := t.Context()
	if _, err := b.Snapshot(ctx, name); err != nil { // connect before the first command
		t.Fatal(err)
	}
	fmt.Println(openerSays + "ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var (
			err   error
			began time.Time
		)
		// A cluster in the middle of a failover refuses commands for a
		// while: the change is retried, for up to ten seconds.
		for deadline := time.Now().Add(10 * time.Second); ; {
			switch in.Text() {
			case "open":
				// A load first, so that the timed try does not include
				// the client's search for the circuit's master.
				if _, err = b.Snapshot(ctx, name); err != nil {
					break
				}
				began = time.Now()
				err = b.Run(ctx, name, failoverPolicy, op(circuit.Failure))
				var se *circuit.StateError
				if errors.Is(err, errDown) && !errors.As(err, &se) || errors.Is(err, circuit.ErrOpen) {
					err = nil // the failure was counted (by this try or an earlier one whose reply was lost): the circuit is open
				}
			case "clear":
				began = time.Now()
				err = b.Clear(ctx, name)
			default:
				t.Fatalf("opener process: unknown command %q", in.Text())
			}
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			fmt.Println(openerSays+"err", err)
			continue
		}
		fmt.Println(openerSays+"done", began.UnixNano(), time.Now().UnixNano())
	}
}
