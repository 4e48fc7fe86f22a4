package redisstore_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// newClusterClient returns a client of the test cluster, closed when the
// test ends.
func newClusterClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	addrs := strings.Split(testenv.Env(t, "CIRCUITGEN_REDIS_CLUSTER", "start_redis_cluster"), ",")
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.ForEachMaster(t.Context(), func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	return c
}

// clusterPrefix returns a key prefix of the test's own on the cluster,
// whose keys are removed from every master when the test ends.
func clusterPrefix(t testing.TB, c *redis.ClusterClient) string {
	t.Helper()
	prefix := "circuitgen-test:" + driver.NewID()[:16] + ":"
	t.Cleanup(func() {
		_ = c.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error {
			keys, _ := n.Keys(ctx, prefix+"*").Result()
			for _, k := range keys {
				n.Del(ctx, k)
			}
			return nil
		})
	})
	return prefix
}

// TestClusterConformance runs the drivertest suite on a three-master Redis
// Cluster, without copies and with them (one invalidation connection per
// master).
func TestClusterConformance(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "CacheOff", true: "CacheOn"}[cached], func(t *testing.T) {
			drivertest.Run(t, drivertest.Config{
				Open: func(t *testing.T) circuit.Store {
					c := newClusterClient(t)
					if cached {
						return newCached(t, c, clusterPrefix(t, c))
					}
					return open(t, c, redisstore.WithPrefix(clusterPrefix(t, c)))
				},
				Corrupt: func(t *testing.T, s circuit.Store, name string) {
					rs := s.(*redisstore.Store)
					c := newClusterClient(t)
					m, err := c.MasterForKey(t.Context(), rs.Key(name))
					if err != nil {
						t.Fatal(err)
					}
					if err := setField(fieldState, "ajar")(t.Context(), m, rs.Key(name)); err != nil {
						t.Fatal(err)
					}
					testenv.WaitFor(t, time.Second, "the copy is dropped", func() bool { return !rs.Cached(name) })
				},
			})
		})
	}
}

// TestClusterInvalidation spreads circuits over the cluster's masters (each
// circuit is one key, so one slot): a cached store keeps a copy of each,
// and an opening made through another client reaches the copy, whichever
// master holds it.
func TestClusterInvalidation(t *testing.T) {
	c := newClusterClient(t)
	prefix := clusterPrefix(t, c)
	s := newCached(t, c, prefix)
	other := circuit.New(open(t, newClusterClient(t), redisstore.WithPrefix(prefix)))
	b := circuit.New(s)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	masters := map[string]bool{}
	for _, name := range []string{"billing-api", "payments", "ledger", "search", "mail", "auth", "geo", "media"} {
		m, err := c.MasterForKey(ctx, s.Key(name))
		if err != nil {
			t.Fatal(err)
		}
		masters[m.Options().Addr] = true
		warm(t, s, b, name, p)
		if err := other.Run(ctx, name, p, op(circuit.Failure)); !errors.Is(err, errDown) {
			t.Fatal(err)
		}
		d := testenv.WaitFor(t, time.Second, name+"'s copy is dropped", func() bool { return !s.Cached(name) })
		if err := b.Run(ctx, name, p, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("%s: Run after the opening = %v, want it rejected", name, err)
		}
		t.Logf("%s (master %s): opening seen after %v", name, m.Options().Addr, d)
	}
	if len(masters) < 2 {
		t.Errorf("the circuits fell on %d master(s), want several", len(masters))
	}
}

// newTLSClient returns a client of the TLS test server that trusts its CA.
func newTLSClient(t testing.TB) *redis.Client {
	t.Helper()
	url := testenv.Env(t, "CIRCUITGEN_REDIS_TLS_URL", "start_redis_tls")
	pem, err := os.ReadFile(testenv.Env(t, "CIRCUITGEN_REDIS_TLS_CA", "start_redis_tls"))
	if err != nil {
		t.Fatal(err)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in the CA file")
	}
	opt.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	opt.ContextTimeoutEnabled = true
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("ping %s: %v", url, err)
	}
	return c
}

// TestTLSConformance runs the drivertest suite over rediss:// against a
// redis-server with a self-signed certificate, with copies (whose
// invalidation connection speaks TLS too) and without.
func TestTLSConformance(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "CacheOff", true: "CacheOn"}[cached], func(t *testing.T) {
			drivertest.Run(t, drivertest.Config{
				Open: func(t *testing.T) circuit.Store {
					c := newTLSClient(t)
					if cached {
						return newCached(t, c, testPrefix(t, c))
					}
					return open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
				},
			})
		})
	}
}

// TestTLSUntrusted connects to the TLS server without trusting its CA:
// New refuses it, with the certificate's verification error.
func TestTLSUntrusted(t *testing.T) {
	opt, err := redis.ParseURL(testenv.Env(t, "CIRCUITGEN_REDIS_TLS_URL", "start_redis_tls"))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s, err := redisstore.New(ctx, c)
	var ce *tls.CertificateVerificationError
	if err == nil {
		_ = s.Close()
	}
	if !errors.As(err, &ce) {
		t.Fatalf("New against an untrusted certificate = %v, want an error wrapping a certificate verification error", err)
	}
}
