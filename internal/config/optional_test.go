package config

import (
	"strings"
	"testing"
)

// TestOptionalServerIsLeftOutOnce: an optional server whose values name an
// unset variable is left out with one warning per variable, says "left
// out" once, and the blanks it leaves behind are no further problem.
func TestOptionalServerIsLeftOutOnce(t *testing.T) {
	tests := []struct {
		name     string
		server   string
		warnings int // lines of the printed diagnostics
	}{
		{"one value", `{"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer ${T}"}, "optional": true}`, 1},
		{"one variable in two values", `{"url": "https://docs.example/mcp?k=${T}", "headers": {"Authorization": "Bearer ${T}"}, "optional": true}`, 1},
		{"two variables", `{"url": "https://docs.example/mcp?k=${U}", "headers": {"Authorization": "Bearer ${T}"}, "optional": true}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"mcpServers": {"docs": ` + tt.server + `, "local": {"command": "echo"}}}`
			cfg, diags := Parse("x.json", []byte(src), Options{LookupEnv: MapEnv(nil)})
			if diags.HasErrors() || cfg == nil {
				t.Fatalf("the config is refused:\n%s", diags)
			}
			lines := strings.Split(strings.TrimSpace(diags.String()), "\n")
			if len(lines) != tt.warnings || len(diags.Warnings()) != tt.warnings {
				t.Errorf("want %d warning line(s), got:\n%s", tt.warnings, diags)
			}
			if n := strings.Count(diags.String(), "left out"); n != 1 {
				t.Errorf(`"left out" is said %d times:\n%s`, n, diags)
			}
			if !cfg.MCPServers["docs"].Disabled {
				t.Errorf("the optional server is served")
			}
		})
	}
}

// TestSSEURLWithoutTypeIsHinted: a url ending in /sse with no type is
// served as streamable HTTP, which an SSE server answers with a bare 404;
// the config check says what to set.
func TestSSEURLWithoutTypeIsHinted(t *testing.T) {
	tests := []struct {
		server string
		hint   bool
	}{
		{`{"url": "https://host.example/sse"}`, true},
		{`{"url": "https://host.example/v1/sse/"}`, true},
		{`{"url": "https://host.example/sse", "type": "sse"}`, false},
		{`{"url": "https://host.example/sse", "transport": "http"}`, false},
		{`{"url": "https://host.example/mcp"}`, false},
		{`{"url": "https://host.example/ssen"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			_, diags := Parse("x.json", []byte(`{"mcpServers": {"s": `+tt.server+`}}`), Options{LookupEnv: MapEnv(nil)})
			hinted := strings.Contains(diags.String(), `if this is an SSE server, set "type": "sse"`)
			if hinted != tt.hint || diags.HasErrors() {
				t.Errorf("hint = %v, want %v:\n%s", hinted, tt.hint, diags)
			}
		})
	}
}
