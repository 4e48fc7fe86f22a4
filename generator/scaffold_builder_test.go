package generator

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScaffoldBuilders checks the scaffold of a builder: the manifest of a
// client whose Txn returns a builder skips Txn, saying to list the
// builder too, and the builder's own manifest guards its steps (If), which
// come back guarded, and its terminal call (Commit).
func TestScaffoldBuilders(t *testing.T) {
	root := moduleTempDir(t, "kv")
	putFile(t, filepath.Join(root, "kv.go"), `package kv

import "context"

// Response is a transaction's answer.
type Response struct{ Succeeded bool }

// KV makes transactions.
type KV interface {
	Get(ctx context.Context, key string) (string, error)
	Txn(ctx context.Context) Txn
}

// Txn is a transaction builder.
type Txn interface {
	If(cs ...string) Txn
	Commit() (*Response, error)
}
`)
	pkg := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root)
	out, err := Scaffold(root, pkg+".KV", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "      Txn: {skip: true} # it returns a builder, guarded when this run guards kv.Txn too: list it, then remove this skip; its terminal call, not this one, takes the claim\n"
	if !strings.Contains(string(out.Content), want) {
		t.Errorf("KV's manifest lacks %q:\n%s", want, out.Content)
	}
	out, err = Scaffold(root, pkg+".Txn", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"      If: {}\n", "      Commit: {}\n"} {
		if !strings.Contains(string(out.Content), want) {
			t.Errorf("Txn's manifest lacks %q:\n%s", want, out.Content)
		}
	}
}
