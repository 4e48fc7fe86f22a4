// Package redisstore is a circuit.Store on Redis, for applications whose
// processes run on several servers: every Breaker on the same Redis (and key
// prefix) shares every circuit in it, one half-open probe across the fleet.
//
// Each circuit is one string value at prefix + circuit.Key(name) (the
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
//     when the caller saw none), and otherwise reports circuit.ErrConflict.
//     One round trip. It refuses to write a record that Load could not read
//     back (one that fails circuit.Record.Check, or a probe token with a
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
// nothing (fail closed). Bound waiting with the context and with the client's
// DialTimeout, ReadTimeout and WriteTimeout. A key of another type (GET
// answers WRONGTYPE), an unknown format version, a missing or extra field, a
// malformed or non-canonical value or an inconsistent record is reported
// with an error wrapping circuit.ErrCorrupt, never as an absent record.
//
// # Round trips
//
// A healthy call in the closed state costs one round trip at admission and
// one at settlement when its outcome is a Success or a Failure (the Breaker
// loads the record again to settle; a Success with no failures counted
// writes nothing). A transition costs a load and a replace: two round trips.
package redisstore
