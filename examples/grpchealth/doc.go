// Package grpchealth guards a gRPC client it cannot annotate, the standard
// health service's grpc_health_v1.HealthClient, through a manifest: gRPC
// status codes Unavailable, DeadlineExceeded and ResourceExhausted are
// failures, any other code (NotFound for an unknown service) is not.
// A stream (Watch) settles its call where its error surfaces: at Recv's
// first error, a success at io.EOF; a stream dropped first (its context
// cancelled) is Ignored. A half-open probe's Watch, which stays
// open while the service is healthy, settles at its first message.
package grpchealth

//go:generate go tool circuitgen -manifest circuitgen.yaml
