package circuit

// Generated files reference SupportPackageIsVersionN for the contract they
// were generated for (2 inlines Quiet, 3 its rejection too): a file of a
// version this package lacks fails to compile at that reference.
const (
	SupportPackageIsVersion1 = true
	SupportPackageIsVersion2 = true
	SupportPackageIsVersion3 = true
)
