// Package redisstore is a circuit.Store on Redis, for applications whose
// processes run on several servers: every Breaker on the same Redis (and key
// prefix) shares every circuit in it, one half-open probe across the fleet.
//
// Each circuit is one hash at prefix + circuit.Key(name) (the SHA-256 of the
// name; the name itself never reaches a key). Records have no TTL: they
// persist until cleared, closed ones too, so a call admitted in an earlier
// generation or incarnation can never match a later record.
//
// Every operation is one Lua script, run with EVALSHA and reloaded with EVAL
// when the server answers NOSCRIPT (after SCRIPT FLUSH or a restart):
//
//   - Load reads the hash and the server's TIME in one script, so every
//     decision takes its time from the Redis server and the clocks of the
//     clients, skewed or stepped, cannot bend a cooldown or a lease. One round
//     trip.
//   - Replace is a compare-and-swap: it writes the new record only if the
//     stored one is still the caller's revision (incarnation and version; no
//     hash when the caller saw none), and otherwise reports circuit.ErrConflict.
//     One round trip.
//   - Delete removes the hash, even a corrupt one.
//
// # Replayed writes
//
// go-redis retries a command whose connection broke after it was sent (an
// EOF while reading the reply), so a Replace script may reach the server
// twice. The compare-and-swap makes the replay harmless: the first run
// changed the revision, so the second finds another one and cannot write
// again. Each Replace also stores a random write id beside the record; a
// replay that finds its own write id still there answers "applied" rather
// than a spurious conflict, so the caller does not lose a probe claim it won.
// If another write came in between, the replay reports a conflict and the
// Breaker decides again from the stored record, which is the safe side (an
// orphaned probe claim expires with its lease).
//
// # Failures
//
// Redis unreachable, timing out or answering with an error makes the
// operation fail; the Breaker reports it as a *circuit.StateError and admits
// nothing (fail closed). Bound waiting with the context and with the client's
// DialTimeout, ReadTimeout and WriteTimeout. A key of another type, a missing
// or unknown field, a malformed value or an inconsistent record is reported
// with an error wrapping circuit.ErrCorrupt, never as an absent record.
//
// # Round trips
//
// A healthy call in the closed state costs one round trip at admission and
// one at settlement when its outcome is a Success or a Failure (the Breaker
// loads the record again to settle; a Success with no failures counted
// writes nothing). A transition costs a load and a replace: two round trips.
package redisstore
