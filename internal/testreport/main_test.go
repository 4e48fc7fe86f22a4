package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: redis-server is not on PATH\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:5: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`# q [build failed]`,
		`{"ImportPath":"r [r.test]","Action":"build-output","Output":"r/r_test.go:4:2: undefined: x\n"}`,
		`{"ImportPath":"r [r.test]","Action":"build-fail"}`,
	}, "\n")
	var out strings.Builder
	failed, skips, counts, err := report(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a failed test was not reported as a failure")
	}
	if counts["pass"] != 1 || counts["fail"] != 1 || counts["skip"] != 1 {
		t.Errorf("counts = %v, want one of each", counts)
	}
	if len(skips) != 1 || skips[0].test != "TestB" || skips[0].reason != "b_test.go:3: redis-server is not on PATH" {
		t.Errorf("skips = %+v, want TestB with its reason", skips)
	}
	got := out.String()
	for _, want := range []string{"got 1, want 2", "FAIL\tp\t0.1s", "# q [build failed]", "r/r_test.go:4:2: undefined: x"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
	var sum strings.Builder
	summarize(&sum, skips, counts)
	if !strings.Contains(sum.String(), "SKIP p TestB: b_test.go:3: redis-server is not on PATH") {
		t.Errorf("summary lacks the skip:\n%s", sum.String())
	}
}
