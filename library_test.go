package toolfold_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

// TestRunEndsWithItsContext: on a transport other than stdio, Run stops
// when its context ends (closing the session) and returns ctx.Err(); when
// the client leaves first it returns nil.
func TestRunEndsWithItsContext(t *testing.T) {
	tests := []struct {
		name string
		end  func(cancel context.CancelFunc, cs *mcp.ClientSession)
		want error
	}{
		{"context cancelled", func(cancel context.CancelFunc, _ *mcp.ClientSession) { cancel() }, context.Canceled},
		{"client leaves", func(_ context.CancelFunc, cs *mcp.ClientSession) { cs.Close() }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
			toolfold.AddTool(srv, &mcp.Tool{Name: "add"}, add)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ct, st := mcp.NewInMemoryTransports()
			ran := make(chan error, 1)
			go func() { ran <- srv.Run(ctx, st) }()
			// Connecting needs the server's answer: Run is serving.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tt.end(cancel, cs)
			var runErr error
			select {
			case runErr = <-ran:
			case <-time.After(time.Minute): // bounds a failure, not a pass
				t.Fatal("Run did not return")
			}
			if !errors.Is(runErr, tt.want) || (tt.want == nil && runErr != nil) {
				t.Errorf("Run returned %v, want %v", runErr, tt.want)
			}
			cs.Wait() // returns once the server's side closed the session
		})
	}
}

type countIn struct {
	N int `json:"n"`
}

// TestTypedToolsApplySchemasAsTheSDKDoes: the typed AddTool fills in
// input defaults and validates input and output against their schemas,
// as mcp.AddTool does.
func TestTypedToolsApplySchemasAsTheSDKDoes(t *testing.T) {
	withDefault := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"n": {Type: "integer", Default: json.RawMessage("7"), Minimum: jsonschema.Ptr(0.0)},
	}}
	needsID := &jsonschema.Schema{Type: "object", Required: []string{"id"}, Properties: map[string]*jsonschema.Schema{
		"id": {Type: "string"},
	}}
	echoN := func(_ context.Context, _ *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, map[string]any, error) {
		return nil, map[string]any{"n": in.N}, nil
	}
	srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat})
	toolfold.AddTool(srv, &mcp.Tool{Name: "count", InputSchema: withDefault}, echoN)
	toolfold.AddTool(srv, &mcp.Tool{Name: "bad_output", OutputSchema: needsID}, echoN)
	toolfold.AddTool(srv, &mcp.Tool{Name: "nil_result"}, toolfold.Func(func(context.Context, struct{}) (*addOut, error) { return nil, nil }))
	cs := connect(t, srv, "test")

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		wantErr  string // in the error result; "" for success
		wantJSON string // the structured content on success
	}{
		{"a default fills a missing argument", "count", map[string]any{}, "", `{"n":7}`},
		{"a given argument keeps its value", "count", map[string]any{"n": 3}, "", `{"n":3}`},
		{"no arguments at all still get defaults", "count", nil, "", `{"n":7}`},
		{"an argument the schema refuses", "count", map[string]any{"n": -1}, "minimum", ""},
		{"an output the output schema refuses", "bad_output", map[string]any{"n": 1}, "output schema", ""},
		{"a nil pointer result is the zero value", "nil_result", map[string]any{}, "", `{"sum":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := &mcp.CallToolParams{Name: tt.tool}
			if tt.args != nil {
				params.Arguments = tt.args
			}
			res, err := cs.CallTool(context.Background(), params)
			if tt.wantErr != "" {
				msg := ""
				if err != nil {
					msg = err.Error()
				} else if res.IsError {
					msg = res.Content[0].(*mcp.TextContent).Text
				}
				if !strings.Contains(msg, tt.wantErr) {
					t.Errorf("want an error saying %q, got err=%v result=%+v", tt.wantErr, err, res)
				}
				return
			}
			if err != nil || res.IsError {
				t.Fatalf("call failed: %v %+v", err, res)
			}
			if got, _ := json.Marshal(res.StructuredContent); string(got) != tt.wantJSON {
				t.Errorf("structuredContent = %s, want %s", got, tt.wantJSON)
			}
		})
	}
}

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestChangesWhileServingTakeEffect: tools, groups and Includes added
// while the server serves are listed at once and announced with
// list_changed, as the SDK's own server does; one that cannot be served is
// logged and changes nothing.
func TestChangesWhileServingTakeEffect(t *testing.T) {
	tests := []struct {
		name   string
		mode   toolfold.Mode
		change func(srv *toolfold.Server)
		want   string // a wire tool listed after the change
	}{
		{"an ungrouped tool", toolfold.ModeFlat, func(srv *toolfold.Server) {
			toolfold.AddTool(srv, &mcp.Tool{Name: "late"}, add)
		}, "late"},
		{"a tool in a new group", toolfold.ModeFlat, func(srv *toolfold.Server) {
			toolfold.AddTool(srv.Group("more", nil), &mcp.Tool{Name: "late"}, add)
		}, "late"},
		{"an Include into a new group", toolfold.ModeGrouped, func(srv *toolfold.Server) {
			srv.Group("extra", &toolfold.GroupOptions{Description: "More"}).Include("add")
		}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := toolfold.NewServer(&toolfold.Options{Mode: tt.mode})
			toolfold.AddTool(srv.Group("math", &toolfold.GroupOptions{Description: "Arithmetic"}), &mcp.Tool{Name: "add"}, add)
			changed := make(chan struct{}, 10)
			cs := connectWith(t, srv, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}})
			if names := toolNames(t, cs); slices.Contains(names, tt.want) {
				t.Fatalf("%s is listed before the change: %v", tt.want, names)
			}
			tt.change(srv)
			for !slices.Contains(toolNames(t, cs), tt.want) {
				select {
				case <-changed:
				case <-time.After(time.Minute): // bounds a failure, not a pass
					t.Fatalf("no list_changed brought %s", tt.want)
				}
			}
			if tt.want == "late" {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "late", Arguments: map[string]any{"a": 1, "b": 2}})
				if err != nil || res.IsError {
					t.Fatalf("the late tool cannot be called: %v %+v", err, res)
				}
			}
		})
	}

	t.Run("an Include of a tool never added", func(t *testing.T) {
		var logs syncBuffer
		srv := toolfold.NewServer(&toolfold.Options{Mode: toolfold.ModeFlat, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		toolfold.AddTool(srv.Group("math", nil), &mcp.Tool{Name: "add"}, add)
		cs := connect(t, srv, "test")
		srv.Group("math", nil).Include("ad")
		if !strings.Contains(logs.String(), `group \"math\" includes \"ad\": there is no such tool (did you mean \"add\"?)`) {
			t.Errorf("the bad Include was not logged: %s", logs.String())
		}
		if names := toolNames(t, cs); !slices.Contains(names, "add") {
			t.Errorf("the server stopped serving what it served: %v", names)
		}
	})
}

func connectWith(t *testing.T, srv *toolfold.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestBadDeclarationsAreErrors: what the add methods cannot refuse (they
// return no error) is refused when serving starts, with an error a caller
// can test with errors.Is and a message that names the culprit.
func TestBadDeclarationsAreErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func() *toolfold.Server
		is    error
		says  string
	}{
		{"unknown mode", func() *toolfold.Server {
			return toolfold.NewServer(&toolfold.Options{Mode: "fancy"})
		}, toolfold.ErrBadMode, `unknown mode "fancy" in Options.Mode`},
		{"unknown server exposition", func() *toolfold.Server {
			return toolfold.NewServer(&toolfold.Options{Exposition: "stacked"})
		}, toolfold.ErrBadExposition, `unknown exposition "stacked" in Options.Exposition`},
		{"unknown group exposition", func() *toolfold.Server {
			srv := toolfold.NewServer(nil)
			toolfold.AddTool(srv.Group("math", &toolfold.GroupOptions{Exposition: "grouped "}), &mcp.Tool{Name: "add"}, add)
			return srv
		}, toolfold.ErrBadExposition, `group "math": unknown exposition "grouped "`},
		{"Include of a tool never added", func() *toolfold.Server {
			srv := toolfold.NewServer(nil)
			toolfold.AddTool(srv, &mcp.Tool{Name: "add"}, add)
			srv.Group("math", nil).Include("ad")
			return srv
		}, toolfold.ErrUnknownTool, `group "math" includes "ad": there is no such tool (did you mean "add"?)`},
		{"unknown initial group", func() *toolfold.Server {
			srv := toolfold.NewServer(&toolfold.Options{InitialGroups: []string{"nope"}})
			srv.Group("nop", nil)
			return srv
		}, toolfold.ErrUnknownGroup, `initial group "nope": there is no such group (did you mean "nop"?)`},
		{"unknown excluded group", func() *toolfold.Server {
			srv := toolfold.NewServer(&toolfold.Options{ExcludeGroups: []string{"repo"}})
			srv.Group("repos", nil)
			return srv
		}, toolfold.ErrUnknownGroup, `cannot exclude group "repo": there is no such group (did you mean "repos"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.build().Handler(nil)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Handler: err = %v, want one that is %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			_, st := mcp.NewInMemoryTransports()
			if err := tt.build().Run(context.Background(), st); !errors.Is(err, tt.is) {
				t.Errorf("Run: err = %v, want one that is %v", err, tt.is)
			}
		})
	}
}
