package model

import (
	"errors"
	"fmt"
	"go/token"
	"reflect"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// policy applies the policy options of o to circuit.DefaultPolicy and
// checks the result with spec.Validate (circuit.Policy.Validate), reporting each bad field
// at the option that set it (or at where, for a default).
func (b *builder) policy(o *spec.Options, where token.Position) (circuit.Policy, bool) {
	p := o.Policy.Apply(circuit.DefaultPolicy)
	err := spec.Validate(p)
	if err == nil {
		return p, true
	}
	for _, e := range spec.Unjoin(err) {
		var ce *circuit.ConfigError
		if !errors.As(e, &ce) {
			b.errs.Add(where, "invalid policy: %v", e)
			continue
		}
		name, pos, given, bad := o.Field(ce.Field)
		switch {
		case bad:
			continue // reported where it was given
		case !given:
			pos = where
		}
		b.errs.Add(pos, "invalid %s %s: %s", name, ce.Value, ce.Reason)
	}
	return p, false
}

// circuit returns the run's circuit name with policy p, reporting a name
// given two different policies.
func (b *builder) circuit(name string, p circuit.Policy, where token.Position) *Circuit {
	c := b.Run.circuits[name]
	if c == nil {
		c = &Circuit{Name: name, Policy: p, Pos: where}
		b.Run.circuits[name] = c
	} else if c.Policy != p {
		here, there := differences(p, c.Policy)
		b.errs.Add(where, "circuit %s is given %s here but %s at %s: one circuit name has one policy", name, here, there, c.Pos)
		return nil
	}
	return c
}

// differences writes the policy options in which a and b differ, as
// key=value words, a's then b's.
func differences(a, b circuit.Policy) (string, string) {
	var as, bs []string
	fields, names := spec.PolicyKeys()
	for i, f := range fields {
		va, vb := fieldValue(a, f), fieldValue(b, f)
		if va != vb {
			as = append(as, fmt.Sprintf("%s=%v", names[i], va))
			bs = append(bs, fmt.Sprintf("%s=%v", names[i], vb))
		}
	}
	return strings.Join(as, " "), strings.Join(bs, " ")
}

// literalFields returns the fields a literal of p sets.
func literalFields(p circuit.Policy) []PolicyField {
	var out []PolicyField
	fields, _ := spec.PolicyKeys()
	for _, f := range fields {
		if p.FailureRate == 0 && (f == "MinCalls" || f == "Window" || f == "WindowCalls") {
			continue
		}
		if v := reflect.ValueOf(p).FieldByName(f); v.IsValid() && !v.IsZero() {
			out = append(out, PolicyField{Name: f, Value: v.Interface()})
		}
	}
	return out
}

// fieldValue returns the value of the circuit.Policy field named field.
func fieldValue(p circuit.Policy, field string) any {
	f := reflect.ValueOf(p).FieldByName(field)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// namePolicies makes one package-level variable for each distinct policy
// of f's circuits, in the order of first use, and returns each circuit's.
// A variable is named after the circuit using it (policyBillingAPICharge);
// one several circuits share is policyDefault when it is
// circuit.DefaultPolicy, otherwise named after the interface of the first.
func namePolicies(f *File, pkg *scope) map[*Circuit]*Policy {
	byValue := map[circuit.Policy]*Policy{}
	of := map[*Circuit]*Policy{}
	var users [][]*Circuit
	var ifaces []string
	for _, w := range f.Wrappers {
		for _, m := range w.Methods {
			if m.Skip || of[m.Field.Circuit] != nil {
				continue
			}
			c := m.Field.Circuit
			p := byValue[c.Policy]
			if p == nil {
				p = &Policy{Value: c.Policy, Fields: literalFields(c.Policy)}
				byValue[c.Policy] = p
				f.Policies = append(f.Policies, p)
				users = append(users, nil)
				ifaces = append(ifaces, w.Interface)
			}
			i := slices.Index(f.Policies, p)
			users[i] = append(users[i], c)
			of[c] = p
		}
	}
	for i, p := range f.Policies {
		base := "policy" + upperFirst(ifaces[i])
		switch {
		case len(users[i]) == 1:
			base = "policy" + camel(users[i][0].Name)
		case p.Value == circuit.DefaultPolicy:
			base = "policyDefault"
		}
		p.Var = pkg.add(base)
	}
	return of
}
