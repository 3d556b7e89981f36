package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/demo"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/httpapi"
	"github.com/toolfold/toolfold/internal/libspec"
	"github.com/toolfold/toolfold/internal/view"
)

// demoGateway serves the built-in demo catalog through the real gateway
// with opts, and returns it with its MCP handler.
func demoGateway(t *testing.T, opts *gateway.Options) (*gateway.Gateway, http.Handler) {
	t.Helper()
	spec, err := libspec.Of(demo.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	res, err := catalog.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	space, err := view.NewSpace(res.Catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(space, opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.HTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	return gw, h
}

// TestWithTheGateway mounts the API over the real gateway serving the
// built-in demo catalog, wired as cmd/toolfold wires it.
func TestWithTheGateway(t *testing.T) {
	gw, mcpHandler := demoGateway(t, &gateway.Options{Mode: expose.Search, AnnotateDescriptions: true})
	api, err := httpapi.New(&httpapi.Options{
		MCP:     mcpHandler,
		Catalog: gw.Catalog,
		GroupHandler: func(group string, readOnly bool) (http.Handler, error) {
			return gw.GroupHandler(group, readOnly, nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	var tree httpapi.GroupTree
	getJSON(t, srv.URL+"/api/groups", &tree)
	var files *httpapi.GroupRow
	for i, g := range tree.Groups {
		if g.Name == "files" {
			files = &tree.Groups[i]
		}
	}
	if files == nil || files.Tokens <= 0 {
		t.Fatalf("the demo's groups lack files with a cost: %+v", tree.Groups)
	}
	var health httpapi.Health
	getJSON(t, srv.URL+"/healthz", &health)
	if health.Status != httpapi.StatusServing || len(health.Sources) != 0 || health.Tools == 0 {
		t.Errorf("health = %+v", health)
	}

	listed := func(path string) []string {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + path}, nil)
		if err != nil {
			t.Fatalf("connecting to %s: %v", path, err)
		}
		defer cs.Close()
		var names []string
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	if names := listed("/mcp"); !slices.Contains(names, "find_tools") {
		t.Errorf("/mcp in the search mode lists %v, want find_tools among them", names)
	}
	// /mcp/files serves the group and the groups inside it, flat.
	g, _ := gw.Catalog().Group("files")
	want := len(httpapi.ToolsUnder(gw.Catalog(), g))
	if names := listed("/mcp/files"); len(names) != want || slices.Contains(names, "find_tools") {
		t.Errorf("/mcp/files lists %v, want the %d tools of files and files.search, nothing else", names, want)
	}
	resp, err := http.Get(srv.URL + "/mcp/fils")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp/fils = %d, want 404", resp.StatusCode)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
