package config

import (
	"strings"
	"testing"
)

func TestSandboxBlock(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr string // "" means it loads
		check   func(t *testing.T, c *Config)
	}{{
		name: "full block",
		json: `{"mcpServers":{"notes":{"command":"npx","sandbox":{"preset":"node","read":["/srv/notes"],"write":["/tmp/x"],"exec":["/usr/bin/git"],"network":[443,80,443],"limits":{"memory":"512MiB","processes":64,"openFiles":256,"cpu":"10m"},"required":false}}}}`,
		check: func(t *testing.T, c *Config) {
			sb := c.MCPServers["notes"].Sandbox
			if sb == nil || sb.Preset != "node" || sb.IsRequired() || sb.Limits.Processes != 64 || sb.Limits.Memory != 512<<20 || sb.Limits.CPU.Std().Minutes() != 10 {
				t.Fatalf("sandbox = %+v", sb)
			}
			if got := sb.Network.String(); got != "TCP connect to port 80, 443" {
				t.Errorf("network = %q", got)
			}
		},
	}, {
		name: "network true",
		json: `{"mcpServers":{"a":{"command":"x","sandbox":{"network":true}}}}`,
		check: func(t *testing.T, c *Config) {
			if sb := c.MCPServers["a"].Sandbox; !sb.Network.All || !sb.IsRequired() {
				t.Fatalf("sandbox = %+v", sb)
			}
		},
	}, {
		name: "defaults fill stdio servers only, own block wins",
		json: `{"serverDefaults":{"sandbox":{"preset":"python"}},"mcpServers":{"a":{"command":"x"},"b":{"command":"y","sandbox":{"preset":"go"}},"r":{"url":"https://example.com/mcp"}}}`,
		check: func(t *testing.T, c *Config) {
			if sb := c.MCPServers["a"].Sandbox; sb == nil || sb.Preset != "python" {
				t.Errorf("a: %+v", sb)
			}
			if sb := c.MCPServers["b"].Sandbox; sb == nil || sb.Preset != "go" {
				t.Errorf("b: %+v", sb)
			}
			if sb := c.MCPServers["r"].Sandbox; sb != nil {
				t.Errorf("remote server got a sandbox: %+v", sb)
			}
		},
	},
		{name: "unknown preset", json: `{"mcpServers":{"a":{"command":"x","sandbox":{"preset":"ruby"}}}}`, wantErr: "preset"},
		{name: "relative path", json: `{"mcpServers":{"a":{"command":"x","sandbox":{"read":["notes"]}}}}`, wantErr: "not an absolute path"},
		{name: "bad port", json: `{"mcpServers":{"a":{"command":"x","sandbox":{"network":[70000]}}}}`, wantErr: "not a TCP port"},
		{name: "network string", json: `{"mcpServers":{"a":{"command":"x","sandbox":{"network":"yes"}}}}`, wantErr: "true, false, or a list of TCP ports"},
		{name: "remote server", json: `{"mcpServers":{"a":{"url":"https://example.com/mcp","sandbox":{}}}}`, wantErr: `"sandbox" only applies`},
		{name: "bad default", json: `{"serverDefaults":{"sandbox":{"write":["rel"]}},"mcpServers":{}}`, wantErr: "serverDefaults.sandbox.write[0]"},
		{name: "unknown key", json: `{"mcpServers":{"a":{"command":"x","sandbox":{"reed":["/x"]}}}}`, wantErr: `unknown key "reed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, diags := Parse("c.json", []byte(tt.json), Options{})
			if tt.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.String(), tt.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tt.wantErr, diags)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatalf("errors: %v", diags)
			}
			tt.check(t, c)
		})
	}
}
