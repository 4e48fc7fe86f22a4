package spec

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// OptionDoc documents one option of the schema, for the README's table
// and the init scaffold (generator/internal/templates).
type OptionDoc struct {
	// Name is the option's key; Value describes its value.
	Name, Value string
	// Doc says what it does.
	Doc string
	// Levels says where it may be given.
	Levels string
	// Policy marks an option of circuit.Policy; Default is its value in
	// circuit.DefaultPolicy ("off" when zero), or another option's value
	// when not given ("" for none).
	Policy  bool
	Default string
}

// Docs documents every option of the schema, in order.
func Docs() []OptionDoc {
	docs := make([]OptionDoc, len(schema))
	for i, k := range schema {
		d := OptionDoc{Name: k.Name, Value: k.Value, Doc: k.Doc, Policy: k.Field != "", Default: k.Default}
		var where []string
		for _, l := range []struct {
			l    level
			name string
		}{{atDefaults, "defaults"}, {atInterface, "interface"}, {atMethod, "method"}} {
			if k.Levels&l.l != 0 {
				where = append(where, l.name)
			}
		}
		d.Levels = strings.Join(where, ", ")
		if d.Policy {
			d.Default = "off"
			if v := reflect.ValueOf(circuit.DefaultPolicy).FieldByName(k.Field); v.IsValid() && !v.IsZero() {
				d.Default = fmt.Sprint(v.Interface())
				if dur, ok := v.Interface().(time.Duration); ok {
					d.Default = dur.String()
				}
			}
		}
		docs[i] = d
	}
	return docs
}

// PolicyKeys returns the circuit.Policy fields the schema sets, with their
// option names, in the schema's order.
func PolicyKeys() (fields, names []string) {
	for _, k := range schema {
		if k.Field != "" {
			fields = append(fields, k.Field)
			names = append(names, k.Name)
		}
	}
	return fields, names
}
