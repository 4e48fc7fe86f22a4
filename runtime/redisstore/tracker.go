package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/internal/copies"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// invalidations is the channel on which Redis sends a RESP2 connection the
// keys that tracking invalidates.
const invalidations = "__redis__:invalidate"

// TrackerName is the client name (CLIENT SETNAME) of a cached Store's
// invalidation connections, as CLIENT LIST shows them.
const TrackerName = "circuitgen-invalidations"

// track keeps the cache's invalidation stream going until ctx ends: one
// session after another, each on fresh connections, with every copy dropped
// between two sessions, and pauses that grow while sessions keep failing
// (copies.Cache.Keep). It calls replica when it finds a server demoted,
// before it drops the copies, and report with why each session ended.
func track(ctx context.Context, c *copies.Cache, done chan<- struct{}, client redis.UniversalClient, prefix string, bound time.Duration, replica func(), report func(error)) {
	defer close(done)
	c.Keep(ctx, bound, func(ctx context.Context) error {
		nodes, err := masters(ctx, client)
		if err != nil {
			return err
		}
		err = session(ctx, c, client, nodes, prefix, bound, replica, report)
		if ctx.Err() == nil {
			report(err)
		}
		return err
	})
}

// masters returns a client of every server that holds records: the
// client itself, or each master of a cluster or shard of a ring.
func masters(ctx context.Context, client redis.UniversalClient) ([]*redis.Client, error) {
	var (
		mu   sync.Mutex
		opts []*redis.Client
	)
	add := func(_ context.Context, n *redis.Client) error {
		mu.Lock()
		opts = append(opts, n)
		mu.Unlock()
		return nil
	}
	var err error
	switch c := client.(type) {
	case *redis.Client:
		opts = append(opts, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, add)
	case *redis.Ring:
		err = c.ForEachShard(ctx, add)
	default:
		err = fmt.Errorf("redisstore: cannot track invalidations through a %T", client)
	}
	slices.SortFunc(opts, func(a, b *redis.Client) int { return strings.Compare(a.Options().Addr, b.Options().Addr) })
	return opts, err
}

// session runs one invalidation connection to each server in nodes. It
// marks the cache live once every connection has answered a PING (so its
// tracking and subscription are in place), and returns at the first error,
// stall, change in the cluster's masters, or server found a replica.
func session(ctx context.Context, c *copies.Cache, client redis.UniversalClient, nodes []*redis.Client, prefix string, bound time.Duration, replica func(), report func(error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	token := c.Session() // a connection's Down ends it: no other's answer makes it live
	errc := make(chan error, 2*len(nodes)+1)
	var ready atomic.Int32
	// heard[i] is the send time (c.Clock) of the last PING server i
	// answered: its PONG comes after every invalidation the server sent
	// before it on the connection, so copies are good until that time plus
	// bound, whenever the PONG arrives.
	heard := make([]atomic.Int64, len(nodes))
	hear := func(i int, sent int64) {
		if sent <= heard[i].Load() {
			return
		}
		heard[i].Store(sent)
		if int(ready.Load()) < len(nodes) {
			return
		}
		oldest := heard[0].Load()
		for j := range heard {
			oldest = min(oldest, heard[j].Load())
		}
		c.Heard(oldest, bound)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, node := range nodes {
		opt := node.Options()
		tc := redis.NewClient(trackerOptions(opt, prefix, report))
		ps := tc.Subscribe(ctx, invalidations)
		// A read waits up to half as long again as the longest pause
		// between two PINGs (the bound) whatever ctx says: closing the
		// connection ends it when the session ends. Copies stop being
		// served at the bound after the last PONG's PING all the same.
		stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
		wg.Add(2)
		go func() { // the reader: the connection's only reader
			defer wg.Done()
			defer tc.Close()
			defer ps.Close()
			defer stop()
			first := true
			for {
				msg, err := ps.ReceiveTimeout(ctx, bound+bound/2)
				if ctx.Err() != nil {
					return // the session is over: nothing to report
				}
				// A FLUSHALL reaches a tracking connection as a message with
				// a null payload, which go-redis reports as an error: the
				// session ends and every copy goes, as a flush requires
				// (TestFlushAllDropsCopies).
				if err != nil {
					c.Down() // at once: the other goroutines may take a while to stop
					errc <- fmt.Errorf("redisstore: invalidations from %s: %w", opt.Addr, err)
					return
				}
				switch m := msg.(type) {
				case *redis.Pong:
					sent, err := strconv.ParseInt(m.Payload, 10, 64)
					if err != nil || sent > c.Clock() {
						continue // not a PING of this session's heartbeat
					}
					if first {
						first = false
						if int(ready.Add(1)) == len(nodes) {
							c.Up(token)
							report(nil) // live: a reason that comes back is reported again
						}
					}
					hear(i, sent)
				case *redis.Message:
					if m.Payload != "" {
						c.InvalidateKey(m.Payload)
					}
					for _, key := range m.PayloadSlice {
						c.InvalidateKey(key)
					}
				}
			}
		}()
		go func() { // the heartbeat: once a bound while idle, twice while busy (copies.Cache.Beat)
			defer wg.Done()
			for {
				// The payload is the send time: its PONG vouches for it.
				if err := ps.Ping(ctx, strconv.FormatInt(c.Clock(), 10)); err != nil {
					c.Down()
					errc <- fmt.Errorf("redisstore: ping %s: %w", opt.Addr, err)
					return
				}
				t := time.NewTimer(c.Beat(bound))
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		watchServers(ctx, c, client, nodes, bound, replica, errc)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchServers checks the session's servers once a bound, on the store's
// own connections, and ends the session (through errc) when they are no
// longer what its connections track: the masters of a cluster or the
// shards of a ring changed (a failover or a resharding brings a server
// whose writes no connection tracks), or a server is found a replica
// (ROLE). A demoted server's copies go within a bound and a round trip,
// and replica is called first, so that its reads check the role. A server
// that refuses ROLE and INFO was reported by New.
func watchServers(ctx context.Context, c *copies.Cache, client redis.UniversalClient, nodes []*redis.Client, bound time.Duration, replica func(), errc chan<- error) {
	_, single := client.(*redis.Client)
	tick := time.NewTicker(bound)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !single {
			now, err := masters(ctx, client)
			if err != nil || !slices.EqualFunc(now, nodes, func(a, b *redis.Client) bool { return a.Options().Addr == b.Options().Addr }) {
				c.Down()
				errc <- errors.Join(errors.New("redisstore: the servers changed"), err)
				return
			}
		}
		for _, n := range nodes {
			if err := isMaster(ctx, n); errors.Is(err, ErrReplica) {
				replica()
				c.Down()
				errc <- err
				return
			}
		}
	}
}

// errSessionOver refuses a second connection in one session.
var errSessionOver = errors.New("redisstore: the invalidation connection was lost")

// trackerOptions returns the options of an invalidation connection to the
// server base names: RESP2 (the invalidations then arrive as messages on a
// channel, which go-redis's PubSub reads), one connection, its context
// deadlines honoured, and tracking turned on as it connects: broadcast
// mode for every record key under prefix (trackedPrefixes), redirected to
// the connection itself.
// It dials once: go-redis's PubSub would otherwise dial again, inside the
// read that found the connection lost, before reporting the loss.
func trackerOptions(base *redis.Options, prefix string, report func(error)) *redis.Options {
	o := *base
	dial := base.Dialer
	if dial == nil {
		dial = redis.NewDialer(base)
	}
	var dialed atomic.Bool
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dialed.Swap(true) {
			return nil, errSessionOver
		}
		return dial(ctx, network, addr)
	}
	o.DialerRetries = 1
	o.Protocol = 2
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns = 1, 0, 0, 0
	o.ContextTimeoutEnabled = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	o.ClientName = "" // set below, where a refusal is seen
	onConnect := base.OnConnect
	o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if onConnect != nil {
			if err := onConnect(ctx, cn); err != nil {
				return err
			}
		}
		err := cn.ClientSetName(ctx, TrackerName).Err()
		var id int64
		if err == nil {
			id, err = cn.ClientID(ctx).Result()
		}
		if err == nil {
			args := []any{"CLIENT", "TRACKING", "ON", "REDIRECT", id, "BCAST"}
			for _, p := range trackedPrefixes(prefix) {
				args = append(args, "PREFIX", p)
			}
			err = cn.Do(ctx, args...).Err()
		}
		if err != nil {
			report(fmt.Errorf("redisstore: invalidations from %s: %w", base.Addr, err)) // go-redis's dial error hides it
		}
		return err
	}
	return &o
}

// trackedPrefixes returns the prefixes an invalidation connection tracks:
// prefix and a hex digit, the first after the prefix of every record key
// (prefix + driver.Key) and of no window key (WindowKey), whose flushes
// would otherwise reach every process of the fleet.
func trackedPrefixes(prefix string) []string {
	ps := make([]string, 0, 16)
	for _, d := range "0123456789abcdef" {
		ps = append(ps, prefix+string(d))
	}
	return ps
}
