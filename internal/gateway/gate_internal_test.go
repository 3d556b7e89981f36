package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheGateForwards holds the gate's promise in place: a source's
// Forward (the byte path to it) is called from gate.go alone, where a call
// holds a ticket, so a new path cannot reach a source and skip the audit.
func TestOnlyTheGateForwards(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Forward" {
				seen++
				if name != "gate.go" {
					t.Errorf("%s calls a source's Forward; forward through a callTicket (gate.go) so the call is audited", fset.Position(call.Pos()))
				}
			}
			return true
		})
	}
	if seen == 0 {
		t.Fatal("no call of Forward found at all: the check no longer sees the byte path")
	}
}
