package httpapi

import (
	"encoding/json"
	"html"
	"slices"
	"strings"
	"testing"
)

// TestSourcesNameTheirSandboxes: /healthz and the dashboard show the
// rules each stdio server runs under and name every one that runs
// without a sandbox; a disabled one runs nothing and is not named.
func TestSourcesNameTheirSandboxes(t *testing.T) {
	boxed := SourceStatus{Name: "notes", Kind: KindMCP, State: StateReady, Transport: "stdio", Sandbox: "preset node, read /home/me/notes, network none"}
	open := SourceStatus{Name: "shell", Kind: KindMCP, State: StateReady, Transport: "stdio", Sandbox: "none"}
	off := SourceStatus{Name: "old", Kind: KindMCP, State: StateIdle, Transport: "stdio", Sandbox: "none", Disabled: true}
	remote := SourceStatus{Name: "docs", Kind: KindMCP, State: StateReady, Transport: "http"}
	tests := []struct {
		name    string
		sources []SourceStatus
		want    []string // named as unsandboxed
	}{
		{"all sandboxed", []SourceStatus{boxed, remote}, nil},
		{"one open", []SourceStatus{boxed, open, remote}, []string{"shell"}},
		{"a disabled one is not named", []SourceStatus{open, off}, []string{"shell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.sources = tt.sources
			var h Health
			if err := json.Unmarshal(f.do(t, "GET", "/healthz", nil).Body.Bytes(), &h); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.Unsandboxed, tt.want) {
				t.Errorf("/healthz unsandboxed = %v, want %v", h.Unsandboxed, tt.want)
			}
			for _, s := range h.Sources {
				if s.Name == boxed.Name && s.Sandbox != boxed.Sandbox {
					t.Errorf("/healthz sandbox of %s = %q, want %q", s.Name, s.Sandbox, boxed.Sandbox)
				}
			}
			page := html.UnescapeString(f.do(t, "GET", "/", nil).Body.String())
			warned := strings.Contains(page, "Running without a sandbox")
			if warned != (tt.want != nil) {
				t.Errorf("dashboard warns of unsandboxed servers: %v, want %v", warned, tt.want != nil)
			}
			if tt.want != nil && !strings.Contains(page, "with the rights of the user running toolfold: "+strings.Join(tt.want, ", ")+".") {
				t.Errorf("the dashboard does not name %v:\n%s", tt.want, page)
			}
			if slices.Contains(tt.sources, boxed) && !strings.Contains(page, boxed.Sandbox) {
				t.Errorf("the dashboard does not show the rules of %s", boxed.Name)
			}
		})
	}
}
