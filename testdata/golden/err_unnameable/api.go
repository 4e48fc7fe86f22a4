package errunnameable

import "github.com/circuitgen/circuitgen/testdata/golden/err_unnameable/lib"

// API embeds lib.API, whose methods use types package errunnameable cannot
// write.
//
//circuitgen:guard circuit=api statuses=503
type API interface {
	lib.API
}
