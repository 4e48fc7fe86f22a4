// Package redisstore is a circuit store on Redis (go-redis v9: a server, a
// Cluster or a Ring), for applications whose processes run on several
// servers: every Breaker on the same Redis and key prefix shares every
// circuit, one half-open probe across the fleet, decided with the server's
// clock.
//
// New opens a store. Each operation is one Lua script; WithCopies keeps
// local copies of closed records that the server invalidates, so that in
// steady state a healthy guarded call makes no round trip. A copy is never
// served later than the stall bound after the send time of the last
// heartbeat the server answered; a record the server lost is not taken for
// a closed circuit; New checks the server settings those guarantees need
// (appendonly yes, maxmemory-policy noeviction), refuses a replica, and
// reports an unsafe one through the Breaker's Observers (ObserveEvent).
// docs/distributed-stores.md is the design: the layout, the invalidation
// stream, the exact bound and what it rests on, the loss rule.
//
// Create the client with ContextTimeoutEnabled, so that a call's context
// bounds every round trip.
package redisstore
