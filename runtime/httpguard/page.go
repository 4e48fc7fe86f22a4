package httpguard

import (
	_ "embed"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

//go:embed status.html
var statusHTML string

var statusPage = template.Must(template.New("status").Parse(statusHTML))

// page is the HTML view of a StatusReport.
type page struct {
	Title, Summary, Error string
	Generated             timeCell
	Refresh               int
	Rows                  []row
	Unreadable            []string // what is wrong with each record the listing could not read
}

// row is one circuit on the page.
type row struct {
	Name, State, Label, Class, Note string
	Failures                        int
	Generation                      uint64
	OpenUntil, LeaseUntil, Updated  timeCell
}

// timeCell is a time shown to a person: absolute, machine-readable and
// relative to the page's time. Zero times show as a dash.
type timeCell struct {
	Set              bool
	Text, ISO, Since string
}

// Kinds of rows beside the states: a forced open, a forced closed (held),
// a circuit never seen.
const (
	kindForced    = "forced"
	kindHeld      = "held"
	kindNeverSeen = "never_seen"
)

var stateLabels = map[string]string{
	"closed": "Closed", "open": "Open", "half_open": "Half-open", stateError: "Error",
	kindForced: "Forced open", kindHeld: "Forced closed", kindNeverSeen: "Never seen",
}

// kind is what a row shows c as: its state, forced open or closed, or never
// seen: no record, and not one of the circuits the page's Breaker runs
// calls through (used), which reads closed.
func kind(c circuit.Snapshot, used bool) string {
	switch {
	case c.Forced && stateOf(c) == "closed":
		return kindHeld
	case c.Forced:
		return kindForced
	case !c.Exists && stateOf(c) == "closed" && !used:
		return kindNeverSeen
	}
	return stateOf(c)
}

// newPage lays out rep as of now; used are the circuits the Breaker runs
// calls through (Breaker.Names), sorted.
func newPage(rep StatusReport, now time.Time, used []string) page {
	p := page{Generated: cell(rep.GeneratedAt, now), Refresh: refreshSeconds, Error: rep.Error, Unreadable: rep.Unreadable}
	counts := map[string]int{}
	for _, c := range rep.Circuits {
		_, inUse := slices.BinarySearch(used, c.Name)
		kind := kind(c, inUse)
		label := stateLabels[kind]
		counts[kind]++
		r := row{
			Name: c.Name, State: stateOf(c), Label: label, Class: "state-" + strings.ReplaceAll(kind, "_", "-"),
			Failures: c.Failures, Generation: c.Generation,
			OpenUntil: cell(c.OpenUntil, now), LeaseUntil: cell(c.LeaseUntil, now), Updated: cell(c.UpdatedAt, now),
			Note: note(c),
		}
		p.Rows = append(p.Rows, r)
	}
	var parts []string
	for _, s := range []string{kindForced, "open", "half_open", stateError, kindHeld, "closed", kindNeverSeen} {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(stateLabels[s])))
		}
	}
	n := len(rep.Circuits)
	p.Summary = fmt.Sprintf("%d %s", n, plural(n, "circuit"))
	if len(parts) > 0 {
		p.Summary += ": " + strings.Join(parts, ", ")
	}
	if k := len(rep.Unreadable); k > 0 {
		p.Summary += fmt.Sprintf("; %d %s could not be read", k, plural(k, "record"))
	}
	p.Title = "Circuits"
	if k := counts[kindForced] + counts["open"] + counts["half_open"] + counts[stateError] + len(rep.Unreadable); k > 0 {
		p.Title = fmt.Sprintf("Circuits (%d not closed)", k)
	}
	return p
}

// note explains a state a person could misread. The state is read by the
// store's clock (circuit.Snapshot): an open circuit whose cooldown is over
// is already half-open.
func note(c circuit.Snapshot) string {
	switch {
	case c.Error != "":
		return c.Error
	case !c.Exists:
		return "no record in the store"
	case c.Forced && stateOf(c) == "closed":
		return "held closed by an operator: every call runs, no failure counts; circuitctl clear ends it"
	case c.Forced:
		return "held open by an operator; circuitctl clear ends it"
	case stateOf(c) == "half_open" && c.Probing:
		return "probe in flight"
	case stateOf(c) == "half_open":
		return "ready to probe: the next call is the probe"
	}
	return ""
}

func cell(t, now time.Time) timeCell {
	if t.IsZero() {
		return timeCell{}
	}
	return timeCell{Set: true, Text: t.UTC().Format("2006-01-02 15:04:05 UTC"), ISO: t.UTC().Format(time.RFC3339), Since: relative(t, now)}
}

// relative says how far t is from now, in words: "in 1m5s", "3s ago".
func relative(t, now time.Time) string {
	d := t.Sub(now).Round(time.Second)
	switch {
	case d == 0:
		return "now"
	case d > 0:
		return "in " + d.String()
	}
	return (-d).String() + " ago"
}

// stateError is the state a row shows for a circuit whose record could not
// be read, as Snapshot's JSON form says it.
const stateError = "error"

// stateOf is the state of c as its JSON form gives it.
func stateOf(c circuit.Snapshot) string {
	if c.Error != "" {
		return stateError
	}
	return c.State.String()
}
