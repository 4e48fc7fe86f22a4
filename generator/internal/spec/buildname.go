package spec

import (
	"path/filepath"
	"slices"
	"strings"
)

// knownOS and knownArch are the operating systems and architectures a Go
// file name's suffix constrains it to (go/build's lists): x_linux.go builds
// only for linux, x_windows_arm64.go only for windows on arm64.
var (
	knownOS = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
		"linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"}
	knownArch = []string{"386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
		"mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv",
		"riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"}
)

// NameTags returns the GOOS and GOARCH tags the name of the Go file at
// path constrains it to, as go/build reads them: the last one or two
// elements after an underscore, not counting _test.
func NameTags(path string) []string {
	name, _, _ := strings.Cut(filepath.Base(path), ".")
	i := strings.Index(name, "_")
	if i < 0 {
		return nil
	}
	l := strings.Split(name[i:], "_")
	if n := len(l); n > 0 && l[n-1] == "test" {
		l = l[:n-1]
	}
	n := len(l)
	switch {
	case n >= 2 && slices.Contains(knownOS, l[n-2]) && slices.Contains(knownArch, l[n-1]):
		return []string{l[n-2], l[n-1]}
	case n >= 1 && (slices.Contains(knownOS, l[n-1]) || slices.Contains(knownArch, l[n-1])):
		return []string{l[n-1]}
	}
	return nil
}
