package generator

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"
	"unicode"
)

// initialisms are written in upper case in generated names.
var initialisms = map[string]bool{
	"api": true, "db": true, "grpc": true, "http": true, "https": true, "id": true,
	"io": true, "ip": true, "json": true, "rpc": true, "sql": true, "tcp": true,
	"tls": true, "udp": true, "uri": true, "url": true, "xml": true,
}

// camel turns a circuit name such as billing-api:charge into BillingAPICharge.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if initialisms[strings.ToLower(part)] {
			b.WriteString(strings.ToUpper(part))
		} else {
			b.WriteString(upperFirst(part))
		}
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// namer hands out local names that clash with nothing in scope.
type namer struct {
	taken map[string]bool
	// pkgs are the names of the packages the file uses; a local named like
	// one would hide it.
	pkgs map[string]bool
	// decls are the package-level names, and the predeclared ones are
	// checked too: a parameter named error, int or like a package-level
	// type would hide the type a wrapper's body names.
	decls map[string]bool
}

// clashes reports whether name is taken or would hide a package, a
// package-level or a predeclared name.
func (n *namer) clashes(name string) bool {
	return n.taken[name] || n.pkgs[name] || n.decls[name] || types.Universe.Lookup(name) != nil ||
		token.Lookup(name).IsKeyword() || name == "_"
}

// name returns base, or base with a number appended, and takes it.
func (n *namer) name(base string) string {
	name := base
	for i := 1; n.clashes(name); i++ {
		name = base + strconv.Itoa(i)
	}
	n.taken[name] = true
	return name
}
