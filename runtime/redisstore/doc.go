// Package redisstore is a driver.Store on Redis, for applications whose
// processes run on several servers: every Breaker on the same Redis (and key
// prefix) shares every circuit in it, one half-open probe across the fleet.
//
// Each circuit is one string value at prefix + driver.Key(name) (the
// SHA-256 of the name; the name itself never reaches a key): the record's
// fields in a fixed order, separated by single spaces, revision first:
//
//	2 <incarnation> <version> <write id> <name> <state> <failures> <generation> <open_until> <probe_token> <lease_until> <updated_at>
//
// "2" is the format version; integers are canonical decimals, times UTC
// RFC 3339 with nanoseconds, a zero time or no probe token an empty field.
// Records have no TTL: they persist until cleared, closed ones too, so a
// call admitted in an earlier generation or incarnation can never match a
// later record.
//
// Every operation is one Lua script, run with EVALSHA and reloaded with EVAL
// when the server answers NOSCRIPT (after SCRIPT FLUSH or a restart):
//
//   - Load reads the server's TIME and GETs the value in one script, so
//     every decision takes its time from the Redis server and the clocks of
//     the clients, skewed or stepped, cannot bend a cooldown or a lease. One
//     round trip; the reply is one string, decoded with one allocation.
//   - Replace is a compare-and-swap: it writes the new value only if the
//     stored one still starts with the caller's revision (format version,
//     incarnation and version: one prefix comparison in the script; no key
//     when the caller saw none), and otherwise reports driver.ErrConflict.
//     One round trip. It refuses to write a record that Load could not read
//     back (one that fails driver.Record.Check, or a probe token with a
//     space).
//   - Delete removes the key, even a corrupt one.
//
// # Replayed writes
//
// go-redis retries a command whose connection broke after it was sent (an
// EOF while reading the reply), so a Replace script may reach the server
// twice. The compare-and-swap makes the replay harmless: the first run
// changed the revision, so the second finds another one and cannot write
// again. Each Replace also stores a random write id in the value; a replay
// that finds its own write still there (the stored value is exactly the one
// it carries, write id included) answers "applied" rather than a spurious
// conflict, so the caller does not lose a probe claim it won. If another
// write came in between, the replay reports a conflict and the Breaker
// decides again from the stored record, which is the safe side (an orphaned
// probe claim expires with its lease).
//
// # Failures
//
// Redis unreachable, timing out or answering with an error makes the
// operation fail; the Breaker reports it as a *circuit.StateError and admits
// nothing (fail closed). A call's context bounds every round trip provided
// the client is created with ContextTimeoutEnabled (storeurl does so):
// go-redis otherwise ignores context deadlines and waits out its
// ReadTimeout (3 s by default, with retries: about 5 s against a server
// frozen with SIGSTOP, against 500 ms with the option). A key of another type (GET
// answers WRONGTYPE), an unknown format version, a missing or extra field, a
// malformed or non-canonical value or an inconsistent record is reported
// with an error wrapping driver.ErrCorrupt, never as an absent record.
//
// # Round trips
//
// Without copies (New), a healthy call in the closed state costs one round
// trip at admission and one at settlement when its outcome is a Success or
// a Failure (the Breaker loads the record again to settle; a Success with no
// failures counted writes nothing): 6 commands as the server counts them,
// the scripts' TIME and GET included. A transition costs a load and a
// replace: two round trips.
//
// # Local copies
//
// A store made with WithCopies keeps a copy of each circuit's record while it
// is closed, and Redis tells it when the record changes (server-assisted
// client-side caching). In steady state a healthy guarded call makes no
// round trip: its admission and its settlement (a Success with no failures
// counted, or an Ignored outcome, writes nothing) are read from the copy,
// one atomic load. The rules:
//
//   - Only a closed record is copied, and only a Breaker's bound circuit
//     (driver.Binder) is served from the copy; Store.Load always reads the
//     server. A copy is served with the zero Time: the closed admission and
//     a settlement that changes nothing need no time.
//   - Every transition is a compare-and-swap on the server with the server's
//     clock: a bound Replace whose previous record is a copy is refused with
//     driver.ErrConflict without a round trip (the copy is dropped), and the
//     Breaker decides again on a server read, with the server's time. A
//     failure counted on a copy costs a read and a swap, as without copies.
//     Open and half-open records are never copied, so rejections, the probe
//     claim (one probe across the fleet) and its settlement read the server.
//   - The invalidations arrive on one connection per server of the store's
//     own (per master of a cluster, per shard of a ring), in RESP2 with
//     CLIENT TRACKING ON REDIRECT <itself> BCAST PREFIX <prefix>: broadcast
//     mode keeps no per-key table on the server, and the application's
//     client and its pool are untouched. The connection is named
//     TrackerName and pinged every quarter of the stall bound.
//   - Every copy is dropped the moment that connection ends (the goroutine
//     reading it sees the end; it never dials again within a session), fails,
//     or brings nothing for the stall bound (1 s, or WithCopies's
//     argument): a killed or unreachable server leaves no copy
//     (0 admissions from a copy in the tests once the end is read, a few
//     microseconds after the server's death), and a frozen one leaves
//     copies for at most the stall bound. No copy is kept again until a new
//     connection is tracking and has answered a PING; while new connections
//     keep failing (tracking refused by an ACL), they are tried after pauses
//     that double from a quarter of the stall bound up to 30 s.
//   - The window counts of the rate rule live outside the prefix
//     (WindowKey), so their flushes (each process's, every
//     driver.FlushBatch calls or driver.FlushEvery) send no
//     invalidations. A cached store is a
//     driver.Clock: it tells the server's time as its latest read
//     returned it, carried forward on the monotonic clock, for the window
//     buckets of calls settled on copies.
//   - A read installs its record as a copy only if neither its key's
//     invalidations nor the connection changed while it was in flight, so
//     an invalidation that overtakes the reply of the read it invalidates is
//     never lost. Each Replace and Delete drops the key's copy when its reply
//     arrives, so a process sees its own writes at once.
//
// What changes with copies: a change made by another server (an opening) is
// seen once its invalidation arrives, not at the next call. On loopback the
// tests measure it (TestInvalidationDelay: p50 about 1 ms); BENCHMARKS.md
// has the distributions and the fleet figures. Calls admitted meanwhile are settled
// against the server like any call admitted just before an opening.
//
// Each circuit is one key, so in a Redis Cluster it lives on one slot (one
// master): many circuits spread over the masters, one hot circuit does not.
// With copies that no longer matters for healthy calls, which do not reach
// the server.
//
// A failover inside a cluster (TestClusterFailover, on a cluster with
// replicas): after CLUSTER FAILOVER, the store drops every copy and tracks
// the new master instead of the old within about the stall bound (it reads
// the cluster's masters that often); until then the old master, now a
// replica, passes on the invalidations of the writes it replicates, so an
// opening made on the new master is seen within milliseconds either way.
// When a master dies, the copies go with its connection, no call of its
// slots is admitted until a replica has taken over, and calls are admitted
// again soon after the promotion (under a second in the test, which allows
// five), with copies or without: an operation that fails through a
// ClusterClient has the client read the cluster's layout again (go-redis
// otherwise keeps sending the slots' commands to the dead master for up to
// its ClusterStateReloadInterval, a minute by default).
//
// Why not github.com/redis/rueidis, the Go client built around RESP3
// client-side caching: its DoCache keeps the reply of a command per key and
// connection, with a client-side TTL, opt-in tracking of each key read, and
// a check of the connection that defaults to 10 s; a cache hit still builds
// the command, looks it up under a lock and hands back a message to decode,
// where a copy here is a decoded record behind one atomic pointer (a healthy
// call costs about what it costs on the file store). And this package takes
// the application's go-redis client (Client, ClusterClient, Ring);
// rueidis would add a second Redis client to every application. The part
// of rueidis this store needs, an invalidation stream whose loss empties
// the cache, is tracker.go here, on go-redis's PubSub.
//
// # Batched writes
//
// Per-circuit state that is aggregated locally and flushed to Redis in
// bounded batches (failure-rate windows) belongs in the bound circuit
// (store.go), next to its copy, and its flush goes through the store's
// client as one script per batch, like Replace.
package redisstore
