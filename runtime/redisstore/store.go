package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/copies"
	"github.com/circuitgen/circuitgen/runtime/internal/lost"
	"github.com/circuitgen/circuitgen/runtime/internal/notify"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is a conventional key prefix: records are then
// "circuitgen:circuit:<sha256 of the name>".
const DefaultPrefix = "circuitgen:circuit:"

// Store is a driver.Store on Redis. It is safe for concurrent use; Breakers
// on the same server and prefix share every circuit.
type Store struct {
	client redis.Scripter
	prefix string
	cache  *copies.Cache // nil without local copies
	stop   func()        // ends the invalidation goroutine
	done   chan struct{} // closed when it has ended
	owned  io.Closer     // the client, when the store owns it (WithOwnedClient)

	bound sync.Map // circuit name → *bound

	reports  notify.List  // Notify's
	findings []error      // what New found unsafe, reported to Notify
	roleAt   atomic.Int64 // when a read last checked the server's role (roleDue)
	replica  atomic.Bool  // a server replied READONLY, or a heartbeat found it a replica
	ring     bool         // the client is a *redis.Ring: every read checks the role (roleDue)
}

var (
	_ driver.Store  = (*Store)(nil)
	_ driver.Binder = (*Store)(nil)
	_ driver.Clock  = (*Store)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	prefix string
	copies bool
	bound  time.Duration
	owned  bool
}

// WithPrefix puts the records under prefix instead of DefaultPrefix. The
// prefix is used verbatim; stores with different prefixes on one server
// are separate.
func WithPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithCopies keeps local copies of closed records that the server
// invalidates (docs/distributed-stores.md): in steady state a healthy
// guarded call makes no round trip. A copy is served until stallBound (1 s
// when 0) after the send time of the last heartbeat the server answered;
// until the invalidation connections are up, and whenever one is lost,
// there are no copies and every Load reads the server. While they keep
// failing (a server that refuses CLIENT TRACKING, say through an ACL), the
// pause before the next try doubles, from stallBound/4 up to 30 s. Close
// stops them.
func WithCopies(stallBound time.Duration) Option {
	return func(c *config) {
		c.copies = true
		c.bound = copies.Bound(stallBound)
	}
}

// WithOwnedClient makes the store own the client given to New: its Close
// closes the client too, for code that made the client only for the store.
func WithOwnedClient() Option { return func(c *config) { c.owned = true } }

// New returns a store that keeps each circuit's record at the prefix
// (DefaultPrefix unless WithPrefix) + driver.Key(name) through client, a
// *redis.Client, *redis.ClusterClient or *redis.Ring. It asks every
// server holding records for the settings the store's guarantees rest on
// (appendonly, maxmemory-policy): an unsafe one is reported through Notify,
// and New fails only when a server cannot be asked at all or is a replica
// (ErrReplica).
//
// Create the client with ContextTimeoutEnabled, so that a call's context
// bounds every round trip (go-redis otherwise waits out its ReadTimeout
// whatever the context says).
func New(ctx context.Context, client redis.UniversalClient, opts ...Option) (*Store, error) {
	cfg := config{prefix: DefaultPrefix}
	for _, o := range opts {
		o(&cfg)
	}
	_, ring := client.(*redis.Ring)
	s := &Store{client: client, prefix: cfg.prefix, ring: ring}
	if cfg.owned {
		s.owned = client
	}
	findings, err := checkSettings(ctx, client)
	if err != nil {
		return nil, err
	}
	s.findings = findings
	s.roleAt.Store(int64(time.Since(started))) // checkSettings did
	if cfg.copies {
		tctx, cancel := context.WithCancel(context.Background())
		s.cache, s.stop, s.done = copies.New(), cancel, make(chan struct{})
		go track(tctx, s.cache, s.done, client, s.prefix, cfg.bound, func() { s.replica.Store(true) }, s.reportSession)
	}
	return s, nil
}

// Close stops a cached store's invalidation connections and drops its
// copies; the store reads the server on every Load from then on. It closes
// the client only when the store owns it (WithOwnedClient).
func (s *Store) Close() error {
	if s.cache != nil {
		s.stop()
		<-s.done
	}
	if s.owned != nil {
		return s.owned.Close()
	}
	return nil
}

// Now returns the server's time as the store's latest read returned it,
// carried forward on the local monotonic clock (driver.Clock): the time
// of the Breaker's decisions on copies, which come without the server's
// time (the bucket of a window count). A store without copies, or before
// its first read, returns the local wall clock; its Loads return the
// server's time.
func (s *Store) Now() time.Time {
	if s.cache == nil {
		return time.Now()
	}
	return s.cache.Now()
}

// Key returns the Redis key of the named circuit's record.
func (s *Store) Key(name string) string { return s.prefix + driver.Key(name) }

// bound is one circuit of a Store: its key computed once, and its copy.
type bound struct {
	s     *Store
	name  string
	key   string
	entry *copies.Entry // nil without a cache
	seen  atomic.Bool   // this process last found or wrote a record, not a Clear's tombstone (lost.go)
	last  *lost.Last    // the latest revision this process saw (lost.go)
}

// Bind returns the named circuit of the store, for the Breaker to keep.
func (s *Store) Bind(name string) driver.BoundStore { return s.bind(name) }

func (s *Store) bind(name string) *bound {
	if b, ok := s.bound.Load(name); ok {
		return b.(*bound)
	}
	b := &bound{s: s, name: name, key: s.Key(name), last: new(lost.Last)}
	if s.cache != nil {
		b.entry = s.cache.Entry(b.key)
	}
	actual, _ := s.bound.LoadOrStore(name, b)
	return actual.(*bound)
}

// roleEvery is how often a read also checks that its server is still a
// master (loadScript): a demoted server fails reads within it.
const roleEvery = time.Second

// started is the origin of roleAt's monotonic times.
var started = time.Now()

// roleDue returns loadScript's ARGV[1]: "1" for one read in each
// roleEvery, and for every read once a server was found a replica, until
// one such read succeeds (run). On a Ring, whose shards are servers of
// their own that a failover does not redirect from (a Cluster's demoted
// master answers MOVED), it is "1" for every read: one check a second
// would reach one shard of many, and a healthy shard's read would clear
// the flag of a demoted one.
func (s *Store) roleDue() string {
	if s.replica.Load() || s.ring {
		return "1"
	}
	now := int64(time.Since(started))
	last := s.roleAt.Load()
	if now-last < int64(roleEvery) || !s.roleAt.CompareAndSwap(last, now) {
		return "0"
	}
	return "1"
}

// Load returns the circuit's record, or nil when it has none, and the Redis
// server's time, read in the same script. It always reads the server: only
// a bound circuit (Bind, which a Breaker uses) is served from a copy.
func (s *Store) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	return s.bind(name).read(ctx)
}

// Load is Store.Load for the bound circuit, except that a cached store
// returns the circuit's copy, if it has one, and the zero Time, without a
// round trip.
func (b *bound) Load(ctx context.Context) (*driver.Record, time.Time, error) {
	if b.entry != nil {
		if rec, ok := b.entry.Copy(); ok && b.s.cache.Fresh() {
			return rec, time.Time{}, nil
		}
	}
	return b.read(ctx)
}

// read reads the circuit's record and the server's time from the server,
// and keeps a copy of a closed record in a cached store.
func (b *bound) read(ctx context.Context) (*driver.Record, time.Time, error) {
	var r copies.Reading
	if b.entry != nil {
		r = b.s.cache.Begin(b.entry)
	}
	seen := b.last.Begin()
	rec, now, exists, err := b.s.loadKey(ctx, b.key)
	tombstone := exists && rec == nil
	switch {
	case err != nil:
	case exists:
		if b.seen.Load() == tombstone {
			b.seen.Store(!tombstone) // a tombstone: the next absence is its expiry, not a loss
		}
		if b.entry != nil {
			b.entry.Found(r)
		}
		if rec != nil && rec.State == driver.StateClosed && lost.Older(rec, seen) {
			rec, now, err = b.lost(ctx, now, rec)
		} else {
			b.last.Saw(rec)
		}
	case b.seen.Load() || b.entry != nil && b.entry.Created():
		// A record this process read or wrote, or whose creation the
		// server told it of (its copy of none invalidated), is gone.
		rec, now, err = b.lost(ctx, now, nil)
	}
	if err == nil && rec != nil && rec.Name != b.name {
		err = fmt.Errorf("redisstore: record %s: %w: it holds circuit %q", b.key, driver.ErrCorrupt, rec.Name)
	}
	if err != nil {
		return nil, now, err
	}
	if b.entry != nil {
		b.s.cache.Saw(now)
		if !tombstone { // its expiry's invalidation would read as a creation
			b.s.cache.Install(b.entry, r, rec)
		}
	}
	return rec, now, nil
}

// load runs loadScript on key and decodes its reply: the record (nil when
// there is none) and the server's time.
func (s *Store) load(ctx context.Context, key string) (*driver.Record, time.Time, error) {
	rec, now, _, err := s.loadKey(ctx, key)
	return rec, now, err
}

// loadKey is load, and reports whether the key exists: a record, or the
// tombstone of a Clear.
func (s *Store) loadKey(ctx context.Context, key string) (*driver.Record, time.Time, bool, error) {
	res, err := s.run(ctx, loadScript, key, s.roleDue()).Text()
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("redisstore: load %s: %w", key, err)
	}
	now, kind, value, err := parseLoad(res)
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("redisstore: load %s: unexpected reply %q", key, res)
	}
	rec, err := decodeLoad(key, kind, value)
	return rec, now, kind != "none", err
}

// decodeLoad decodes the key's type and value as loadScript read them.
func decodeLoad(key, kind, value string) (*driver.Record, error) {
	switch kind {
	case "none":
		return nil, nil
	case "string":
		if value == tombstone {
			return nil, nil
		}
	default:
		return nil, fmt.Errorf("redisstore: record %s: %w: a %s, not a string", key, driver.ErrCorrupt, kind)
	}
	rec, err := decode(value)
	if err != nil {
		return nil, fmt.Errorf("redisstore: record %s: %w: %v", key, driver.ErrCorrupt, err)
	}
	return rec, nil
}

// parseLoad splits loadScript's reply into the server time, the key's type
// and, for a string, its value.
func parseLoad(res string) (now time.Time, kind, value string, err error) {
	sec, rest, ok1 := strings.Cut(res, " ")
	usec, rest, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 {
		return time.Time{}, "", "", errBadReply
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if err1 != nil || err2 != nil || u < 0 || u >= 1e6 {
		return time.Time{}, "", "", errBadReply
	}
	kind, value, _ = strings.Cut(rest, " ")
	if kind != "string" && value != "" {
		return time.Time{}, "", "", errBadReply
	}
	return time.Unix(s, u*1000), kind, value, nil
}

var errBadReply = errors.New("unexpected reply")

// Replace stores next as the circuit's record if the stored one is still
// prev, in one script; otherwise it returns driver.ErrConflict.
func (s *Store) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	return s.bind(name).write(ctx, prev, next, driver.NewID())
}

// Replace is Store.Replace for the bound circuit, except that a cached store
// refuses a prev that its Load served from a copy: it drops the copy and
// returns driver.ErrConflict without a round trip, so that the Breaker
// decides again on the record and the time the server gives.
func (b *bound) Replace(ctx context.Context, prev, next *driver.Record) error {
	if b.entry != nil && b.s.cache.IsCopy(prev) {
		b.entry.Drop()
		return driver.ErrConflict
	}
	return b.write(ctx, prev, next, driver.NewID())
}

// write stores next over prev under the write id id (a replay of the same
// write is no conflict), and notes next as what this process last saw.
func (b *bound) write(ctx context.Context, prev, next *driver.Record, id string) error {
	if b.entry != nil {
		defer b.entry.Drop() // this process sees its own write at once
	}
	err := b.s.compareAndSet(ctx, b.key, b.name, prev, next, id)
	if err == nil {
		if !b.seen.Load() {
			b.seen.Store(true)
		}
		b.last.Saw(next)
	}
	return err
}

// compareAndSet runs replaceScript on key: the server stores next, written
// under id, if key still holds prev's revision.
func (s *Store) compareAndSet(ctx context.Context, key, name string, prev, next *driver.Record, id string) error {
	if next == nil || next.Name != name {
		return fmt.Errorf("redisstore: replace %s: the new record must be circuit %q's", key, name)
	}
	value, err := encode(next, id)
	if err != nil {
		return fmt.Errorf("redisstore: replace %s: %w", key, err)
	}
	var rev string
	if prev != nil {
		rev = revisionPrefix(prev)
	}
	n, err := s.run(ctx, replaceScript, key, rev, value).Int()
	if err != nil {
		return fmt.Errorf("redisstore: replace %s: %w", key, err)
	}
	switch n {
	case replaced, replayed:
		return nil
	case conflict:
		return driver.ErrConflict
	case notString:
		return fmt.Errorf("redisstore: record %s: %w: not a string", key, driver.ErrCorrupt)
	}
	return fmt.Errorf("redisstore: replace %s: unexpected reply %d", key, n)
}

// Delete removes the circuit's record, even a corrupt one.
func (s *Store) Delete(ctx context.Context, name string) error { return s.bind(name).Delete(ctx) }

// Delete is Store.Delete for the bound circuit.
func (b *bound) Delete(ctx context.Context) error {
	if b.entry != nil {
		defer b.entry.Drop()
	}
	if err := b.s.run(ctx, deleteScript, b.key, tombstoneTTL).Err(); err != nil {
		return fmt.Errorf("redisstore: delete %s: %w", b.key, err)
	}
	b.seen.Store(false)
	return nil
}

// run runs script on key through the store's client. When it fails through
// a cluster client, the client is told to read the cluster's layout again
// (in the background, at most every 200ms): go-redis does so after a MOVED
// reply, but after failing to reach a master only every
// ClusterStateReloadInterval (a minute by default), and until then sends
// the slot's commands to the dead master, long after its replica has taken
// over (TestClusterFailover).
//
// A replica's READONLY reply (to a write, or to loadScript's role check)
// is wrapped in ErrReplica.
func (s *Store) run(ctx context.Context, script *redis.Script, key string, args ...any) *redis.Cmd {
	cmd := script.Run(ctx, s.client, []string{key}, args...)
	switch err := cmd.Err(); {
	case err != nil && strings.HasPrefix(err.Error(), "READONLY "):
		s.replica.Store(true)
		cmd.SetErr(fmt.Errorf("%w: %w", ErrReplica, err))
	case err == nil && script == loadScript && args[0] == "1" && s.replica.Load():
		s.replica.Store(false) // a master again
	}
	if c, ok := s.client.(*redis.ClusterClient); ok && cmd.Err() != nil {
		c.ReloadState(ctx)
	}
	return cmd
}

// reportSession passes on why an invalidation session ended, when the
// server refused it (a reply error: tracking forbidden, CLIENT renamed) or
// is a replica, once until the reason changes or a session goes live (nil):
// the store keeps no copies meanwhile. A lost connection is not reported.
func (s *Store) reportSession(err error) {
	var reply redis.Error
	switch {
	case err == nil: // the session went live
	case !errors.As(err, &reply) && !errors.Is(err, ErrReplica):
		return
	default:
		err = fmt.Errorf("redisstore: no copies, every Load reads the server: %w", err)
	}
	s.reports.SendChange(err)
}
