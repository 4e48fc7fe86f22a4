package statusmethod

import "context"

// Reply carries an HTTP status.
type Reply struct{ Code int }

// StatusCode returns the reply's status.
func (r Reply) StatusCode() int { return r.Code }

// PtrReply carries a status through a pointer method.
type PtrReply struct{ Code int }

// StatusCode returns the reply's status.
func (r *PtrReply) StatusCode() int { return r.Code }

// Coder is any reply with a status.
type Coder interface{ StatusCode() int }

// API returns replies with statuses.
//
//circuitgen:guard circuit=api statuses=429,500-599
type API interface {
	Value(ctx context.Context) (Reply, error)
	Pointer(ctx context.Context) (*PtrReply, error)
	Iface(ctx context.Context) (Coder, error)
	Plain(ctx context.Context) (string, error)
}
