package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNestingRecognizesToolfoldOnTheSameConfig: the entries that run this
// toolfold (self) on the config being loaded are refused, each naming its
// key path; toolfold on another config, or a command that starts nothing,
// is not.
func TestNestingRecognizesToolfoldOnTheSameConfig(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bin", "toolfold")
	if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "toolfold.json")
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		command string
		args    []string
		cwd     string
		refused bool
	}{
		{"relative path from cwd", "bin/toolfold", []string{"serve"}, dir, true},
		{"go run by directory", "go", []string{"run", "./cmd/toolfold", "serve", "--config", file}, "", true},
		{"go run by import path", "/usr/local/go/bin/go", []string{"run", "-C", "src", "github.com/toolfold/toolfold/cmd/toolfold@latest", "tools", "-config=" + file}, "", true},
		{"another config", self, []string{"serve", "--config", "other.json"}, dir, false},
		{"version starts nothing", self, []string{"version"}, dir, false},
		{"go run of another program", "go", []string{"run", "./cmd/other", "serve", "--config", file}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{File: file, MCPServers: map[string]ServerConfig{"x": {Command: tt.command, Args: tt.args, Cwd: tt.cwd, Transport: TransportStdio}}}
			if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			diags := cfg.checkNesting(Options{Self: self})
			if got := diags.HasErrors(); got != tt.refused {
				t.Fatalf("refused = %v, want %v: %s", got, tt.refused, diags)
			}
			if tt.refused && !strings.Contains(diags.String(), "mcpServers.x.command: this server runs toolfold itself") {
				t.Errorf("the problem does not name the entry: %s", diags)
			}
		})
	}
}
