// Package jetstream guards NATS JetStream's client from a manifest: the
// streams and key-value buckets it opens come back guarded on the same
// Breaker.
package jetstream

//go:generate go tool circuitgen -manifest circuitgen.yaml
