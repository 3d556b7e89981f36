package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReloaderValidatesFirst(t *testing.T) {
	tests := []struct {
		name, config, want, problem string
	}{
		{name: "same bytes", config: `{"mcpServers":{}}`, want: reloadUnchanged},
		{name: "check refuses", config: `{"mcpServers":{"x":{"command":"true","bogus":1}}}`, want: reloadRefused, problem: `toolfold.json:1: mcpServers.x.bogus: unknown key "bogus"`},
		{name: "valid change", config: `{"mcpServers":{"x":{"command":"true"}}}`, want: reloadNeedsRestart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "toolfold.json")
			if err := os.WriteFile(path, []byte(`{"mcpServers":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			var counted []string
			r := newReloader(path, func(string) (string, bool) { return "", false }, slog.New(slog.DiscardHandler), func(res string) { counted = append(counted, res) })
			if r.lastStatus() != nil {
				t.Fatal("a status before any reload")
			}
			if err := os.WriteFile(path, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			st := r.reload("test")
			if st.Result != tt.want || len(counted) != 1 || counted[0] != tt.want {
				t.Fatalf("result %q, counted %v; want %q once", st.Result, counted, tt.want)
			}
			if got := strings.Join(st.Problems, "\n"); (tt.problem == "") != (got == "") || !strings.Contains(got, tt.problem) {
				t.Errorf("problems %q, want %q", got, tt.problem)
			}
			if last := r.lastStatus(); last == nil || last.Result != tt.want {
				t.Errorf("last status %+v", last)
			}
		})
	}
}

func TestReloaderWatchesEnvFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "toolfold.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"x":{"command":"true","envFile":"x.env"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.env"), []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newReloader(path, func(string) (string, bool) { return "", false }, slog.New(slog.DiscardHandler), nil)
	got := r.files()
	if len(got) != 2 || got[1] != filepath.Join(dir, "x.env") {
		t.Fatalf("files %v, want the config and x.env", got)
	}
}

// An editor that saves in place truncates the file first: a reload that
// reads it then must not apply an empty config, which stops every server.
func TestReloaderRefusesEmptyConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolfold.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newReloader(path, func(string) (string, bool) { return "", false }, slog.New(slog.DiscardHandler), nil)
	for _, content := range []string{"", "  \n"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if st := r.reload("test"); st.Result != reloadRefused || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "the config file is empty") {
			t.Errorf("%q: %+v, want refused as empty", content, st)
		}
	}
}
