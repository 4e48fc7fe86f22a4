package circuit

// SupportPackageIsVersion1 is referenced by every file circuitgen generates
// for this package's first version of the generated-code contract. A
// generated file for a version this package does not support fails to
// compile at that reference; the comment beside it in the file says to
// update github.com/circuitgen/circuitgen or to run the matching circuitgen.
const SupportPackageIsVersion1 = true
