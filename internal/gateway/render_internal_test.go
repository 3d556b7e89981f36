package gateway

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// treeGateway is a gateway over catalogtest.Tree, closed when t ends.
func treeGateway(t *testing.T, opts *Options) *Gateway {
	t.Helper()
	space, err := view.NewSpace(catalogtest.Tree(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(space, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// renderedBytes is what a client would read of a list rendered anew (not
// the one renderRequest keeps).
func renderedBytes(t *testing.T, st *state, p presentation) []byte {
	t.Helper()
	b, err := json.Marshal(sortedTools(listTools(st, st.space.New(), p)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPerRequestRenderIsPure holds the per-request render to a function of
// the catalog state and the presentation: equal inputs give byte-equal
// lists, while everything mutable around it changes (a client's own view
// enabling every group, the gateway moving to another catalog) and while
// that runs beside it (-race judges what it reads).
func TestPerRequestRenderIsPure(t *testing.T) {
	g := treeGateway(t, &Options{Mode: expose.Auto, ResetTools: true})
	st := g.cur.Load()
	presentations := []presentation{
		{mode: expose.Flat},
		{mode: expose.Flat, groupMeta: true},
		{mode: expose.Groups},
		{mode: expose.Groups, stateless: true},
		{mode: expose.Groups, extension: true, stateless: true},
		{mode: expose.Search},
	}
	first := map[presentation][]byte{}
	for _, p := range presentations {
		first[p] = renderedBytes(t, st, p)
		if again := renderedBytes(t, st, p); string(again) != string(first[p]) {
			t.Errorf("%v: two renders of the same inputs differ:\n%s\n%s", p, first[p], again)
		}
	}

	// A client of the groups mode changes its own view, and the gateway
	// moves to another catalog, while requests render the first state.
	own := g.newSession(expose.Groups, st.space.New())
	var wg sync.WaitGroup
	wg.Go(func() {
		own.view.Enable([]string{"code", "code.repos", "code.repos.br", "docs"})
		own.reconcile()
		other, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("z")}}), nil)
		if err != nil {
			t.Error(err)
			return
		}
		if err := g.Update(other); err != nil {
			t.Error(err)
		}
	})
	for _, p := range presentations {
		if again := renderedBytes(t, st, p); string(again) != string(first[p]) {
			t.Errorf("%v: the render changed with another client's view or the gateway's newest catalog:\n%s\n%s", p, first[p], again)
		}
	}
	wg.Wait()
	for _, p := range presentations {
		if again := renderedBytes(t, st, p); string(again) != string(first[p]) {
			t.Errorf("%v: after the changes, the render of the first state differs:\n%s\n%s", p, first[p], again)
		}
	}
	if now := renderedBytes(t, g.cur.Load(), presentation{mode: expose.Flat}); string(now) == string(first[presentation{mode: expose.Flat}]) {
		t.Error("the newest catalog renders as the first did: the test would not see a render that ignores its state")
	}
}

// TestRenderReadsNoGatewayOrSession holds render.go to its inputs: no
// function there takes or names a Gateway or a session, where the mutable
// state lives.
func TestRenderReadsNoGatewayOrSession(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "render.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && (id.Name == "Gateway" || id.Name == "session") {
			t.Errorf("render.go names %s: a render reads only the catalog state, the view and the presentation", id.Name)
		}
		return true
	})
}

// TestRequestListMadeOncePerPresentation holds renderRequest to one list
// per catalog state and presentation, the list a fresh render gives: a
// per-request session installs it and only reads it. A new state lists
// its own catalog.
func TestRequestListMadeOncePerPresentation(t *testing.T) {
	g := treeGateway(t, &Options{Mode: expose.Auto})
	st := g.cur.Load()
	for _, p := range []presentation{{mode: expose.Flat}, {mode: expose.Groups, stateless: true}, {mode: expose.Search}} {
		kept := renderRequest(st, p)
		if again := g.transient(st, p).installed; reflect.ValueOf(again).Pointer() != reflect.ValueOf(kept).Pointer() {
			t.Errorf("%v: a second request made its own list", p)
		}
		got, err := json.Marshal(sortedTools(kept))
		if err != nil {
			t.Fatal(err)
		}
		if want := renderedBytes(t, st, p); string(got) != string(want) {
			t.Errorf("%v: the kept list differs from a fresh render:\n%s\n%s", p, got, want)
		}
	}
	other, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("z")}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(other); err != nil {
		t.Fatal(err)
	}
	flat := presentation{mode: expose.Flat}
	if _, ok := renderRequest(g.cur.Load(), flat)["z"]; !ok {
		t.Errorf("after the catalog changed, a request lists %v, want the new catalog's z", slices.Collect(maps.Keys(renderRequest(g.cur.Load(), flat))))
	}
}
