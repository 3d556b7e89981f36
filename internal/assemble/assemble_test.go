package assemble

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/upstream"
)

func load(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, diags := config.Parse("toolfold.json", []byte(src), config.Options{LookupEnv: config.MapEnv(nil)})
	if diags.HasErrors() {
		t.Fatal(diags.String())
	}
	return cfg
}

func TestFromConfigSwitchesAndGroups(t *testing.T) {
	cfg := load(t, `{
		"mcpServers": {"gh": {"command": "true", "prefix": "github"}, "off": {"command": "true", "disabled": true}},
		"commands": {"echo": {"command": "echo", "description": "Print", "actions": {"say": {"readOnly": true}}}},
		"groups": {"issues": {"parent": "gh", "tools": ["github__*issue*"], "default": "enabled"}, "echo": {"instructions": "Be brief."}},
		"disclosure": {"mode": "groups", "maxTools": 7, "metaTools": {"enable_tools": "unfold"}}
	}`)
	p, err := FromConfig(context.Background(), cfg, Switches{Exclude: []string{"gh"}}, Options{LookupEnv: config.MapEnv(map[string]string{"MCP_GROUP_ECHO": "true"})})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]catalog.State{}
	for _, g := range p.Spec.Groups {
		states[string(g.ID)] = g.Default
		if g.ID == "echo" && (g.Instructions != "Be brief." || len(g.Members.Tools) != 1) {
			t.Errorf("the echo group did not merge config and command: %+v", g)
		}
	}
	if states["gh"] != catalog.Excluded || states["issues"] != catalog.Excluded {
		t.Errorf("--exclude-groups gh must exclude gh and its child issues: %v", states)
	}
	if states["echo"] != catalog.Enabled {
		t.Errorf("MCP_GROUP_ECHO=true must enable echo: %v", states)
	}
	if _, ok := states["off"]; ok {
		t.Error("a disabled server's implied group must be left out")
	}
	if p.Upstreams != nil {
		t.Error("an excluded server must never be started, so no manager is needed")
	}
	if p.View.MaxTools != 7 || p.Gateway.Meta.Enable != "unfold" || p.Gateway.Mode != "groups" {
		t.Errorf("options not carried: %+v %+v", p.View, p.Gateway)
	}
	if !p.Commands["echo"] {
		t.Error("echo is not recorded as a command source")
	}
}

func TestFromConfigRefusesBadSwitches(t *testing.T) {
	cfg := load(t, `{"commands": {"echo": {"command": "echo", "actions": {"say": {}}}}}`)
	_, err := FromConfig(context.Background(), cfg, Switches{Enable: []string{"ecoh"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), `group "ecoh" does not exist`) {
		t.Errorf("err = %v", err)
	}
}

func TestHopMetaDropsPerHopKeys(t *testing.T) {
	in := mcp.Meta{"progressToken": 7, mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: map[string]any{"name": "x"}, "vendor/key": "kept"}
	out := hopMeta(in)
	if len(out) != 2 || out["progressToken"] != 7 || out["vendor/key"] != "kept" {
		t.Errorf("hopMeta = %v", out)
	}
	if _, ok := in[mcp.MetaKeyProtocolVersion]; !ok {
		t.Error("hopMeta changed the caller's map")
	}
}

func TestRefreshingClientsDefaultToTheGatewaysList(t *testing.T) {
	p, err := FromConfig(context.Background(), load(t, `{}`), Switches{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Gateway.RefreshingClients != nil {
		t.Errorf("an absent refreshingClients must leave the gateway's default: %v", p.Gateway.RefreshingClients)
	}
	p, _ = FromConfig(context.Background(), load(t, `{"disclosure": {"refreshingClients": []}}`), Switches{}, Options{})
	if p.Gateway.RefreshingClients == nil || len(p.Gateway.RefreshingClients) != 0 {
		t.Errorf("an explicit empty list means none: %#v", p.Gateway.RefreshingClients)
	}
}

func TestServable(t *testing.T) {
	tests := []struct {
		schema any
		want   string
	}{
		{map[string]any{"type": "object"}, ""},
		{map[string]any{"properties": map[string]any{}}, ""},
		{nil, ""},
		{map[string]any{"type": "string"}, "has type string"},
		{map[string]any{"type": []any{"object", "null"}}, "has type [object null]"},
		{map[string]any{"type": nil}, ""},
		{json.RawMessage(`{"type":"array"}`), "has type array"},
		{json.RawMessage(`{"type":"object"}`), ""},
		{[]int{1}, "not a JSON object"},
		// The last of repeated keys counts, as decoders read it.
		{json.RawMessage(`{"type":"object","type":"string"}`), "has type string"},
		{json.RawMessage(`{"type":"string","type":"object"}`), ""},
		// Keys encoding/json also reads as "type".
		{json.RawMessage(`{"TYPE":"string"}`), "has type string"},
		{json.RawMessage(`{"\u0074ype":"string"}`), "has type string"},
		{json.RawMessage(`{"type":"\u006fbject"}`), ""},
		{json.RawMessage(` {"type" : "object" , "properties":{"a":{"type":"string"}}} `), ""},
		{json.RawMessage(`{"type":"object"`), "not a JSON object"},
		{json.RawMessage(`"object"`), "not a JSON object"},
	}
	for _, tt := range tests {
		got := servable(&mcp.Tool{Name: "t", InputSchema: tt.schema})
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("servable(%v) = %q, want %q", tt.schema, got, tt.want)
		}
	}
	if servable(&mcp.Tool{}) == "" {
		t.Error("a tool without a name must not be served")
	}
}

func TestCallCapabilities(t *testing.T) {
	all := upstream.Forwarding{Sampling: true, Elicitation: true, Roots: true}
	var rootsOnly mcp.ClientCapabilities
	rootsOnly.Roots.ListChanged = true
	tests := []struct {
		name   string
		client *mcp.ClientCapabilities
		fw     upstream.Forwarding
		want   string
	}{
		{"no client capabilities", nil, all, `{}`},
		{"declared nothing", &mcp.ClientCapabilities{}, all, `{}`},
		{"sampling and elicitation", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}}, all, `{"elicitation":{"form":{}},"sampling":{}}`},
		{"not forwarded", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}}, upstream.Forwarding{}, `{}`},
		{"url elicitation only", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}, all, `{}`},
		{"roots, forwarded", &rootsOnly, all, `{"roots":{}}`},
		{"roots, not forwarded", &rootsOnly, upstream.Forwarding{Sampling: true}, `{}`},
		{"roots v2", &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}, all, `{"roots":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(callCapabilities(tt.client, tt.fw))
			if err != nil || string(got) != tt.want {
				t.Errorf("callCapabilities = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}
