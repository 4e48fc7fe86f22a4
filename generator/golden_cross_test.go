//go:build crossvet

package generator

import (
	"strings"
	"testing"
)

// TestGoldenCross vets every golden output for the platforms circuitgen
// supports besides linux/amd64, with cgo off as a cross build has it.
// darwin/arm64 stands for arm64 too. make lint runs it (.ci/cross, with
// -tags crossvet), where the standard library and the dependencies are
// compiled for these platforms anyway; in make test each platform cost a
// compile of them on empty caches (70 to 100 s).
func TestGoldenCross(t *testing.T) {
	overlay, vetDirs := goldenCases(t)
	for _, platform := range []string{"windows/amd64", "darwin/arm64"} {
		t.Run("vet "+platform, func(t *testing.T) {
			if len(vetDirs) == 0 {
				t.Fatal("no golden output")
			}
			goos, goarch, _ := strings.Cut(platform, "/")
			t.Setenv("GOOS", goos)
			t.Setenv("GOARCH", goarch)
			t.Setenv("CGO_ENABLED", "0")
			t.Setenv("GOFLAGS", "") // -race needs cgo
			vetOverlay(t, "..", overlay, vetDirs)
		})
	}
}
