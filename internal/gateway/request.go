package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/groupsext"
)

// perRequestMode marks the session of the per-request server: the server of
// every client without a view. It answers tools/list and tools/call from
// the request alone: its protocol version, and on 2026-07-28 the clientInfo
// and clientCapabilities in the request's _meta, never what an earlier
// request on the same connection said. Its SDK registry holds no tools.
const perRequestMode expose.Mode = "per-request"

// pageSize is how many tools or groups one page of a list answered per
// request holds (the SDK's default for the lists it answers).
const pageSize = 1000

// clientRequest is what every *mcp.ServerRequest offers about its client.
type clientRequest interface {
	ProtocolVersion() string
	ClientInfo() *mcp.Implementation
	ClientCapabilities() *mcp.ClientCapabilities
	GetParams() mcp.Params
}

// requestClient reads what a request says about its client. A 2026-07-28
// request is read alone; an older one falls back to its session's
// initialize, which is how that protocol declares a client.
func requestClient(req mcp.Request) ClientInfo {
	c := ClientInfo{Stateless: true}
	r, ok := req.(clientRequest)
	if !ok {
		return c
	}
	c.ProtocolVersion = r.ProtocolVersion()
	if c.ProtocolVersion < statelessProtocol {
		if info := r.ClientInfo(); info != nil {
			c.Name = info.Name
		}
		c.Extension = groupsext.DeclaredIn(r.ClientCapabilities())
		return c
	}
	var meta map[string]any
	if p := r.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		meta = p.GetMeta()
	}
	if raw, ok := meta[mcp.MetaKeyClientInfo]; ok {
		var info struct {
			Name string `json:"name"`
		}
		if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &info) == nil {
			c.Name = info.Name
		}
	}
	c.Extension = groupsext.Declared(meta)
	return c
}

// perRequestMiddleware answers the per-request server's tools/list and
// tools/call; ok is false for every other method.
func (s *session) perRequestMiddleware(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error, ok bool) {
	switch method {
	case "tools/list":
		r, isList := req.(*mcp.ListToolsRequest)
		if !isList {
			return nil, nil, false
		}
		p := s.g.present(requestClient(r))
		t := s.g.transient(s.g.cur.Load(), p)
		// A client that would not list again waits for starting sources.
		t.awaitList(ctx, r)
		t.current()
		tools := sortedTools(t.installed)
		var cursor string
		if r.Params != nil {
			cursor = r.Params.Cursor
		}
		page, next, err := paginate(tools, func(t *mcp.Tool) string { return t.Name }, cursor, pageSize)
		if err != nil {
			return nil, err, true
		}
		return &mcp.ListToolsResult{Tools: page, NextCursor: next, Cacheable: s.g.listCacheable()}, nil, true
	case groupsext.MethodList:
		if !s.notifiesGroups() {
			// A client that cannot be told of groups that come later
			// (only a stdio 2025-11-25 session can) waits for the
			// sources still starting, as a first tools/list does.
			t := s.g.transient(s.g.cur.Load(), s.g.present(requestClient(req)))
			t.awaitAtMost(ctx, s.g.listWait(), nil)
		}
		res, err := s.g.answerGroupsList(req)
		return res, err, true
	case "tools/call":
		r, isCall := req.(*mcp.CallToolRequest)
		if !isCall {
			return nil, nil, false
		}
		t := s.g.transient(s.g.cur.Load(), s.g.present(requestClient(r)))
		res, err := t.serveCall(ctx, r)
		return res, err, true
	}
	return nil, nil, false
}

// registered is what the per-request server keeps in the SDK's registry:
// the wire tools whose input schema binds an argument to a header
// (x-mcp-header), the configured mode's first where names meet. Nobody
// lists it (tools/list is answered per request) and no call reaches it
// (tools/call is too); the SDK's streamable HTTP handler reads it to check
// the Mcp-Param-* headers of a 2026-07-28 tools/call against the tool's
// x-mcp-header properties, and checks nothing for a tool that binds none or
// that it does not know. Registering every tool cost the SDK two decodings
// of each schema, the largest part of a large catalog's start. Changes
// are announced by migrated, whatever the registry holds.
func registered(st *state) map[string]*mcp.Tool {
	modes := []expose.Mode{st.look.mode}
	for m := range st.expo {
		if m != st.look.mode {
			modes = append(modes, m)
		}
	}
	slices.Sort(modes[1:])
	want := map[string]*mcp.Tool{}
	seen := map[string]bool{}
	add := func(w *expose.Wire, bound bool) {
		if !seen[w.Name] {
			seen[w.Name] = true
			if bound {
				want[w.Name] = w.Tool
			}
		}
	}
	cat := st.space.Catalog()
	for _, m := range modes {
		e, ok := st.expo[m]
		if !ok {
			continue
		}
		for _, t := range cat.Tools() {
			w := e.FlatWire(t)
			add(w, w.HeaderBound())
		}
		for _, grp := range cat.Groups() {
			if w, ok := e.GroupWire(grp); ok {
				add(w, bytes.Contains(w.InputSchema(), []byte(`"x-mcp-header"`)))
			}
		}
	}
	return want
}

// transient is a session for one request of a client without a view: a
// fresh view that nothing keeps, so no call can change what the client
// lists.
func (g *Gateway) transient(st *state, p presentation) *session {
	// The fresh view serves the request; the list is the state's, one per
	// presentation (renderRequest).
	v := st.space.New()
	s := &session{g: g, mode: p.mode, st: st, view: v, role: transientRole{pres: p}}
	s.installed = renderRequest(st, p)
	return s
}

// listCacheable is the caching hint on lists answered per request: private
// when the list depends on who asks (a token's limits, or the client's
// name in auto mode), and good for ListTTL.
func (g *Gateway) listCacheable() mcp.Cacheable {
	c := mcp.Cacheable{CacheScope: "public", TTLMs: int(DefaultListTTL.Milliseconds())}
	if g.opts.PrivateLists || g.look().mode == expose.Auto {
		c.CacheScope = "private"
	}
	switch {
	case g.opts.ListTTL > 0:
		c.TTLMs = int(g.opts.ListTTL.Milliseconds())
	case g.opts.ListTTL < 0:
		c.TTLMs = 0
	}
	return c
}

func sortedTools(m map[string]*mcp.Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// paginate returns the page of at most size items (sorted by key) after
// cursor, and the cursor of the next page. A cursor is the key of the last
// item of the previous page, so pages stay consistent while the list
// changes.
func paginate[T any](items []T, key func(T) string, cursor string, size int) ([]T, string, error) {
	start := 0
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: pass the nextCursor of the previous page, or none for the first"}
		}
		start, _ = slices.BinarySearchFunc(items, string(after), func(t T, k string) int { return cmp.Compare(key(t), k) })
		if start < len(items) && key(items[start]) == string(after) {
			start++
		}
	}
	end := min(start+size, len(items))
	page := items[start:end]
	if page == nil {
		page = []T{}
	}
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1])))
	}
	return page, next, nil
}

// hashTool writes a tool into a fingerprint: its schemas, kept as JSON
// text, go in as they are, since encoding them again would only check and
// compact them, most of a large catalog's fingerprint; the rest encoded.
func hashTool(h io.Writer, enc *json.Encoder, t *mcp.Tool) {
	rest := *t
	rest.InputSchema, rest.OutputSchema = nil, nil
	_ = enc.Encode(&rest)
	for _, schema := range []any{t.InputSchema, t.OutputSchema} {
		if raw, ok := schema.(json.RawMessage); ok {
			_, _ = h.Write(raw)
			_, _ = h.Write([]byte{'\n'})
		} else {
			_ = enc.Encode(schema)
		}
	}
}

// fingerprint identifies everything a list answered per request can show,
// so that an update that changes none of it announces nothing.
func (st *state) fingerprint() [32]byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	modes := make([]expose.Mode, 0, len(st.expo))
	for m := range st.expo {
		modes = append(modes, m)
	}
	slices.Sort(modes)
	cat := st.space.Catalog()
	// Modes share their flat wires: a wire hashed once is not hashed again.
	seen := make(map[*expose.Wire]bool, len(cat.Tools()))
	for _, m := range modes {
		e := st.expo[m]
		for _, t := range cat.Tools() {
			if w := e.FlatWire(t); !seen[w] {
				seen[w] = true
				hashTool(h, enc, w.Tool)
			}
		}
		for _, g := range cat.Groups() {
			if w, ok := e.GroupWire(g); ok {
				hashTool(h, enc, w.Tool)
			}
		}
	}
	for _, g := range cat.Groups() {
		parent := ""
		if g.Parent != nil {
			parent = string(g.Parent.ID)
		}
		_ = enc.Encode([]any{g.ID, parent, g.Description, g.Instructions, g.Default.String(), len(g.Tools)})
	}
	_ = enc.Encode(st.space.Options())
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}
