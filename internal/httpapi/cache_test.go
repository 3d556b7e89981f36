package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/tokens"
)

func TestDashboardEscapes(t *testing.T) {
	tool := catalogtest.Tool("x")
	tool.Def.Description = `<img src=x onerror=alert(1)>`
	cat := catalogtest.Build(t, catalog.Spec{
		Tools: []*catalog.Tool{tool},
		Groups: []catalog.GroupSpec{
			{ID: "evil", Description: `<script>alert("pwned")</script> & more`, Members: catalog.Members{Tools: []catalog.ToolID{"x"}}},
		},
	})
	f := newFixture(t, nil)
	f.cat.Store(cat)
	f.sources = []SourceStatus{{Name: "s", Kind: KindMCP, State: StateFailed, Error: `<b>bold</b>`, StderrTail: "</pre><script>x()</script>"}}
	page := f.do(t, "GET", "/", nil).Body.String()
	for _, raw := range []string{"<script", "<b>bold", "</pre><script"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page carries %q unescaped", raw)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; more", "&lt;b&gt;bold&lt;/b&gt;"} {
		if !strings.Contains(page, escaped) {
			t.Errorf("the page lacks %q", escaped)
		}
	}
}

func TestDashboardLinksEscapeGroupNames(t *testing.T) {
	tool := catalogtest.Tool("x")
	cat := catalogtest.Build(t, catalog.Spec{
		Tools:  []*catalog.Tool{tool},
		Groups: []catalog.GroupSpec{{ID: "a&b c", Members: catalog.Members{Tools: []catalog.ToolID{"x"}}}},
	})
	f := newFixture(t, nil)
	f.cat.Store(cat)
	page := f.do(t, "GET", "/", nil).Body.String()
	if !strings.Contains(page, `href="/api/tools?group=a%26b%20c"`) {
		t.Errorf("the group's link is not query-escaped:\n%s", page)
	}
}

func TestGroupHandlersAreBuiltOncePerCatalog(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Tokens = []config.TokenConfig{{Token: fullToken}, {Token: limitedToken, ReadOnly: true}}
	})
	post := func(path, token string) {
		t.Helper()
		if w := f.do(t, "POST", path, http.Header{"Authorization": {"Bearer " + token}}); w.Code != 200 {
			t.Fatalf("POST %s = %d: %s", path, w.Code, w.Body)
		}
	}
	post("/mcp/code", fullToken)
	post("/mcp/code", fullToken)
	post("/mcp/docs", fullToken)
	post("/mcp/code", limitedToken)
	post("/mcp/code", limitedToken)
	if got := len(f.built); got != 3 {
		t.Fatalf("built %d handlers (%v), want 3: code, docs, and code read-only", got, f.built)
	}
	// Discovery finished: a new catalog. The gateway's handlers follow it
	// themselves; building anew would end the group's sessions.
	f.cat.Store(catalogtest.Tree(t))
	post("/mcp/code", fullToken)
	if got := len(f.built); got != 3 {
		t.Errorf("after the catalog changed, built %d handlers in all, want still 3", got)
	}
	// A group gone from the new catalog is refused before its handler.
	f.cat.Store(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{catalogtest.Tool("a")},
		Groups: []catalog.GroupSpec{{ID: "docs", Members: catalog.Members{Tools: []catalog.ToolID{"a"}}}}}))
	if w := f.do(t, "POST", "/mcp/code", http.Header{"Authorization": {"Bearer " + fullToken}}); w.Code != http.StatusNotFound {
		t.Errorf("a group gone from the catalog = %d, want 404", w.Code)
	}
}

func TestGroupHandlerRefusal(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.GroupHandler = func(group string, readOnly bool) (http.Handler, error) {
			return nil, fmt.Errorf("read-only tokens cannot use /mcp/%s yet: %w", group, ErrNotAllowed)
		}
	})
	w := f.do(t, "POST", "/mcp/code", nil)
	if w.Code != http.StatusForbidden {
		t.Fatalf("GroupHandler refusing = %d, want 403", w.Code)
	}
	wantError("read-only tokens cannot use /mcp/code yet")(t, w)
}

func TestGroupHandlerFailure(t *testing.T) {
	calls := 0
	f := newFixture(t, func(o *Options) {
		o.GroupHandler = func(group string, readOnly bool) (http.Handler, error) {
			calls++
			return nil, errors.New("the gateway is not ready")
		}
	})
	for range 2 {
		w := f.do(t, "POST", "/mcp/code", nil)
		if w.Code != http.StatusInternalServerError {
			t.Fatalf("a failing GroupHandler = %d, want 500", w.Code)
		}
		wantError(`could not build the MCP endpoint of group "code"`, "the gateway is not ready")(t, w)
	}
	if calls != 2 {
		t.Errorf("GroupHandler called %d times, want 2: a failure is not kept", calls)
	}
}

func TestNoGroupHandlerNoMCP(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.GroupHandler, o.MCP = nil, nil })
	for _, path := range []string{"/mcp", "/mcp/code"} {
		if w := f.do(t, "POST", path, nil); w.Code != http.StatusNotFound {
			t.Errorf("%s without a handler = %d, want 404", path, w.Code)
		}
	}
}

func TestMeasuredOncePerCatalog(t *testing.T) {
	f := newFixture(t, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, path := range []string{"/api/groups", "/api/tools", "/"} {
				if w := f.do(t, "GET", path, nil); w.Code != 200 {
					t.Errorf("%s = %d", path, w.Code)
				}
			}
		})
	}
	wg.Wait()
	if n := f.measured.Load(); n != 1 {
		t.Errorf("measured %d times, want once for one catalog", n)
	}
	f.cat.Store(catalogtest.Tree(t))
	f.do(t, "GET", "/api/groups", nil)
	if n := f.measured.Load(); n != 2 {
		t.Errorf("measured %d times, want a second time for the new catalog", n)
	}
}

func TestMeasureFailure(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.Measure = func(*catalog.Catalog) (*Measurement, error) { return nil, errors.New("no tokenizer") }
	})
	for _, path := range []string{"/api/groups", "/api/tools", "/"} {
		w := f.do(t, "GET", path, nil)
		if w.Code != http.StatusInternalServerError {
			t.Errorf("%s with a failing measurement = %d, want 500", path, w.Code)
		}
	}
	if w := f.do(t, "GET", "/healthz", nil); w.Code != 200 {
		t.Errorf("/healthz depends on measuring: %d", w.Code)
	}
}

func TestMeasureFlat(t *testing.T) {
	cat := catalogtest.Tree(t)
	m, err := MeasureFlat(cat)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := cat.Group("code")
	defs := []*mcp.Tool{}
	for _, tl := range code.Tools {
		defs = append(defs, tl.Def)
	}
	want, err := tokens.ToolsCost(defs)
	if err != nil {
		t.Fatal(err)
	}
	// The tree's tools need no renaming and carry no annotations, so their
	// flat wire definitions are their own.
	if m.Groups["code"] != want {
		t.Errorf("cost of code = %d, want %d: its own tools listed together", m.Groups["code"], want)
	}
	if m.WireNames["a"] != "a" || m.Tools["a"] <= 0 || m.Ungrouped <= 0 {
		t.Errorf("measurement = %+v", m)
	}
	if m.Groups["code.repos.br"] >= m.Groups["code.repos"] {
		t.Errorf("one tool costs %d, two cost %d", m.Groups["code.repos.br"], m.Groups["code.repos"])
	}
}
