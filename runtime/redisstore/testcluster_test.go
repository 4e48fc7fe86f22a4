//go:build unix

package redisstore_test

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// clusterNodeTimeout is the --cluster-node-timeout of the tests' own
// clusters: a master is failed over about two of these after its death.
const clusterNodeTimeout = time.Second

// testCluster is a Redis Cluster of a test's own, on loopback: three
// masters with one replica each, stopped when the test ends.
type testCluster struct {
	addrs  []string
	server map[string]*exec.Cmd // by address
	client map[string]*redis.Client
	dead   map[string]bool
}

// startCluster starts six redis-servers with --cluster-enabled yes, joins
// them with redis-cli --cluster create --cluster-replicas 1, and returns
// the cluster once every node sees every slot served by a master with a
// replica in sync. Without redis-server or redis-cli the test is skipped,
// or fails when CI=true.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	bin, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		testenv.Missing(t, "redis-server and redis-cli must be on PATH to start a cluster with replicas (apt-get install -y redis-server)")
	}
	began := time.Now()
	cl := &testCluster{server: map[string]*exec.Cmd{}, client: map[string]*redis.Client{}, dead: map[string]bool{}}
	dir := t.TempDir()
	for i, port := range freePorts(t, 6) {
		d := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(d, "nodes.conf"),
			"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout/time.Millisecond)),
			"--cluster-replica-validity-factor", "0", // a replica may always take over
			"--repl-diskless-sync-delay", "0", // replicas sync at once
			"--repl-ping-replica-period", "1", // CLUSTER SLOTS lists a replica once its offset is not zero
			"--dir", d, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(d, "redis.log"))
		testenv.Start(t, cmd)
		c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		cl.addrs = append(cl.addrs, addr)
		cl.server[addr], cl.client[addr] = cmd, c
	}
	for _, addr := range cl.addrs {
		poll(t, 10*time.Second, addr+" answers", func() bool { return cl.client[addr].Ping(t.Context()).Err() == nil })
	}
	create := exec.CommandContext(t.Context(), cli, append(append([]string{"--cluster", "create"}, cl.addrs...), "--cluster-replicas", "1", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	created := time.Since(began)
	t.Cleanup(func() { // what each node said, when a test of the cluster failed
		if t.Failed() {
			for i, addr := range cl.addrs {
				log, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(i), "redis.log"))
				t.Logf("%s, the end of its log:\n%s", addr, log[max(0, len(log)-2000):])
			}
		}
	})
	// Setup, not a bound under test: a loaded machine (CI runs packages
	// side by side) has taken over 20s.
	poll(t, time.Minute, "every node sees three masters with a replica in sync", func() bool {
		for _, addr := range cl.addrs {
			if !cl.settled(t, addr) {
				return false
			}
		}
		return true
	})
	t.Logf("cluster of 3 masters and 3 replicas up in %v (created in %v)", time.Since(began).Round(time.Millisecond), created.Round(time.Millisecond))
	return cl
}

// freePorts returns n loopback ports that are free, as is each one's
// cluster bus port (port + 10000).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for try := 0; len(ports) < n; try++ {
		if try == 1000 {
			t.Fatal("no free pair of loopback ports (port, port+10000)")
		}
		p := 20000 + rand.IntN(35000)
		l1, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		_ = l1.Close()
		if err != nil {
			continue
		}
		_ = l2.Close()
		ports = append(ports, p)
	}
	return ports
}

// settled reports whether the node at addr is in a cluster whose 16384
// slots are served by three masters, each with a replica whose link is up.
func (cl *testCluster) settled(t *testing.T, addr string) bool {
	ctx := t.Context()
	info, err := cl.client[addr].ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") {
		return false
	}
	shards, err := cl.shards(ctx, addr)
	if err != nil {
		return false
	}
	masters := map[string]bool{}
	for _, s := range shards {
		if s.master == "" || len(s.replicas) == 0 {
			return false
		}
		masters[s.master] = true
		for _, r := range s.replicas {
			if !strings.Contains(cl.info(t, r), "master_link_status:up") {
				return false
			}
		}
	}
	return len(masters) == 3
}

// A shard is a set of slot ranges, the master serving them and the
// replicas that are not marked failed, as CLUSTER SHARDS reports them.
type shard struct {
	slots    []redis.SlotRange
	master   string
	replicas []string
}

// shards returns the shards that serve slots, as the node at addr sees them.
func (cl *testCluster) shards(ctx context.Context, addr string) ([]shard, error) {
	got, err := cl.client[addr].ClusterShards(ctx).Result()
	if err != nil {
		return nil, err
	}
	var out []shard
	for _, g := range got {
		if len(g.Slots) == 0 {
			continue
		}
		s := shard{slots: g.Slots}
		for _, n := range g.Nodes {
			a := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
			switch {
			case n.Role == "master":
				s.master = a
			case n.Health != "failed":
				s.replicas = append(s.replicas, a)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// info returns the node's INFO replication, or "" when it does not answer.
func (cl *testCluster) info(t *testing.T, addr string) string {
	c, ok := cl.client[addr]
	if !ok || cl.dead[addr] {
		return ""
	}
	s, _ := c.Info(t.Context(), "replication").Result()
	return s
}

// newClient returns a cluster client of the cluster, as an application
// would make it, closed when the test ends.
func (cl *testCluster) newClient(t *testing.T) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// slot returns the cluster slot of key.
func (cl *testCluster) slot(t *testing.T, key string) int64 {
	t.Helper()
	n, err := cl.client[cl.addrs[0]].ClusterKeySlot(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// owner returns the master and the replicas of slot as the live node at
// addr sees them.
func (cl *testCluster) owner(t *testing.T, addr string, slot int64) (master string, replicas []string) {
	shards, err := cl.shards(t.Context(), addr)
	if err != nil {
		return "", nil
	}
	for _, s := range shards {
		for _, r := range s.slots {
			if r.Start <= slot && slot <= r.End {
				return s.master, s.replicas
			}
		}
	}
	return "", nil
}

// agreed reports whether every live node sees master serving slot, and
// master says it is one.
func (cl *testCluster) agreed(t *testing.T, slot int64, master string) bool {
	for _, addr := range cl.addrs {
		if cl.dead[addr] {
			continue
		}
		if m, _ := cl.owner(t, addr, slot); m != master {
			return false
		}
	}
	return strings.Contains(cl.info(t, master), "role:master")
}

// kill kills the node at addr with SIGKILL and reaps it.
func (cl *testCluster) kill(t *testing.T, addr string) {
	t.Helper()
	cl.dead[addr] = true
	_ = cl.client[addr].Close()
	if err := cl.server[addr].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cl.server[addr].Wait()
}

// trackers returns how many of the node's connections are invalidation
// connections of cached stores.
func (cl *testCluster) trackers(t *testing.T, addr string) int {
	list, err := cl.client[addr].ClientList(t.Context()).Result()
	if err != nil {
		return -1
	}
	return strings.Count(list, " name="+redisstore.TrackerName+" ")
}

// poll is testenv.WaitFor for conditions that cost round trips: it checks
// cond every 10ms.
func poll(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	return testenv.Poll(t, 10*time.Millisecond, d, what, cond)
}
