// Package grpchealth guards a gRPC client it cannot annotate, the standard
// health service's grpc_health_v1.HealthClient, through a manifest: gRPC
// status codes Unavailable, DeadlineExceeded and ResourceExhausted are
// failures, any other code (NotFound for an unknown service) is not.
// A stream (Watch) is guarded only while it opens: errors read from it
// later are the caller's.
package grpchealth

//go:generate go tool circuitgen -manifest circuitgen.yaml
