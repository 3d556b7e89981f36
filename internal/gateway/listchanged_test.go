package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/gateway"
)

// fakeExtras serves prompts and resources whose lists a test changes.
type fakeExtras struct {
	mu        sync.Mutex
	prompts   []string
	resources []string
}

func (x *fakeExtras) set(prompts, resources []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.prompts, x.resources = prompts, resources
}

func (x *fakeExtras) ListPrompts(context.Context) ([]*mcp.Prompt, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []*mcp.Prompt
	for _, n := range x.prompts {
		out = append(out, &mcp.Prompt{Name: n})
	}
	return out, nil
}

func (x *fakeExtras) GetPrompt(_ context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Description: p.Name}, nil
}

func (x *fakeExtras) ListResources(context.Context) ([]*mcp.Resource, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []*mcp.Resource
	for _, u := range x.resources {
		out = append(out, &mcp.Resource{Name: u, URI: u})
	}
	return out, nil
}

func (x *fakeExtras) ListResourceTemplates(context.Context) ([]*mcp.ResourceTemplate, error) {
	return nil, nil
}

func (x *fakeExtras) ReadResource(_ context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: p.URI, Text: "x"}}}, nil
}

func (x *fakeExtras) Complete(context.Context, *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}
func (x *fakeExtras) SetLoggingLevel(context.Context, mcp.LoggingLevel)         {}
func (x *fakeExtras) Subscribe(context.Context, *mcp.SubscribeParams) error     { return nil }
func (x *fakeExtras) Unsubscribe(context.Context, *mcp.UnsubscribeParams) error { return nil }

// listener is a client that records the prompt and resource list_changed
// notifications it gets.
type listener struct {
	cs                 *mcp.ClientSession
	prompts, resources chan struct{}
}

func listenerOptions(l *listener) *mcp.ClientOptions {
	l.prompts, l.resources = make(chan struct{}, 16), make(chan struct{}, 16)
	return &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { l.prompts <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { l.resources <- struct{}{} },
	}
}

// connectListener connects over in-memory transports; protocol "" is the
// SDK's newest (2026-07-28), on which the client subscribes through
// subscriptions/listen to what the server declares.
func connectListener(t *testing.T, g *gateway.Gateway, name, protocol string) *listener {
	t.Helper()
	l := &listener{}
	l.cs = connectAt(t, g, name, protocol, listenerOptions(l))
	return l
}

// hear waits until every client has had one notification on the channel
// pick chooses.
func hear(t *testing.T, clients map[string]*listener, what string, pick func(*listener) chan struct{}) {
	t.Helper()
	for who, l := range clients {
		select {
		case <-pick(l):
		case <-time.After(5 * time.Second): // a hang guard; virtual in a bubble
			t.Fatalf("%s: no %s list_changed", who, what)
		}
	}
}

// hearOnce is hear inside a synctest bubble that then checks that none had
// a second notification for the same burst of changes: the burst was made
// before the first was sent, so any second one is due within the gateway's
// delay and the SDK's debounce; a virtual second outlasts both, and
// synctest.Wait lets whatever they set off be delivered.
func hearOnce(t *testing.T, clients map[string]*listener, what string, pick func(*listener) chan struct{}) {
	t.Helper()
	hear(t, clients, what, pick)
	time.Sleep(time.Second)
	synctest.Wait()
	for who, l := range clients {
		select {
		case <-pick(l):
			t.Errorf("%s: a second %s list_changed for one burst of changes", who, what)
		default:
		}
	}
}

func prompts(l *listener) chan struct{}   { return l.prompts }
func resources(l *listener) chan struct{} { return l.resources }

func silent(t *testing.T, who, what string, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
		t.Errorf("%s: an unexpected %s list_changed", who, what)
	default:
	}
}

func promptNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return joinSorted(res.Prompts, func(p *mcp.Prompt) string { return p.Name })
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return joinSorted(res.Resources, func(r *mcp.Resource) string { return r.URI })
}

// TestPromptAndResourceListChangesReachEveryClient covers every mode: the
// shared server of a static mode, and the servers of their own that
// groups-mode clients have. Every client hears of each burst of changes
// once, hears nothing of the other list, and lists the change next.
func TestPromptAndResourceListChangesReachEveryClient(t *testing.T) {
	for _, tc := range []struct {
		mode     expose.Mode
		protocol string
	}{
		{expose.Flat, "2025-11-25"},
		{expose.Grouped, "2025-11-25"},
		{expose.Search, "2025-11-25"},
		{expose.Groups, "2025-11-25"},
		{expose.Auto, "2025-11-25"}, // one groups client, one search client
		{expose.Flat, ""},           // 2026-07-28: through subscriptions/listen
		{expose.Search, ""},
	} {
		name := string(tc.mode) + "/" + tc.protocol
		if tc.protocol == "" {
			name = string(tc.mode) + "/newest"
		}
		t.Run(name, func(t *testing.T) {
			// In a bubble: the transports are in memory and the waits are
			// timers, so virtual time and synctest.Wait replace guesses.
			synctest.Test(t, func(t *testing.T) {
				x := &fakeExtras{}
				x.set([]string{"a"}, []string{"mem://a"})
				g := newGateway(t, gateway.Options{Mode: tc.mode, Extras: x, ExtrasListChanged: true}, nil)
				clients := map[string]*listener{
					"claude-code": connectListener(t, g, "claude-code", tc.protocol),
					"other":       connectListener(t, g, "other", tc.protocol),
				}
				for who, l := range clients {
					caps := l.cs.InitializeResult().Capabilities
					if caps.Prompts == nil || !caps.Prompts.ListChanged || caps.Resources == nil || !caps.Resources.ListChanged {
						t.Fatalf("%s: capabilities %+v %+v, want listChanged for prompts and resources", who, caps.Prompts, caps.Resources)
					}
					if got := promptNames(t, l.cs); got != "a" {
						t.Fatalf("%s: prompts %q", who, got)
					}
				}
				// A 2026-07-28 client opens its listen stream in the
				// background: once the bubble is idle, it is open.
				synctest.Wait()

				x.set([]string{"a", "b"}, []string{"mem://a"})
				g.PromptsChanged() // three upstreams at once
				g.PromptsChanged()
				g.PromptsChanged()
				hearOnce(t, clients, "prompts", prompts)
				for who, l := range clients {
					silent(t, who, "resources", l.resources)
					if got := promptNames(t, l.cs); got != "a,b" {
						t.Errorf("%s: prompts after the change %q, want a,b", who, got)
					}
				}

				x.set([]string{"a", "b"}, []string{"mem://a", "mem://b"})
				g.ResourcesChanged()
				hearOnce(t, clients, "resources", resources)
				for who, l := range clients {
					silent(t, who, "prompts", l.prompts)
					if got := resourceURIs(t, l.cs); got != "mem://a,mem://b" {
						t.Errorf("%s: resources after the change %q", who, got)
					}
					// The placeholder that makes the SDK announce is never seen.
					if _, err := l.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "b"}); err != nil {
						t.Errorf("%s: prompts/get: %v", who, err)
					}
				}
			})
		})
	}
}

// TestListChangedIsDeclaredOnlyWhenPromised keeps the gateway from
// announcing what nobody will tell it: without ExtrasListChanged the lists
// pass through as before, with no listChanged and no notifications.
func TestListChangedIsDeclaredOnlyWhenPromised(t *testing.T) {
	synctest.Test(t, listChangedIsDeclaredOnlyWhenPromised)
}

func listChangedIsDeclaredOnlyWhenPromised(t *testing.T) {
	x := &fakeExtras{}
	x.set([]string{"a"}, nil)
	g := newGateway(t, gateway.Options{Mode: expose.Flat, Extras: x}, nil)
	l := connectListener(t, g, "x", "2025-11-25")
	caps := l.cs.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Prompts.ListChanged || caps.Resources == nil || caps.Resources.ListChanged {
		t.Errorf("capabilities %+v %+v, want prompts and resources without listChanged", caps.Prompts, caps.Resources)
	}
	x.set([]string{"a", "b"}, nil)
	g.PromptsChanged()
	// Virtual time: a second outlasts the gateway's delay and the SDK's
	// debounce, and synctest.Wait lets anything they set off arrive.
	time.Sleep(time.Second)
	synctest.Wait()
	silent(t, "x", "prompts", l.prompts)
	if got := promptNames(t, l.cs); got != "a,b" {
		t.Errorf("prompts %q, want a,b: the lists are never cached", got)
	}
}

// TestListChangedOverHTTP covers the group endpoints (a gateway of their
// own, kept by the main one) and a stateless endpoint, whose clients
// cannot be told but must keep working.
func TestListChangedOverHTTP(t *testing.T) {
	x := &fakeExtras{}
	x.set([]string{"a"}, nil)
	g := newGateway(t, gateway.Options{Mode: expose.Auto, Extras: x, ExtrasListChanged: true}, nil)
	group, err := g.GroupHandler("code", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	stateless, err := g.HTTPHandler(&gateway.HTTPOptions{Stateless: true})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(h *httptest.Server, protocol string) *listener {
		l := &listener{}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, listenerOptions(l)).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: h.URL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		l.cs = cs
		return l
	}
	// A stateful client opens its standalone stream in the background, and
	// a notification sent before that stream is claimed is lost. The SDK
	// writes the stream's first bytes while it claims it, holding the lock
	// that sending takes: the first write to a GET means it is claimed.
	claimed := make(chan struct{})
	var once sync.Once
	gs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w = &firstWrite{ResponseWriter: w, seen: func() { once.Do(func() { close(claimed) }) }}
		}
		group.ServeHTTP(w, r)
	}))
	ss := httptest.NewServer(stateless)
	// Closed after the clients (cleanups run last first): a server's Close
	// waits for its connections.
	t.Cleanup(gs.Close)
	t.Cleanup(ss.Close)
	groupClient := dial(gs, "2025-11-25")
	statelessClient := dial(ss, "2025-11-25")
	select {
	case <-claimed:
	case <-time.After(10 * time.Second): // a hang guard
		t.Fatal("the group endpoint's client opened no standalone stream")
	}

	x.set([]string{"a", "b"}, nil)
	g.PromptsChanged()
	hear(t, map[string]*listener{"group endpoint": groupClient}, "prompts", prompts)
	// A second announcement of this change would be on its way before the
	// resources change below is even made, and both travel the one stream:
	// hearing the resources change first proves there was none.
	g.ResourcesChanged()
	hear(t, map[string]*listener{"group endpoint": groupClient}, "resources", resources)
	silent(t, "group endpoint", "prompts", groupClient.prompts)
	silent(t, "stateless", "prompts", statelessClient.prompts)
	for who, l := range map[string]*listener{"group endpoint": groupClient, "stateless": statelessClient} {
		if got := promptNames(t, l.cs); got != "a,b" {
			t.Errorf("%s: prompts %q, want a,b", who, got)
		}
	}
}

// Everything fakeExtras offers comes from the source "" of catalogtest.Tree's
// tools, so every part of the catalog reaches it.
func (x *fakeExtras) PromptSource(context.Context, string) (string, bool)   { return "", true }
func (x *fakeExtras) ResourceSource(context.Context, string) (string, bool) { return "", true }
func (x *fakeExtras) TemplateSource(context.Context, string) (string, bool) { return "", true }

// firstWrite calls seen when the response's first bytes are written.
type firstWrite struct {
	http.ResponseWriter
	seen func()
}

func (w *firstWrite) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.seen()
	return n, err
}

// Flush is for the handlers that assert http.Flusher.
func (w *firstWrite) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *firstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }
