package generator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/circuitgen/circuitgen/generator"
)

// Generate reads a package's directives and returns the files to write:
// the guarded client and the test that asserts it implements the interface.
func ExampleGenerate() {
	dir, _ := os.MkdirTemp("", "mailer")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/mailer\n\ngo 1.26.0\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "mailer.go"), []byte(`package mailer

import (
	"context"
	"errors"
)

// ErrUnavailable is the provider's failure.
var ErrUnavailable = errors.New("unavailable")

//circuitgen:guard circuit=mail-api errors=ErrUnavailable
type Sender interface {
	Send(ctx context.Context, to, body string) error
}
`), 0o600)

	outs, err := generator.Generate(generator.Config{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range outs {
		fmt.Println(filepath.Base(o.Path), strings.Contains(string(o.Content), "func NewGuardedSender("))
	}
	// Output:
	// guarded_gen.go true
	// guarded_gen_test.go false
}
