// Package storeurl opens the circuit store a URL names, for tools that are
// told where circuit state lives rather than built against one store, such
// as circuitctl, the operators' command:
//
//	file:///var/lib/myapp/circuits          runtime/filestore (the directory must exist)
//	redis://user:pass@host:6379/0?prefix=P  runtime/redisstore (also rediss:// and
//	unix:///run/redis.sock?db=0&prefix=P)   unix://; go-redis's URL syntax; prefix
//	                                        defaults to redisstore.DefaultPrefix; cache=off)
//	postgres://user@host/db?sslmode=disable runtime/sqlstore on PostgreSQL (pgx's URL syntax;
//	                                        also postgresql://; cache=off)
//	sqlite:///var/lib/myapp/circuits.db     runtime/sqlstore on SQLite (the file must exist)
//
// Redis and PostgreSQL stores keep local copies of closed records that the
// server invalidates (redisstore.WithCopies, sqlstore.WithCopies), so that a
// healthy guarded call makes no round trip; the query parameter cache=off
// turns that off (cache=on is the default). Context deadlines bound every
// round trip to Redis (go-redis's ContextTimeoutEnabled). SQLite, on one
// host, keeps no copies.
//
// Open returns the store itself (a *filestore.Store, *redisstore.Store or
// *sqlstore.Store), which circuit.New takes as it is. Opening checks that
// the store is there and reachable, and creates and changes nothing: a
// mistyped directory or database file is reported, not created; so is a
// database never migrated or a PostgreSQL standby (sqlstore.Store.Check).
// Migrate creates a database's tables, as a deployment step. The URL's
// password never appears in errors; Redact hides it in messages. A
// password's /, ? and # must be escaped, and any @ after the host (%40):
// such an @ is refused.
package storeurl
