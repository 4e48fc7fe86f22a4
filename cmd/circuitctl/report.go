package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// stateReport is what `circuitctl state -json` prints.
type stateReport struct {
	// Store is the store's URL, its password hidden.
	Store string `json:"store"`
	// Circuits are the circuits read, sorted by name; Error holds the
	// whole error, for operators.
	Circuits []circuit.Snapshot `json:"circuits"`
	// Errors are the records that could not be read, each naming its record.
	Errors []string `json:"errors,omitempty"`
}

// readReport reads the named circuits of st, or every circuit with a
// record when names is empty, and returns the report and the errors met.
func readReport(ctx context.Context, st opened, b *circuit.Breaker, names []string) (stateReport, []error) {
	var errs []error
	if len(names) == 0 {
		var err error
		names, err = st.Names(ctx)
		errs = errorList(err)
	}
	states, serrs := readStates(ctx, b, names)
	errs = append(errs, serrs...)
	return stateReport{Store: st.where, Circuits: states, Errors: texts(errs)}, errs
}

// readStates reads the named circuits with b.Snapshot, which never changes
// them. A circuit that cannot be read is reported with state "error" and
// its error; the others are read all the same.
func readStates(ctx context.Context, b *circuit.Breaker, names []string) ([]circuit.Snapshot, []error) {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	states := make([]circuit.Snapshot, 0, len(names))
	var errs []error
	for _, name := range names {
		snap, err := b.Snapshot(ctx, name)
		if err != nil {
			st := snap
			st.Error = err.Error()
			states = append(states, st)
			errs = append(errs, err)
			continue
		}
		states = append(states, snap)
	}
	return states, errs
}

// writeJSON prints the report as indented JSON.
func writeJSON(w io.Writer, rep stateReport) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(jsonSafe(js), '\n'))
	return err
}

// writeTable prints the report's circuits as an aligned table; times are
// UTC, with how far they are from now.
func writeTable(w io.Writer, rep stateReport, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CIRCUIT\tSTATE\tFAILURES\tGENERATION\tOPEN UNTIL\tLEASE UNTIL\tUPDATED")
	for _, c := range rep.Circuits {
		if c.Error != "" {
			fmt.Fprintf(tw, "%s\terror\t-\t-\t-\t-\t-\n", printable(c.Name))
			continue
		}
		gen := "-"
		if c.Exists {
			gen = fmt.Sprint(c.Generation)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", printable(c.Name), stateLabel(c), c.Failures, gen,
			when(c.OpenUntil, now), when(c.LeaseUntil, now), when(c.UpdatedAt, now))
	}
	return tw.Flush()
}

// when formats t for the table: "-" when unset, else the UTC time and how
// far it is from now, to the second.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(now).Round(time.Second)
	rel := "now"
	switch {
	case d > 0:
		rel = "in " + d.String()
	case d < 0:
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format(time.RFC3339) + " (" + rel + ")"
}

// errorList splits the joined error of a store's Names, one error per
// record, into its errors.
func errorList(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// texts returns the errors' messages.
func texts(errs []error) []string {
	s := make([]string, len(errs))
	for i, err := range errs {
		s[i] = err.Error()
	}
	return s
}

// isUsage reports whether err is a usage error: no store named, or an
// invalid circuit name.
func isUsage(err error) bool {
	_, ok := errors.AsType[*circuit.ConfigError](err)
	return ok || errors.Is(err, errNoStore)
}
