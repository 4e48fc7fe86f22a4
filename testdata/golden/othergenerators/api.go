package othergenerators

import "context"

// API is guarded; the types it uses, and the Error method of the error it
// selects, are in files other generators wrote, which are read. The mock
// moq wrote beside it is not.
//
//circuitgen:guard circuit=api errors=*LocalError statuses=503
type API interface {
	Get(ctx context.Context, req *GetRequest) (*GetReply, error)
}

// LocalError is a failure; its Error method is in errors_gen.go.
type LocalError struct{ Msg string }
