package circuit

// SupportPackageIsVersion1 and SupportPackageIsVersion2 are referenced by
// generated files, each for the version of the generated-code contract it
// was generated for: 2 inlines Quiet. A generated file of a version this
// package does not support fails to compile at that reference.
const (
	SupportPackageIsVersion1 = true
	SupportPackageIsVersion2 = true
)
