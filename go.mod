module github.com/circuitgen/circuitgen

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/gofrs/flock v0.13.2
	golang.org/x/sys v0.49.0
)
