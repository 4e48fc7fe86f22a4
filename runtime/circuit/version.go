package circuit

// SupportPackageIsVersion1 is referenced by every file circuitgen
// generates (const _ = circuit.SupportPackageIsVersion1), so that a file
// generated for a runtime that supports generated files of version 1 fails
// to compile, naming this constant, against a runtime that does not. A
// runtime that changes what generated code relies on adds
// SupportPackageIsVersion2 and, once it no longer supports version 1
// files, removes this one.
const SupportPackageIsVersion1 = true
