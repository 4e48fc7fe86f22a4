package errnamederr

import (
	"context"
	"errors"
)

// Err and E are error variables with short names.
var (
	Err = errors.New("err")
	E   = errors.New("e")
)

// API selects them.
//
//circuitgen:guard circuit=api errors=Err
type API interface {
	Get(ctx context.Context) error
	//circuitgen:circuit api-put errors=E,Err
	Put(ctx context.Context) error
}
