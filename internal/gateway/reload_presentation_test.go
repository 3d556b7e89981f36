package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
)

// TestUpdateWithAppliesPresentation: a config reload's new presentation
// (mode, meta-tool names, reset_tools, the auto mode's client lists)
// applies from the next request: a client that connects after it, and a
// request of a 2026-07-28 client, get the new one, while a session that
// was open keeps its mode, stays usable, and hears list_changed exactly
// when its own list changed.
func TestUpdateWithAppliesPresentation(t *testing.T) {
	const (
		search  = "call_tool,describe_tools,find_tools,guidance,u"
		groups  = "call_tool,disable_tools,enable_tools,find_tools,u"
		flatTop = "a,b,c,d,e,f,u"
	)
	tests := []struct {
		name       string
		before     gateway.Options
		after      gateway.Options
		client     string // the clientInfo.name of every client
		open       string // the open session's list before the reload
		openAfter  string // and after: it keeps its mode
		changed    bool   // whether the open session hears list_changed
		newClient  string // the list of a client connecting after the reload
		perRequest string // a 2026-07-28 request's list after it ("": not checked)
	}{
		{
			name:   "mode search to flat",
			before: gateway.Options{Mode: expose.Search}, after: gateway.Options{Mode: expose.Flat},
			client: "x", open: search, openAfter: search, newClient: flatTop, perRequest: flatTop,
		},
		{
			name:   "renamed meta-tool",
			before: gateway.Options{Mode: expose.Search}, after: gateway.Options{Mode: expose.Search, Meta: meta.Names{Find: "lookup"}},
			client: "x", open: search, openAfter: "call_tool,describe_tools,guidance,lookup,u", changed: true,
			newClient: "call_tool,describe_tools,guidance,lookup,u", perRequest: "call_tool,describe_tools,guidance,lookup,u",
		},
		{
			name:   "reset_tools turned on",
			before: gateway.Options{Mode: expose.Groups}, after: gateway.Options{Mode: expose.Groups, ResetTools: true},
			client: "x", open: groups, openAfter: "call_tool,disable_tools,enable_tools,find_tools,reset_tools,u", changed: true,
			newClient: "call_tool,disable_tools,enable_tools,find_tools,reset_tools,u",
		},
		{
			name:   "auto mode's searching clients",
			before: gateway.Options{}, after: gateway.Options{SearchingClients: []string{"x"}},
			client: "x", open: search, openAfter: search, newClient: flatTop, perRequest: flatTop,
		},
		{
			name:   "auto mode's refreshing clients",
			before: gateway.Options{}, after: gateway.Options{RefreshingClients: []string{"x"}, SearchingClients: []string{}},
			client: "x", open: search, openAfter: search, newClient: groups,
		},
		{
			// The open groups session keeps its meta-tools, though the
			// new mode serves the groups exposure without them.
			name:   "mode groups to search",
			before: gateway.Options{Mode: expose.Groups}, after: gateway.Options{Mode: expose.Search},
			client: "x", open: groups, openAfter: groups, newClient: search, perRequest: search,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t, tt.before, nil)
			open := connect(t, g, tt.client)
			if got := open.names(t); got != tt.open {
				t.Fatalf("before the reload: %q, want %q", got, tt.open)
			}
			space, err := view.NewSpace(catalogtest.Tree(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.UpdateWith(space, &tt.after); err != nil {
				t.Fatal(err)
			}
			if tt.changed {
				open.waitChanged(t)
			} else {
				open.quiet(t)
			}
			if got := open.names(t); got != tt.openAfter {
				t.Errorf("the open session after the reload: %q, want %q", got, tt.openAfter)
			}
			if got := connect(t, g, tt.client).names(t); got != tt.newClient {
				t.Errorf("a new session after the reload: %q, want %q", got, tt.newClient)
			}
			if tt.perRequest != "" {
				res, err := connectAt(t, g, tt.client, "2026-07-28", nil).ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := toolNames(res.Tools); got != tt.perRequest {
					t.Errorf("a 2026-07-28 request after the reload: %q, want %q", got, tt.perRequest)
				}
			}
			// The open session still works: its meta-tools answer.
			if strings.Contains(tt.openAfter, "enable_tools") {
				if res, text := open.call(t, "enable_tools", map[string]any{"groups": []string{"code"}}); res.IsError {
					t.Errorf("enable_tools on the open session after the reload: %s", text)
				}
			}
		})
	}
}
