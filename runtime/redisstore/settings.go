package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/redis/go-redis/v9"
)

// ErrReplica is wrapped by New's error when a server that should hold
// records is a replica, and by the errors and reports of a store whose
// server has become one since (a failover's demotion): a replica serves
// what it last replicated, and a process on it would admit calls into
// circuits opened since on the master.
var ErrReplica = errors.New("redisstore: the server is a replica")

// checkSettings asks every server holding records (the client's, or each
// master of a cluster or shard of a ring) for appendonly, maxmemory-policy
// and its role, and returns what it finds unsafe, each an error wrapping
// driver.ErrUnsafe; its error is a server that could not be reached, or a
// replica (ErrReplica).
func checkSettings(ctx context.Context, client redis.UniversalClient) ([]error, error) {
	var (
		mu       sync.Mutex
		findings []error
	)
	check := func(ctx context.Context, c *redis.Client) error {
		f, err := serverSettings(ctx, c)
		mu.Lock()
		findings = append(findings, f...)
		mu.Unlock()
		return err
	}
	var err error
	switch c := client.(type) {
	case *redis.Client:
		err = check(ctx, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, check)
	case *redis.Ring:
		err = c.ForEachShard(ctx, check)
	default:
		return nil, fmt.Errorf("redisstore: a %T is not a go-redis Client, ClusterClient or Ring", client)
	}
	if errors.Is(err, ErrReplica) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: read the server's settings: %w", err)
	}
	return findings, nil
}

// isMaster returns nil when the server is a master, an error wrapping
// ErrReplica when it is not, and a redis.Error when it answers neither ROLE
// nor INFO replication (an ACL, a managed service that renamed them).
func isMaster(ctx context.Context, c *redis.Client) error {
	var role string
	v, err := c.Do(ctx, "ROLE").Slice()
	var reply redis.Error
	switch {
	case err == nil && len(v) > 0:
		role, _ = v[0].(string)
	case errors.As(err, &reply):
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(info, "\n") {
			if r, ok := strings.CutPrefix(strings.TrimSpace(line), "role:"); ok {
				role = r
			}
		}
	case err != nil:
		return err
	}
	if role != "master" {
		return fmt.Errorf("%w: %s is a %q, not a master: it serves what it last replicated (point the client at the master)",
			ErrReplica, c.Options().Addr, role)
	}
	return nil
}

// serverSettings checks one server's settings.
func serverSettings(ctx context.Context, c *redis.Client) ([]error, error) {
	addr := c.Options().Addr
	var findings []error
	var reply redis.Error
	if err := isMaster(ctx, c); errors.As(err, &reply) {
		findings = append(findings, fmt.Errorf("%w: redisstore: server %s: cannot read its role (%v): a replica would serve what it last replicated",
			driver.ErrUnsafe, addr, err))
	} else if err != nil {
		return nil, err
	}
	got := map[string]string{}
	for _, name := range []string{"appendonly", "maxmemory-policy"} {
		v, err := c.ConfigGet(ctx, name).Result()
		if errors.As(err, &reply) {
			// CONFIG refused (an ACL, a managed service): say so.
			return append(findings, fmt.Errorf("%w: redisstore: server %s: cannot read %s (%v): the store's guarantees need appendonly yes and maxmemory-policy noeviction",
				driver.ErrUnsafe, addr, name, err)), nil
		}
		if err != nil {
			return nil, err
		}
		got[name] = v[name]
	}
	if got["appendonly"] != "yes" {
		findings = append(findings, fmt.Errorf("%w: redisstore: server %s: appendonly is %q: a restart loses the records written since the last snapshot, and with them open circuits (set appendonly yes)",
			driver.ErrUnsafe, addr, got["appendonly"]))
	}
	// allkeys-* may evict records; volatile-* the window counts (which have
	// a TTL, and under volatile-ttl go first) and Clear's tombstones.
	if p := got["maxmemory-policy"]; p != "noeviction" {
		findings = append(findings, fmt.Errorf("%w: redisstore: server %s: maxmemory-policy is %s: the server may evict records or window counts, closing open circuits or keeping failing ones closed (set noeviction)",
			driver.ErrUnsafe, addr, p))
	}
	return findings, nil
}

// Notify adds a function for the store to report to (driver.Notifier): the
// unsafe settings New found, at once, and later the circuits whose records
// it finds lost. circuit.New calls it once for each Breaker over the store.
func (s *Store) Notify(report func(error)) {
	s.reports.Add(report)
	for _, f := range s.findings { // set by New, never changed
		report(f)
	}
}
