// Command chart reads the raw output of bench/'s benchmarks (go test -bench,
// any number of rounds) and writes an SVG bar chart of each row's ns/op (or,
// with -unit cpu-ns/op, CPU time per op, for the rows that report it)
// relative to sony/gobreaker/v2, on a log scale, with the median of the
// rounds. It prints the ratio table of BENCHMARKS.md, in Markdown, to
// standard output.
//
// Usage:
//
//	go run ./bench/chart -in bench/out/raw.txt -svg bench/results.svg
//	go run ./bench/chart -in bench/out/raw.txt -svg bench/out/cpu.svg -unit cpu-ns/op
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io"
	"log"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// rows are the benchmark rows, in the order they are shown, with their
// labels and the targets.
var rows = []struct {
	name, label, target string
}{
	{"ClosedSuccess", "closed, success (prepared handle)", "≤0.5× gobreaker, 0 allocs/op"},
	{"ClosedSuccessByName", "closed, success, by name (Breaker.Run)", "≤0.8× gobreaker, 0 allocs/op"},
	{"ClosedSuccessRate", "closed, success, rate rule (prepared handle)", "≤0.9× gobreaker (ratio ReadyToTrip), 0 allocs/op"},
	{"OpenRejection", "rejection while open (prepared handle)", "≤0.8× gobreaker, 0 allocs/op"},
	{"OpenRejectionByName", "rejection while open, by name (Breaker.Run)", "≤1.2× gobreaker, 0 allocs/op"},
	{"ClosedSuccessRateParallel", "2 goroutines, one circuit: rate rule, closed", "≤1.0× gobreaker"},
	{"OpenRejectionParallel", "8 goroutines, one circuit: rejection", "≤1.0× every peer"},
	{"ClosedSuccessParallel", "8 goroutines, one circuit: closed", "≤1.0× every peer"},
	{"ManyCircuits", "100,000 circuits: closed call at random", "≤1.2× gobreaker; heap ≤2× gobreaker's; ready ≤2 s"},
	{"MultiProcess", "4 procs × 2 goroutines, closed", "no flock, no write (TestHappyPathNoSyscalls); throughput reported"},
	{"Snapshot", "Snapshot, unchanged record", "no file read (TestSnapshotNoRead)"},
	{"FailureCounts", "failure that counts (1 write)", "≤1.3× rawreplace per write"},
	{"FailureOpens", "failure that opens (1 write)", "≤1.3× rawreplace per write"},
	{"HalfOpenCycle", "half-open cycle (3 writes)", "≤1.3× rawreplace per write"},
}

// impls are the implementations, in legend order, with their bar colours;
// base is the one the chart divides by.
var impls = []struct{ name, color string }{
	{"circuitgen", "#1b7837"},
	{"gobreaker", "#777777"},
	{"failsafe", "#2166ac"},
	{"naive", "#b2182b"},
	{"rawreplace", "#e08214"},
}

const base = "gobreaker"

// samples holds every measurement: row → impl → unit → values.
type samples map[string]map[string]map[string][]float64

// parse reads go test -bench output.
func parse(r io.Reader) (samples, error) {
	s := samples{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 { // the -GOMAXPROCS suffix
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		row, impl, ok := strings.Cut(name, "/impl=")
		if !ok {
			continue
		}
		if s[row] == nil {
			s[row] = map[string]map[string][]float64{}
		}
		if s[row][impl] == nil {
			s[row][impl] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			s[row][impl][f[i+1]] = append(s[row][impl][f[i+1]], v)
		}
	}
	return s, sc.Err()
}

// median returns the median of row/impl's values in unit, and whether
// there are any.
func (s samples) median(row, impl, unit string) (float64, bool) {
	v := slices.Clone(s[row][impl][unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// unit is the unit the table and the chart compare: ns/op, or cpu-ns/op
// (-unit).
var unit = "ns/op"

// ratio returns row's median of unit of impl over that of other.
func (s samples) ratio(row, impl, other string) (float64, bool) {
	a, ok1 := s.median(row, impl, unit)
	b, ok2 := s.median(row, other, unit)
	if !ok1 || !ok2 || b == 0 {
		return 0, false
	}
	return a / b, true
}

// rounds returns row's per-round ratios of unit, impl's over other's: the
// i-th measurement of each is the i-th round's.
func (s samples) rounds(row, impl, other, unit string) []float64 {
	a, b := s[row][impl][unit], s[row][other][unit]
	var r []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return r
}

// spread formats per-round ratios as their median (lowest–highest).
func spread(r []float64) string {
	if len(r) == 0 {
		return "–"
	}
	r = slices.Clone(r)
	slices.Sort(r)
	m := r[len(r)/2]
	if len(r)%2 == 0 {
		m = (r[len(r)/2-1] + r[len(r)/2]) / 2
	}
	return fmt.Sprintf("%.3g× (%.3g–%.3g)", m, r[0], r[len(r)-1])
}

// table writes the Markdown ratio table: each ratio is the median, lowest and
// highest of the per-round ratios.
func table(w io.Writer, s samples) {
	fmt.Fprintln(w, "| row | circuitgen "+unit+" | allocs/op | ÷ gobreaker | ÷ failsafe | ÷ naive | ÷ rawreplace (per write) | rounds | target |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|---|")
	cell := func(row, other, u string) string { return spread(s.rounds(row, "circuitgen", other, u)) }
	perWrite := func(row string) string {
		if _, ok := s.median(row, "rawreplace", "ns/write"); ok {
			return cell(row, "rawreplace", "ns/write")
		}
		return "–"
	}
	for _, r := range rows {
		ns, ok := s.median(r.name, "circuitgen", unit)
		if !ok {
			continue
		}
		allocs, _ := s.median(r.name, "circuitgen", "allocs/op")
		extra := ""
		if cps, ok := s.median(r.name, "circuitgen", "calls/s"); ok {
			extra = fmt.Sprintf(" (%.3g calls/s)", cps)
		}
		for _, m := range []struct{ unit, format string }{{"heap-MB", "heap %.3g MB"}, {"ready-s", "ready %.3g s"}, {"warm-s", "every circuit called once %.3g s"}} {
			v, ok := s.median(r.name, "circuitgen", m.unit)
			if !ok {
				continue
			}
			extra += "; " + fmt.Sprintf(m.format, v)
			if _, ok := s.median(r.name, base, m.unit); ok {
				extra += " (" + cell(r.name, base, m.unit) + " gobreaker's)"
			}
		}
		fmt.Fprintf(w, "| %s | %s%s | %g | %s | %s | %s | %s | %d | %s |\n", r.label, human(ns), extra, allocs,
			cell(r.name, "gobreaker", unit), cell(r.name, "failsafe", unit),
			cell(r.name, "naive", unit), perWrite(r.name),
			len(s[r.name]["circuitgen"][unit]), r.target)
	}
}

// human formats nanoseconds.
func human(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// ratioLabel formats a ratio for the chart.
func ratioLabel(v float64) string {
	switch {
	case v >= 1e3:
		return fmt.Sprintf("%.0f×", v)
	case v >= 10:
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

// tickLabel formats a decade for the axis.
func tickLabel(e int) string {
	switch {
	case e < 0:
		return strconv.FormatFloat(math.Pow(10, float64(e)), 'f', -e, 64) + "×"
	case e < 3:
		return strconv.Itoa(int(math.Pow(10, float64(e)))) + "×"
	case e < 6:
		return strconv.Itoa(int(math.Pow(10, float64(e-3)))) + "k×"
	}
	return strconv.Itoa(int(math.Pow(10, float64(e-6)))) + "M×"
}

// chart writes the SVG.
func chart(w io.Writer, s samples, note string) {
	const (
		width, left, right, top = 960, 250, 70, 104
		barH, barGap, groupGap  = 16, 3, 18
	)
	type bar struct {
		impl, color string
		v           float64
	}
	type group struct {
		label string
		bars  []bar
	}
	var groups []group
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		g := group{label: r.label}
		for _, im := range impls {
			if im.name == base {
				continue
			}
			if v, ok := s.ratio(r.name, im.name, base); ok {
				g.bars = append(g.bars, bar{im.name, im.color, v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if len(g.bars) > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		log.Fatal("chart: no rows with a gobreaker baseline in the input")
	}
	e0, e1 := int(math.Floor(math.Log10(min(lo, 1)))), int(math.Ceil(math.Log10(max(hi, 1))))
	if e1 == e0 {
		e1++
	}
	plotW := float64(width - left - right)
	x := func(v float64) float64 {
		return float64(left) + (math.Log10(v)-float64(e0))/float64(e1-e0)*plotW
	}
	h := top
	for _, g := range groups {
		h += len(g.bars)*(barH+barGap) + groupGap
	}
	plotBottom := h
	height := h + 70

	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">`, width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>`)
	what := "Time"
	if unit == "cpu-ns/op" {
		what = "CPU time"
	}
	p(`<text x="%d" y="26" font-size="17" font-weight="bold">%s per operation relative to sony/gobreaker/v2 (log scale; lower is better)</text>`, 16, what)
	p(`<text x="%d" y="46" fill="#444">Median %s of each implementation ÷ gobreaker's in the same run; gobreaker = 1× (dashed line).</text>`, 16, unit)
	if note != "" {
		p(`<text x="%d" y="64" font-size="11" fill="#444">%s</text>`, 16, html.EscapeString(note))
	}
	// Grid and axis.
	for e := e0; e <= e1; e++ {
		gx := x(math.Pow(10, float64(e)))
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, gx, top-8, gx, plotBottom)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`, gx, plotBottom+18, tickLabel(e))
		for k := 2; k < 10 && e < e1; k++ {
			mx := x(float64(k) * math.Pow(10, float64(e)))
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f2f2f2"/>`, mx, top-8, mx, plotBottom)
		}
	}
	one := x(1)
	p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555" stroke-width="1.5" stroke-dasharray="5,3"/>`, one, top-14, one, plotBottom)
	p(`<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#555">gobreaker</text>`, one, top-18)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, left, plotBottom, width-right, plotBottom)
	p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s ÷ gobreaker %s</text>`, float64(left)+plotW/2, plotBottom+38, unit, unit)

	y := top
	for _, g := range groups {
		gh := len(g.bars)*(barH+barGap) - barGap
		p(`<text x="%d" y="%d" text-anchor="end" font-weight="bold" dominant-baseline="middle">%s</text>`, left-10, y+gh/2, html.EscapeString(g.label))
		for _, b := range g.bars {
			bx := x(math.Pow(10, float64(e0)))
			p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`, bx, y, max(x(b.v)-bx, 1), barH, b.color, b.impl, ratioLabel(b.v))
			p(`<text x="%.1f" y="%d" font-size="11" dominant-baseline="middle" fill="#222">%s</text>`, x(b.v)+4, y+barH/2, ratioLabel(b.v))
			y += barH + barGap
		}
		y += groupGap
	}
	// Legend.
	lx := 16
	for _, im := range impls {
		if im.name == base {
			continue
		}
		p(`<rect x="%d" y="%d" width="14" height="14" fill="%s"/>`, lx, height-24, im.color)
		p(`<text x="%d" y="%d">%s</text>`, lx+20, height-12, im.name)
		lx += 40 + 9*len(im.name)
	}
	p(`</svg>`)
}

func main() {
	in := flag.String("in", "bench/out/raw.txt", "raw go test -bench output")
	out := flag.String("svg", "bench/results.svg", "the SVG chart to write")
	note := flag.String("note", "", "a line under the title (machine, rounds)")
	flag.StringVar(&unit, "unit", unit, "the unit to compare: ns/op, or cpu-ns/op (rows that report it)")
	flag.Parse()
	log.SetFlags(0)
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	s, err := parse(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	table(os.Stdout, s)
	w, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	chart(w, s, *note)
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}
