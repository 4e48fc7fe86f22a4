package circuit

// SupportPackageIsVersion1 and SupportPackageIsVersion2 are referenced by
// the files circuitgen generates, each for the version of the
// generated-code contract it was generated for: 2 inlines the circuit's
// quiet admission (Quiet). A generated file for a version this package
// does not support fails to compile at that reference; the comment beside
// it in the file says to update github.com/circuitgen/circuitgen or to run
// the matching circuitgen.
const (
	SupportPackageIsVersion1 = true
	SupportPackageIsVersion2 = true
)
