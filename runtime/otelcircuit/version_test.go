package otelcircuit

import (
	"runtime/debug"
	"testing"
)

func TestVersionIn(t *testing.T) {
	dep := func(path, version string, replace *debug.Module) *debug.Module {
		return &debug.Module{Path: path, Version: version, Replace: replace}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "devel"},
		{"a dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{dep("github.com/circuitgen/circuitgen", "v0.9.0", nil), dep(modulePath, "v0.9.1", nil)}}, "v0.9.1"},
		{"a replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{dep(modulePath, "v0.9.1", dep("example.com/fork/otelcircuit", "v0.9.2-fork", nil))}}, "v0.9.2-fork"},
		{"replaced by a directory", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{dep(modulePath, "v0.9.1", dep("../otelcircuit", "", nil))}}, "devel"},
		{"the main module", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.3"}}, "v1.2.3"},
		{"the main module, built from a checkout", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "devel"},
		{"not linked", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}}, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionIn(tt.bi); got != tt.want {
				t.Errorf("versionIn = %q, want %q", got, tt.want)
			}
		})
	}
}
