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

// TestScaffoldSentResults checks that the scaffold does not propose to
// guard what reads the results of a call already sent, as pgx's SendBatch
// returns BatchResults: it takes a context, and BatchResults has no step
// returning itself. Guarded, a read an open circuit rejected would leave
// the next read the wrong statement's results.
func TestScaffoldSentResults(t *testing.T) {
	root := moduleTempDir(t, "batch")
	putFile(t, filepath.Join(root, "batch.go"), `package batch

import "context"

// Pool sends batches.
type Pool interface {
	SendBatch(ctx context.Context, b []string) BatchResults
}

// BatchResults reads a sent batch's results.
type BatchResults interface {
	Exec() (string, error)
	Close() error
}
`)
	pkg := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root)
	out, err := Scaffold(root, pkg+".Pool", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "      SendBatch: {skip: true} # it returns batch.BatchResults, which reads the results of this call, already sent:"
	if !strings.Contains(string(out.Content), want) || strings.Contains(string(out.Content), "list it") {
		t.Errorf("Pool's manifest lacks %q, or proposes to list BatchResults:\n%s", want, out.Content)
	}
}
