package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestAPI(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "context"

// T is exported; its field x is not API.
type T struct {
	A int ` + "`json:\"a\"`" + `
	x int
}

type hidden struct{}

func (t T) M() {}
func (hidden) M() {}
func F(a, b int, op func(ctx context.Context) error) (s string, err error) { return "", nil }
func f() {}

const C = 1
var V, w = 2, 3

type K int

const (
	K0 K = iota
	k1
	K2
)

type I interface {
	M(ctx context.Context)
	m()
}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_windows.go"), []byte("package p\n\nfunc OnlyWindows() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := api(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"const C = 1",
		"const K0 K = iota (iota = 0)",
		"const K2 K = iota (iota = 2)",
		"func (T) M()",
		"func F(int, int, func(context.Context) error) (string, error)",
		"type I interface { M(context.Context) }",
		"type K int",
		"type T struct { A int `json:\"a\"` }",
		"var V = 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("api =\n%q\nwant\n%q", got, want)
	}
	if d := diff(want[:len(want)-1], want[1:]); d != "-const C = 1\n+var V = 2\n" {
		t.Errorf("diff = %q", d)
	}
}
