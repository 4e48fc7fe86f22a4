package errcgotype

// #include <stdlib.h>
import "C"

import "context"

// Lib takes a cgo type, which no other file can name.
//
//circuitgen:guard circuit=lib errors=context.DeadlineExceeded
type Lib interface {
	Alloc(ctx context.Context, n C.size_t) error
	Free(ctx context.Context) error
}
