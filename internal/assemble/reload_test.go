package assemble

import (
	"slices"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/meta"
)

// restartNeeded names only what a running gateway cannot take: the
// presentation, tokens, origins and OAuth are applied by a reload.
func TestRestartNeeded(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *Plan)
		want   []string
	}{
		{"nothing", func(*Plan) {}, nil},
		{"presentation", func(p *Plan) {
			p.Gateway.Mode, p.Gateway.Exposition, p.Gateway.AnnotateDescriptions = expose.Search, catalog.Grouped, true
			p.Gateway.Meta, p.Gateway.ResetTools = meta.Names{Find: "lookup"}, true
			p.Gateway.RefreshingClients, p.Gateway.SearchingClients, p.Gateway.NoByteForwarding = []string{"x"}, []string{}, true
		}, nil},
		{"access", func(p *Plan) {
			p.HTTP.Auth.Tokens = []config.TokenConfig{{Token: "t-0123456789abcdef"}}
			p.HTTP.AllowedOrigins = []string{"https://app.example.com"}
			p.HTTP.Auth.OAuth = &config.OAuthConfig{Resource: "https://tools.example.com/mcp"}
		}, nil},
		{"listener and limits", func(p *Plan) {
			p.HTTP.Listen, p.HTTP.Stateless, p.HTTP.MaxSessions = ":9", true, 3
		}, []string{"http.listen", "http.stateless"}},
		{"answer budget", func(p *Plan) { p.Gateway.AnswerBytesInFlight = 1 }, nil},
		{"telemetry", func(p *Plan) { p.Telemetry.Tracing = true }, []string{"telemetry"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := &Plan{Gateway: gateway.Options{Mode: expose.Flat}}
			p := &Plan{Gateway: gateway.Options{Mode: expose.Flat}}
			tt.change(p)
			if got := restartNeeded(old, p); !slices.Equal(got, tt.want) {
				t.Errorf("restartNeeded = %v, want %v", got, tt.want)
			}
		})
	}
}
