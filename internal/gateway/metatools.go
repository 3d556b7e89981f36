package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/meta"
	"github.com/toolfold/toolfold/internal/view"
	"go.opentelemetry.io/otel/attribute"
)

// The meta-tools, one handler each. callMeta decodes nothing itself: it
// picks the handler for the tool's kind and hands it the arguments ({}
// when the client sent none).

// metaHandler answers one call of a meta-tool.
type metaHandler func(s *session, ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error)

// metaHandlerFor is the handler of a meta-tool's kind, nil for none.
func metaHandlerFor(kind meta.Kind) metaHandler {
	switch kind {
	case meta.Enable:
		return func(s *session, ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
			return s.changeGroups(ctx, req, raw, meta.Enable)
		}
	case meta.Disable:
		return func(s *session, ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
			return s.changeGroups(ctx, req, raw, meta.Disable)
		}
	case meta.Reset:
		return (*session).resetTools
	case meta.Call:
		return (*session).callThrough
	case meta.Find:
		return (*session).findTools
	case meta.Describe:
		return (*session).describeTools
	case meta.Guidance:
		return (*session).guidance
	}
	return nil
}

func (s *session) callMeta(ctx context.Context, req *mcp.CallToolRequest, kind meta.Kind) (*mcp.CallToolResult, error) {
	if kind != meta.Call {
		noteSource(ctx, "toolfold")
	}
	raw := req.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	h := metaHandlerFor(kind)
	if h == nil {
		return meta.ErrorResult(fmt.Sprintf("%s is not available in the %s mode", req.Params.Name, s.mode)), nil
	}
	return h(s, ctx, req, raw)
}

type callArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// changeGroups is enable_tools and disable_tools.
func (s *session) changeGroups(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage, kind meta.Kind) (*mcp.CallToolResult, error) {
	n := s.g.Names()
	expo, _ := s.current()
	var args meta.GroupsArgs
	notes, err := meta.DecodeArgs(req.Params.Name, raw, &args, []meta.Param{{Name: "groups", Want: "a list of group names"}},
		fmt.Sprintf(`{"groups": [%q]}`, exampleGroup(expo)))
	if err != nil {
		return meta.ErrorResult(err.Error()), nil
	}
	if kind == meta.Enable {
		// Enabling a group of a source still starting enables its tools
		// once they are known.
		s.awaitGroups(ctx, args.Groups)
	}
	// The view is read again under changing, so that a catalog update
	// cannot copy it between this read and the change.
	s.changing.Lock()
	expo, v := s.current()
	var result any
	var ch *view.Change
	switch {
	case kind == meta.Enable && s.stateless():
		// No view to change: describe the groups' tools for call_tool.
		result, ch = meta.DoDescribeGroups(n, v, expo, args)
	case kind == meta.Enable:
		result, ch = meta.DoEnable(n, v, expo, args)
	default:
		result, ch = meta.DoDisable(v, expo, args)
	}
	s.changing.Unlock()
	if tr := s.g.tr; tr != nil {
		attrs := []attribute.KeyValue{
			attribute.Int("toolfold.groups.asked", len(args.Groups)), attribute.Int("toolfold.groups.changed", len(ch.Enabled)+len(ch.Disabled)),
			attribute.Int("toolfold.groups.errors", len(ch.Errors))}
		if tr.args {
			attrs = append(attrs, attribute.StringSlice("toolfold.groups", args.Groups))
		}
		_, span := tr.internalSpan(ctx, "toolfold."+req.Params.Name, attrs...)
		span.End()
	}
	s.afterChange(ctx, req.Session, ch)
	return withNotes(meta.Result(result, len(ch.Errors) > 0 && len(ch.Enabled)+len(ch.Disabled) == 0), notes), nil
}

// resetTools is reset_tools.
func (s *session) resetTools(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	n := s.g.Names()
	expo, _ := s.current()
	var args map[string]bool
	if err := json.Unmarshal(raw, &args); err != nil {
		what := ""
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) == nil {
			// Sorted, so that the same call always names the same key.
			for _, name := range slices.Sorted(maps.Keys(fields)) {
				if v := string(fields[name]); v != "true" && v != "false" {
					what = fmt.Sprintf(" (%q is not)", name)
					break
				}
			}
		}
		return meta.ErrorResult(fmt.Sprintf(`%s: every value must be true or false%s, one per group name: true to have the group enabled afterwards. A correct call: %s {%q: true}`, n.Reset, what, n.Reset, exampleGroup(expo))), nil
	}
	s.changing.Lock()
	expo, v := s.current()
	result, ch := meta.DoReset(v, expo, args)
	s.changing.Unlock()
	s.afterChange(ctx, req.Session, ch)
	return meta.Result(result, false), nil
}

// callThrough is call_tool: any tool the client may use, enabled or not,
// by name.
func (s *session) callThrough(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	n := s.g.Names()
	expo, _ := s.current()
	var args callArgs
	callExample := fmt.Sprintf(`{"name": "<tool name from %s>", "arguments": {<that tool's parameters>}}`, n.Find)
	if _, err := meta.DecodeArgs(n.Call, raw, &args, []meta.Param{{Name: "name", Want: "a tool name"}}, callExample); err != nil {
		return meta.ErrorResult(err.Error()), nil
	}
	if args.Name == "" {
		return meta.ErrorResult(fmt.Sprintf(`%s: "name" is missing: it names the tool to call. A correct call: %s %s`, n.Call, n.Call, callExample)), nil
	}
	var notes []string
	if a := bytes.TrimSpace(args.Arguments); len(a) > 0 && a[0] == '"' {
		// A model sometimes sends the tool's arguments as a JSON string.
		var inner string
		if json.Unmarshal(a, &inner) == nil && json.Valid([]byte(inner)) && strings.HasPrefix(strings.TrimSpace(inner), "{") {
			args.Arguments = json.RawMessage(inner)
			notes = append(notes, fmt.Sprintf(`%s: "arguments" takes a JSON object; the string given held one and was read as it.`, n.Call))
		} else {
			return meta.ErrorResult(fmt.Sprintf(`%s: "arguments" must be a JSON object of %s's parameters, not a string. A correct call: %s {"name": %q, "arguments": {...}}`, n.Call, args.Name, n.Call, args.Name)), nil
		}
	}
	if n.Kind(args.Name) != meta.NotMeta {
		return meta.ErrorResult(fmt.Sprintf("%s calls catalog tools; call %s directly", n.Call, args.Name)), nil
	}
	w, ok := expo.Route(args.Name)
	if !ok {
		start := time.Now()
		expo = s.awaitRoute(ctx, args.Name)
		if w, ok = expo.Route(args.Name); !ok {
			return meta.ErrorResult(meta.UnknownToolMessage(n, expo, args.Name, nil) + sourcesNote(expo.Catalog(), args.Name, time.Since(start))), nil
		}
	}
	// call_tool reaches every tool the client may use, enabled or not,
	// and changes no list.
	noteTool(ctx, args.Name)
	res, err := s.run(ctx, req, w, args.Arguments)
	if err == nil && len(notes) > 0 && res != nil {
		res = withNotes(res, notes)
	}
	return res, err
}

// findTools is find_tools.
func (s *session) findTools(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	return s.findAnswer(ctx, raw, true), nil
}

// findAnswer is find_tools' result for the arguments raw: the typed path
// and the stdio byte path (rawmeta.go) both answer with it, so that both
// read the arguments, rank and word the answer alike. await says whether a
// call waits for sources still starting (their tools may be the best
// match); the byte path takes no call that would.
func (s *session) findAnswer(ctx context.Context, raw json.RawMessage, await bool) *mcp.CallToolResult {
	n := s.g.Names()
	var args meta.FindArgs
	notes, err := meta.DecodeArgs(n.Find, raw, &args, []meta.Param{{Name: "query", Want: "a string saying what you want to do"}, {Name: "queries", Want: "a list of phrasings"}, {Name: "limit", Want: "a whole number"}, {Name: "group", Want: "a group name"}},
		`{"query": "merge pull request github", "queries": ["land PR"], "limit": 5}`)
	if err != nil {
		return meta.ErrorResult(err.Error())
	}
	if await {
		s.await(ctx, nil)
	}
	_, v := s.current()
	res, err := s.disc().Find(args, v.Snapshot())
	if err != nil {
		return meta.ErrorResult(err.Error())
	}
	if tr := s.g.tr; tr != nil {
		attrs := []attribute.KeyValue{attribute.Int("toolfold.find.hits", len(res.Tools)), attribute.Int("toolfold.find.queries", 1+len(args.Queries))}
		if tr.args {
			attrs = append(attrs, attribute.String("toolfold.find.query", args.Query), attribute.StringSlice("toolfold.find.queries.more", args.Queries))
		}
		_, span := tr.internalSpan(ctx, "toolfold.find_tools", attrs...)
		span.End()
	}
	return withNotes(meta.Result(res, false), notes)
}

// describeTools is describe_tools.
func (s *session) describeTools(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	return s.describeAnswer(ctx, raw, true), nil
}

// describeAnswer is describe_tools' result for the arguments raw: the
// typed path's, and the stdio byte path's (takeMeta), which never waits
// (await false) since it leaves a call to the typed path while sources
// are pending.
func (s *session) describeAnswer(ctx context.Context, raw json.RawMessage, await bool) *mcp.CallToolResult {
	n := s.g.Names()
	var args meta.DescribeArgs
	notes, err := meta.DecodeArgs(n.Describe, raw, &args, []meta.Param{{Name: "names", Want: "a list of tool names"}},
		fmt.Sprintf(`{"names": ["<tool name from %s>"]}`, n.Find))
	if err != nil {
		return meta.ErrorResult(err.Error())
	}
	if await {
		s.awaitRoute(ctx, args.Names...)
	}
	res := s.disc().Describe(args)
	return withNotes(meta.Result(res, len(res.Tools) == 0), notes)
}

// findNow and describeNow are the byte path's answers (metaAnswer).
func findNow(s *session, ctx context.Context, raw json.RawMessage) *mcp.CallToolResult {
	return s.findAnswer(ctx, raw, false)
}

func describeNow(s *session, ctx context.Context, raw json.RawMessage) *mcp.CallToolResult {
	return s.describeAnswer(ctx, raw, false)
}

// guidance is the guidance tool.
func (s *session) guidance(ctx context.Context, req *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	n := s.g.Names()
	var args meta.GuidanceArgs
	if _, err := meta.DecodeArgs(n.Guidance, raw, &args, []meta.Param{{Name: "topic", Want: `"overview", "groups", a group name or "tool"`}, {Name: "tool_name", Want: "a tool name"}},
		`{"topic": "tool", "tool_name": "<tool>"}`); err != nil {
		return meta.ErrorResult(err.Error()), nil
	}
	s.await(ctx, nil) // tool counts and lists include every source
	_, v := s.current()
	res, err := s.disc().Guidance(args, v.Snapshot())
	if err != nil {
		return meta.ErrorResult(err.Error()), nil
	}
	out := meta.Result(res, false)
	out.Content = []mcp.Content{&mcp.TextContent{Text: res.Markdown}}
	return out, nil
}
