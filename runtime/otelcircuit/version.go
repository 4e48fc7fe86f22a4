package otelcircuit

import (
	"runtime/debug"
	"sync"
)

// modulePath is this package's module, whose version the instrumentation
// scope carries.
const modulePath = "github.com/circuitgen/circuitgen/runtime/otelcircuit"

// develVersion is the scope's version when the binary's build information
// names none: a test, or a build of a checkout (go.work, a replace
// directive).
const develVersion = "devel"

// version is the module's version, read once from the binary's build
// information.
var version = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return versionIn(bi)
})

// versionIn returns the version of this module in bi: the main module's
// when it is this one, else the dependency's (its replacement's, when it is
// replaced), else develVersion.
func versionIn(bi *debug.BuildInfo) string {
	if bi == nil {
		return develVersion
	}
	m := &bi.Main
	if m.Path != modulePath {
		m = nil
		for _, dep := range bi.Deps {
			if dep.Path == modulePath {
				m = dep
				if dep.Replace != nil {
					m = dep.Replace
				}
				break
			}
		}
	}
	if m == nil || m.Version == "" || m.Version == "(devel)" {
		return develVersion
	}
	return m.Version
}
