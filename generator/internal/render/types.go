package render

import (
	"go/types"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// typeCode renders t as Go source. Named types are qualified by their
// package's import path; jennifer picks the file's import names.
func typeCode(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Id(t.Name())
	case *types.Named:
		return named(t.Obj(), t.TypeArgs())
	case *types.Alias:
		return named(t.Obj(), t.TypeArgs())
	case *types.TypeParam:
		return jen.Id(t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(typeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(typeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(typeCode(t.Elem()))
	case *types.Map:
		return jen.Map(typeCode(t.Key())).Add(typeCode(t.Elem()))
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return jen.Chan().Op("<-").Add(typeCode(t.Elem()))
		case types.RecvOnly:
			return jen.Op("<-").Chan().Add(typeCode(t.Elem()))
		}
		return jen.Chan().Add(typeCode(t.Elem()))
	case *types.Signature:
		return jen.Func().Add(signature(t))
	case *types.Struct:
		fields := make([]jen.Code, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			var c *jen.Statement
			if f.Embedded() {
				c = jen.Add(typeCode(f.Type()))
			} else {
				c = jen.Id(f.Name()).Add(typeCode(f.Type()))
			}
			if tag := t.Tag(i); tag != "" {
				// A raw string cannot hold a backquote: such a tag
				// would end the literal and run on as code.
				if strconv.CanBackquote(tag) {
					c.Op("`" + tag + "`")
				} else {
					c.Op(strconv.Quote(tag))
				}
			}
			fields[i] = c
		}
		return jen.Struct(fields...)
	case *types.Interface:
		var elems []jen.Code
		for i := range t.NumEmbeddeds() {
			elems = append(elems, typeCode(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			elems = append(elems, jen.Id(m.Name()).Add(signature(m.Type().(*types.Signature))))
		}
		return jen.Interface(elems...)
	case *types.Union:
		terms := make([]jen.Code, t.Len())
		for i := range t.Len() {
			term := t.Term(i)
			c := typeCode(term.Type())
			if term.Tilde() {
				c = jen.Op("~").Add(c)
			}
			terms[i] = c
		}
		return jen.Union(terms...)
	}
	return jen.Id(t.String())
}

// named renders a named type or alias, with its type arguments.
func named(obj *types.TypeName, args *types.TypeList) jen.Code {
	var c *jen.Statement
	if obj.Pkg() == nil {
		c = jen.Id(obj.Name())
	} else {
		c = jen.Qual(obj.Pkg().Path(), obj.Name())
	}
	if args.Len() > 0 {
		list := make([]jen.Code, args.Len())
		for i := range args.Len() {
			list[i] = typeCode(args.At(i))
		}
		c.Types(list...)
	}
	return c
}

// signature renders a function type's parameters and results, unnamed.
func signature(sig *types.Signature) *jen.Statement {
	params := make([]jen.Code, sig.Params().Len())
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			params[i] = jen.Op("...").Add(typeCode(t.(*types.Slice).Elem()))
		} else {
			params[i] = typeCode(t)
		}
	}
	results := make([]jen.Code, sig.Results().Len())
	for i := range sig.Results().Len() {
		results[i] = typeCode(sig.Results().At(i).Type())
	}
	return withResults(jen.Params(params...), results)
}
