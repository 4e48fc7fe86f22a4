package errembeddedunexported

import (
	"context"
	"go/ast"
	"io"
)

// Node embeds ast.Expr, whose method exprNode no type outside go/ast can
// implement, skipped or not.
//
//circuitgen:guard circuit=node errors=io.EOF skip=Pos,End,exprNode
type Node interface {
	ast.Expr
	Fetch(ctx context.Context) error
}

var _ = io.EOF
