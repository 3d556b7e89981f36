package config

import (
	"testing"
	"time"
)

func TestHTTPLimits(t *testing.T) {
	tests := []struct {
		name, src string
		max       int
		idle      time.Duration
		allow     bool
	}{
		{"defaults", `{"mcpServers": {}}`, DefaultMaxSessions, DefaultSessionIdleTimeout, false},
		{"set", `{"http": {"maxSessions": 50, "sessionIdleTimeout": "2m", "allowUnauthenticated": true}}`, 50, 2 * time.Minute, true},
		{"bare seconds", `{"http": {"sessionIdleTimeout": 90}}`, DefaultMaxSessions, 90 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse("t.json", []byte(tt.src), Options{LookupEnv: MapEnv(nil)})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			h := cfg.HTTP
			if h.MaxSessions != tt.max || h.SessionIdleTimeout.Std() != tt.idle || h.AllowUnauthenticated != tt.allow {
				t.Errorf("got maxSessions %d, sessionIdleTimeout %v, allowUnauthenticated %v; want %d, %v, %v",
					h.MaxSessions, h.SessionIdleTimeout.Std(), h.AllowUnauthenticated, tt.max, tt.idle, tt.allow)
			}
		})
	}
	// allowUnauthenticated is the explicit yes that silences the warning.
	_, diags := Parse("t.json", []byte(`{"mcpServers": {"a": {"command": "a"}}, "http": {"listen": "0.0.0.0:8080", "allowUnauthenticated": true}}`), Options{LookupEnv: MapEnv(nil)})
	if len(diags) != 0 {
		t.Errorf("an open listen address allowed explicitly still warns:\n%s", diags)
	}
}
