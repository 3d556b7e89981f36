package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// wire encodes v the way the SDK writes a message (no HTML escaping) and
// the way encoding/json does by default, so a test can tell both apart.
func wire(t *testing.T, v any) (sdk, std string) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	s, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), string(s)
}

// decodedTool is a tool as the SDK client hands it over: schemas decoded
// into generic maps.
func decodedTool(t *testing.T, name, input, output string) *mcp.Tool {
	t.Helper()
	tool := &mcp.Tool{Name: name}
	if input != "" {
		var m any
		if err := json.Unmarshal([]byte(input), &m); err != nil {
			t.Fatal(err)
		}
		tool.InputSchema = m
	}
	if output != "" {
		var m any
		if err := json.Unmarshal([]byte(output), &m); err != nil {
			t.Fatal(err)
		}
		tool.OutputSchema = m
	}
	return tool
}

var rawSchemaCases = []struct{ name, input, output string }{
	{"plain", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, ""},
	{"unsorted keys and html", `{"properties":{"b":{"description":"a <b> & c"},"a":{"type":"integer","minimum":1.5,"maximum":1e21}},"type":"object"}`, ""},
	{"output schema", `{"type":"object"}`, `{"type":"object","properties":{"n":{"type":"number"}}}`},
	{"no input schema", "", ""},
	{"null input schema", "null", ""},
}

func TestRawSchemasKeepWhatTheWireShows(t *testing.T) {
	for _, tc := range rawSchemaCases {
		t.Run(tc.name, func(t *testing.T) {
			tool := decodedTool(t, "x", tc.input, tc.output)
			wantSDK, wantStd := wire(t, tool)
			rawSchemas([]*mcp.Tool{tool})
			for _, s := range []any{tool.InputSchema, tool.OutputSchema} {
				if s == nil {
					continue
				}
				raw, ok := s.(json.RawMessage)
				if !ok {
					t.Fatalf("a schema is still a %T", s)
				}
				if cap(raw) > len(raw)+16 {
					t.Errorf("schema text of %d bytes holds %d", len(raw), cap(raw))
				}
			}
			if (tc.output == "") != (tool.OutputSchema == nil) {
				t.Errorf("OutputSchema = %#v, want it present only when sent", tool.OutputSchema)
			}
			gotSDK, gotStd := wire(t, tool)
			if gotSDK != wantSDK || gotStd != wantStd {
				t.Errorf("on the wire the tool changed:\n got %s want %s\n got %s want %s", gotSDK, wantSDK, gotStd, wantStd)
			}
		})
	}
}

func TestCacheReadsSchemasAsTheTextAFreshListGives(t *testing.T) {
	c := diskCache{dir: t.TempDir()}
	var fresh, original []*mcp.Tool
	for _, tc := range rawSchemaCases {
		original = append(original, decodedTool(t, tc.name, tc.input, tc.output))
		tool := decodedTool(t, tc.name, tc.input, tc.output)
		rawSchemas([]*mcp.Tool{tool})
		fresh = append(fresh, tool)
	}
	if err := c.save(&cacheEntry{Format: cacheFormat, Server: "s", Key: "k", Tools: fresh}); err != nil {
		t.Fatal(err)
	}
	e, err := c.load("s", "k")
	if err != nil || e == nil {
		t.Fatalf("load = %v, %v", e, err)
	}
	if len(e.Tools) != len(fresh) {
		t.Fatalf("loaded %d tools, want %d", len(e.Tools), len(fresh))
	}
	for i, got := range e.Tools {
		if got.InputSchema != nil {
			if raw, ok := got.InputSchema.(json.RawMessage); !ok || !reflect.DeepEqual(raw, fresh[i].InputSchema) {
				t.Errorf("%s: cached input schema %#v, want the fresh text %s", got.Name, got.InputSchema, fresh[i].InputSchema)
			}
		} else if fresh[i].InputSchema != nil {
			t.Errorf("%s: the cached input schema is lost", got.Name)
		}
		gotSDK, gotStd := wire(t, got)
		wantSDK, wantStd := wire(t, original[i])
		if gotSDK != wantSDK || gotStd != wantStd {
			t.Errorf("%s: a cached tool reads differently on the wire:\n got %s want %s\n got %s want %s", got.Name, gotSDK, wantSDK, gotStd, wantStd)
		}
	}
}

// TestCacheReadsFilesWrittenWithHTMLEscapes: files written before the
// cache stopped escaping HTML still load, to the same schemas.
func TestCacheReadsFilesWrittenWithHTMLEscapes(t *testing.T) {
	c := diskCache{dir: t.TempDir()}
	tool := decodedTool(t, "x", rawSchemaCases[1].input, "")
	data, err := json.MarshalIndent(&cacheEntry{Format: cacheFormat, Server: "s", Key: "k", Tools: []*mcp.Tool{tool}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`\u003cb\u003e`)) {
		t.Fatalf("the old-style file escapes no HTML: %s", data)
	}
	if err := os.WriteFile(c.path("s", "k"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := c.load("s", "k")
	if err != nil || e == nil || len(e.Tools) != 1 {
		t.Fatalf("load = %v, %v", e, err)
	}
	var got, want any
	if err := json.Unmarshal(e.Tools[0].InputSchema.(json.RawMessage), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(rawSchemaCases[1].input), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schema read back as %v, want %v", got, want)
	}
}

// TestManagerKeepsSchemasAsText: both a list read from a server and one
// read from the cache hold their schemas as JSON text, the same text.
func TestManagerKeepsSchemasAsText(t *testing.T) {
	dir := t.TempDir()
	servers := map[string]config.ServerConfig{"fx": fixture(t, "serve", nil)}
	first := newTestManager(t, servers, &Options{CacheDir: dir})
	live, err := first.Tools(context.Background(), "fx")
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	second := newTestManager(t, servers, &Options{CacheDir: dir})
	cached, ok := second.CachedTools("fx")
	if !ok || len(cached) != len(live) || len(live) == 0 {
		t.Fatalf("CachedTools = %d tools, %v; the server listed %d", len(cached), ok, len(live))
	}
	for i := range live {
		a, okA := live[i].InputSchema.(json.RawMessage)
		b, okB := cached[i].InputSchema.(json.RawMessage)
		if !okA || !okB {
			t.Fatalf("%s: schemas are %T live and %T cached, want json.RawMessage", live[i].Name, live[i].InputSchema, cached[i].InputSchema)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: live schema %s, cached %s", live[i].Name, a, b)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(matches) != 1 {
		t.Errorf("cache files: %v", matches)
	}
}

func TestAppendCompactValid(t *testing.T) {
	for _, in := range []string{
		`{}`,
		` { "a" : [ 1 , 2 ] ,` + "\n\t\r" + `"b":null } `,
		`{"s": "two  spaces\tand a tab"}`,
		`{"q": "a \" quote { [ ", "x": 1}`,
		`{"bs": "ends in a backslash \\", "y": " z "}`,
		`{"u": "\u00e9 \\\" still in"}`,
		`"just a string  "`,
		`[ true , false ]`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := appendCompactValid([]byte("prefix"), []byte(in)); string(got) != "prefix"+want.String() {
			t.Errorf("%s compacted to %s, want %s", in, got[len("prefix"):], want.String())
		}
	}
}
