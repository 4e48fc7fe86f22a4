package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"time"
)

// chart writes three panels of horizontal bars, cache off against cache on,
// on log scales: Redis commands per guarded call, Redis CPU per 1,000
// guarded calls a second of one server, and the delay until a process sees
// an opening (p50, p99, max).
func (r *result) chart(w io.Writer) {
	const (
		width, left, right = 900, 250, 140
		barH, gap          = 18, 6
	)
	type bar struct {
		label string
		v     float64
		text  string
		color string
	}
	off, on := "#b2182b", "#1b7837"
	cpuPerServer := func(m mode) float64 { return 1 / m.serversPerCore(r.cfg.K, perServer) }
	ms := func(d time.Duration) float64 { return max(float64(d)/float64(time.Millisecond), 1e-3) }
	panels := []struct {
		title string
		unit  string
		bars  []bar
	}{
		{"Redis commands per healthy guarded call", "commands", []bar{
			{"cache off", r.off.commandsPerCall(), fmt.Sprintf("%.2f", r.off.commandsPerCall()), off},
			{"cache on", max(r.on.commandsPerCall(), 1e-7), fmt.Sprintf("%.6f", r.on.commandsPerCall()), on},
		}},
		{fmt.Sprintf("Redis cores per server at %d calls/s", perServer), "cores", []bar{
			{"cache off", cpuPerServer(r.off), fmt.Sprintf("%.5f (%.0f servers per core)", cpuPerServer(r.off), 1/cpuPerServer(r.off)), off},
			{"cache on", max(cpuPerServer(r.on), 1e-7), fmt.Sprintf("%.6f (%.0f servers per core)", cpuPerServer(r.on), 1/cpuPerServer(r.on)), on},
		}},
		{"Delay until a process sees another's opening (ms)", "ms", []bar{
			{"cache off p50", ms(percentile(r.off.Delays, 50)), rd(percentile(r.off.Delays, 50)).String(), off},
			{"cache off max", ms(percentile(r.off.Delays, 100)), rd(percentile(r.off.Delays, 100)).String(), off},
			{"cache on p50", ms(percentile(r.on.Delays, 50)), rd(percentile(r.on.Delays, 50)).String(), on},
			{"cache on p99", ms(percentile(r.on.Delays, 99)), rd(percentile(r.on.Delays, 99)).String(), on},
			{"cache on max", ms(percentile(r.on.Delays, 100)), rd(percentile(r.on.Delays, 100)).String(), on},
		}},
	}
	height := 70
	for _, pn := range panels {
		height += 40 + len(pn.bars)*(barH+gap) + 10
	}
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">`, width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>`)
	p(`<text x="16" y="26" font-size="17" font-weight="bold">Fleet: %d processes × %d goroutines, one hot circuit, one redis-server</text>`, r.cfg.K, r.cfg.G)
	p(`<text x="16" y="46" fill="#444">Each panel on its own log scale; shorter is better. Cache off reads Redis on every call; cache on serves healthy calls from copies Redis invalidates.</text>`)
	y := 70
	plotW := float64(width - left - right)
	for _, pn := range panels {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, b := range pn.bars {
			lo, hi = min(lo, b.v), max(hi, b.v)
		}
		e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if e1 == e0 {
			e1++
		}
		x := func(v float64) float64 { return float64(left) + (math.Log10(v)-e0)/(e1-e0)*plotW }
		p(`<text x="16" y="%d" font-weight="bold">%s</text>`, y+14, html.EscapeString(pn.title))
		y += 26
		for e := e0; e <= e1; e++ {
			gx := x(math.Pow(10, e))
			p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, gx, y, gx, y+len(pn.bars)*(barH+gap))
			p(`<text x="%.1f" y="%d" text-anchor="middle" font-size="10" fill="#555">%g</text>`, gx, y+len(pn.bars)*(barH+gap)+12, math.Pow(10, e))
		}
		for _, b := range pn.bars {
			p(`<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`, left-10, y+barH/2, html.EscapeString(b.label))
			p(`<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y, max(x(b.v)-float64(left), 1), barH, b.color)
			p(`<text x="%.1f" y="%d" font-size="11" dominant-baseline="middle">%s</text>`, max(x(b.v), float64(left))+4, y+barH/2, html.EscapeString(b.text))
			y += barH + gap
		}
		y += 24
	}
	p(`</svg>`)
}
