package config

import "testing"

// Which names the config leaves to the catalog: those under a group that
// may gain groups with discovery (derived, or declared by its server).
func TestMayDiscover(t *testing.T) {
	const servers = `"mcpServers": {"gh": {"command": "gh-mcp"}, "big": {"command": "big-mcp", "autoGroups": false}, "off": {"command": "x", "disabled": true}},
		"commands": {"git": {"command": "git", "discover": "help"}},
		"groups": {"code": {"tools": ["gh__*"]}, "code.repos": {}, "loose": {"autoGroups": true, "tools": ["git__*"]}}`
	tests := []struct {
		name, derivation string
		want             map[string]bool
	}{
		{name: "derivation on", derivation: `{}`, want: map[string]bool{
			"gh.issues": true, "gh.issues.labels": true, "git.remote": true,
			// A server that keeps its group whole still declares groups.
			"big.queue": true,
			// A declared group with rules is not split unless it says so.
			"code.x": false, "loose.x": true,
			// A declared group with no rules may be; a disabled server's
			// group, an unknown one or a malformed name may not.
			"code.repos.branches": true, "off.x": false, "nope.x": false, "nope": false, "gh": false, "gh..x": false,
		}},
		{name: "derivation off", derivation: `{"enabled": false}`, want: map[string]bool{
			"gh.issues": true, "big.queue": true, "git.remote": false, "loose.x": false, "code.repos.branches": false,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse("t.json", []byte(`{`+servers+`, "disclosure": {"autoGroups": `+tt.derivation+`}}`), Options{LookupEnv: MapEnv(nil)})
			if diags.HasErrors() {
				t.Fatal(diags.String())
			}
			for name, want := range tt.want {
				if got := cfg.MayDiscover(name); got != want {
					t.Errorf("MayDiscover(%q) = %v, want %v", name, got, want)
				}
			}
		})
	}
}

// SplitGroups is Splits for every group at once.
func TestSplitGroups(t *testing.T) {
	const doc = `"mcpServers": {"gh": {"command": "gh-mcp"}, "big": {"command": "big-mcp", "autoGroups": false}, "shared": {"command": "s", "group": "code"}},
		"commands": {"git": {"command": "git", "discover": "help"}},
		"groups": {"code": {"tools": ["gh__*"]}, "code.repos": {}, "loose": {"autoGroups": true, "tools": ["git__*"]}, "kept": {"autoGroups": false}}`
	for _, tt := range []struct {
		name, derivation string
		want             []string
	}{
		{"derivation on", `{}`, []string{"code.repos", "gh", "git", "loose"}},
		{"derivation off", `{"enabled": false}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse("t.json", []byte(`{`+doc+`, "disclosure": {"autoGroups": `+tt.derivation+`}}`), Options{LookupEnv: MapEnv(nil)})
			if diags.HasErrors() {
				t.Fatal(diags.String())
			}
			got := cfg.SplitGroups()
			if len(got) != len(tt.want) {
				t.Errorf("SplitGroups() = %v, want %v", got, tt.want)
			}
			for _, name := range tt.want {
				if !got[name] {
					t.Errorf("SplitGroups() = %v lacks %q", got, name)
				}
			}
			for _, name := range cfg.GroupNames() {
				if got[name] != cfg.Splits(name) {
					t.Errorf("SplitGroups()[%q] = %v, Splits says %v", name, got[name], cfg.Splits(name))
				}
			}
		})
	}
}
