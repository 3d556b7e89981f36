package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustBlock(t *testing.T) {
	cases := []struct {
		name, trust string
		want        TrustConfig
		lock        string
		err         string
	}{
		{"defaults", `{}`, TrustConfig{}, filepath.Join("/etc/tf", "toolfold.lock"), ""},
		{"all keys", `{"lockFile":"pins/t.lock","readOnly":true,"onChange":"warn","onNew":"accept","newServers":"hold","onFinding":"hold"}`,
			TrustConfig{LockFile: "pins/t.lock", ReadOnly: true, OnChange: "warn", OnNew: "accept", NewServers: "hold", OnFinding: "hold"}, filepath.Join("/etc/tf", "pins/t.lock"), ""},
		{"absolute lock", `{"lockFile":"/var/lib/toolfold.lock"}`, TrustConfig{LockFile: "/var/lib/toolfold.lock"}, "/var/lib/toolfold.lock", ""},
		{"bad onChange", `{"onChange":"hodl"}`, TrustConfig{}, "", `trust.onChange: "hodl" is not a trust policy; did you mean "hold"?`},
		{"warn is not for onNew", `{"onNew":"warn"}`, TrustConfig{}, "", "trust.onNew"},
		{"unknown key", `{"onChanges":"hold"}`, TrustConfig{}, "", "onChanges"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := `{"mcpServers":{"a":{"command":"a"}},"trust":` + c.trust + `}`
			cfg, diags := Parse("/etc/tf/toolfold.json", []byte(src), Options{})
			if c.err != "" {
				if !strings.Contains(diags.String(), c.err) {
					t.Fatalf("diagnostics %q lack %q", diags.String(), c.err)
				}
				return
			}
			if len(diags) != 0 {
				t.Fatal(diags)
			}
			if cfg.Trust != c.want {
				t.Errorf("trust = %+v, want %+v", cfg.Trust, c.want)
			}
			if got := cfg.LockPath(); got != c.lock {
				t.Errorf("LockPath = %q, want %q", got, c.lock)
			}
		})
	}
}
