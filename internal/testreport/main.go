// Command testreport reads the output of go test -json on its standard
// input, prints what go test without -v would have printed (the output of
// each test that failed, each package's result), and ends with a summary: how many tests passed, failed
// and skipped, and every skipped test with the reason it gave. It exits 1
// when a test or package failed, and, when CI=true, when a test skipped:
// CI tests against the real thing, so a skip there is a missing dependency.
//
//	go test -json ./... | go run ./internal/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is a skipped test and what it said before it skipped.
type skip struct {
	pkg, test, reason string
}

func main() {
	failed, skips, counts, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	summarize(os.Stdout, skips, counts)
	ci := os.Getenv("CI") == "true"
	switch {
	case failed:
		os.Exit(1)
	case ci && len(skips) > 0:
		fmt.Println("FAIL: tests skipped under CI=true: CI must have everything they need")
		os.Exit(1)
	}
}

// report copies the output of failed tests and packages' results from r to
// w and returns whether anything
// failed, the skipped tests, and the count of each test result.
func report(r io.Reader, w io.Writer) (failed bool, skips []skip, counts map[string]int, err error) {
	counts = map[string]int{}
	said := map[string][]string{} // package + test → its output lines
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // a build error or other plain text
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output": // a compiler's message (go test -json since Go 1.24)
			fmt.Fprint(w, e.Output)
		case "output":
			if e.Test == "" {
				fmt.Fprint(w, e.Output) // a package's result, or its own output
			} else {
				said[key] = append(said[key], e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				if e.Action == "fail" {
					failed = true
				}
				continue
			}
			counts[e.Action]++
			if e.Action == "fail" {
				failed = true
				fmt.Fprint(w, strings.Join(said[key], ""))
			}
			if e.Action == "skip" {
				skips = append(skips, skip{e.Package, e.Test, reason(said[key])})
			}
			delete(said, key)
		}
	}
	return failed, skips, counts, sc.Err()
}

// reason returns what a skipped test printed: the lines between its RUN and
// SKIP lines, trimmed.
func reason(lines []string) string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return "(no reason given)"
	}
	return strings.Join(out, " / ")
}

// summarize prints the counts and the skipped tests, sorted.
func summarize(w io.Writer, skips []skip, counts map[string]int) {
	fmt.Fprintf(w, "\n== tests: %d passed, %d failed, %d skipped\n", counts["pass"], counts["fail"], counts["skip"])
	sort.Slice(skips, func(i, j int) bool {
		if skips[i].pkg != skips[j].pkg {
			return skips[i].pkg < skips[j].pkg
		}
		return skips[i].test < skips[j].test
	})
	for _, s := range skips {
		fmt.Fprintf(w, "SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
	}
}
