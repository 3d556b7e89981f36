package sdkshim_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK behaviours the gateway's registries rely on: what a server does
// with the definitions and capabilities it is given, and what it says of
// its own lists. None has code in this package; the gateway's use is named
// in each test.

// TestSDKMarksSessionListsPublic: the SDK answers a session's tools/list
// itself with cacheScope public, whoever asks; the gateway's middleware
// (gateway session.middleware) says private where the list depends on the
// caller. ServerOptions.SetCacheable could replace that rewrite.
func TestSDKMarksSessionListsPublic(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, noArgs)
	cs, _ := bareServer(t, s, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "public" || res.TTLMs != 0 {
		t.Fatalf("the SDK's own tools/list says cacheScope %q, ttlMs %d; revisit the gateway's override", res.CacheScope, res.TTLMs)
	}
}

// TestSDKAddToolKeepsTheDefinitionAsGiven: AddTool neither changes the
// definition it is given nor needs one of its own per server, so the
// sessions of the groups mode, a server each, share their meta-tools'
// definitions (gateway Gateway.metaTools, session.reconcile), and each
// lists them as they were made.
func TestSDKAddToolKeepsTheDefinitionAsGiven(t *testing.T) {
	tool := &mcp.Tool{Name: "shared", Description: "one definition, many servers", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	want, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s := mcp.NewServer(&mcp.Implementation{Name: "bare"}, nil)
		s.AddTool(tool, noArgs)
		cs, _ := bareServer(t, s, nil)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 {
			t.Fatalf("server %d listed %d tools, want 1", i, len(res.Tools))
		}
		listed, _ := json.Marshal(res.Tools[0])
		var got, given any
		if json.Unmarshal(listed, &got) != nil || json.Unmarshal(want, &given) != nil || !reflect.DeepEqual(got, given) {
			t.Errorf("server %d listed %s, want the definition as given, %s", i, listed, want)
		}
		if after, _ := json.Marshal(tool); string(after) != string(want) {
			t.Fatalf("AddTool changed the definition it was given: %s, was %s", after, want)
		}
	}
}

// TestSDKCopiesTheServerCapabilities: a server adds what it serves (here a
// prompt) to a copy of the capabilities it was given, so one value can be
// given to every session's server (gateway Gateway.serverCapabilities).
func TestSDKCopiesTheServerCapabilities(t *testing.T) {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	caps.AddExtension("io.example/ext", map[string]any{})
	want, _ := json.Marshal(caps)
	withPrompt := mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: caps})
	withPrompt.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	cs, _ := bareServer(t, withPrompt, nil)
	if cs.InitializeResult().Capabilities.Prompts == nil {
		t.Fatal("the server with a prompt does not advertise prompts")
	}
	if after, _ := json.Marshal(caps); string(after) != string(want) {
		t.Fatalf("the server changed the capabilities it was given: %s, was %s", after, want)
	}
	plain, _ := bareServer(t, mcp.NewServer(&mcp.Implementation{Name: "bare"}, &mcp.ServerOptions{Capabilities: caps}), nil)
	if got := plain.InitializeResult().Capabilities; got.Prompts != nil || got.Extensions["io.example/ext"] == nil {
		t.Fatalf("a server sharing the capabilities advertises %+v, want the extension and no prompts", got)
	}
}
