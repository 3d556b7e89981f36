package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
)

// The skills extension (SEP-2640): a skill is a directory of files served
// as resources, at least a SKILL.md with YAML frontmatter; skills/list and
// skills/get describe them. toolfold serves every group that has a
// description or instructions as a skill: its frontmatter names the
// group's tools under metadata["io.modelcontextprotocol/tools"] (the
// grouping group's "skills as groups" draft), and its body holds the
// group's instructions and one line per tool.
const (
	skillsExtension = "io.modelcontextprotocol/skills"
	methodSkillList = "skills/list"
	methodSkillGet  = "skills/get"
	// metaSkillTools is the frontmatter metadata key of a skill's tools.
	metaSkillTools = "io.modelcontextprotocol/tools"
	skillScheme    = "skill://"
)

// skillEntry is one skill as skills/list and skills/get give it.
type skillEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []skillFile    `json:"resources"`
	// text is the SKILL.md itself.
	text []byte
}

type skillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

type skillListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillListResult struct {
	mcp.ResultBase
	ResultType string        `json:"resultType,omitempty"`
	Skills     []*skillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	TTLMs      int           `json:"ttlMs"`
	CacheScope string        `json:"cacheScope"`
}

type skillGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type skillGetResult struct {
	mcp.ResultBase
	ResultType string      `json:"resultType,omitempty"`
	Skill      *skillEntry `json:"skill"`
	TTLMs      int         `json:"ttlMs"`
	CacheScope string      `json:"cacheScope"`
}

// serveSkills registers the extension's methods, so that the SDK decodes
// them; skillsMiddleware answers them, where the request is known.
func (s *session) serveSkills() {
	list := func(context.Context, *mcp.ServerSession, *skillListParams) (*skillListResult, error) {
		return nil, fmt.Errorf("skills/list is answered by the gateway's middleware")
	}
	get := func(context.Context, *mcp.ServerSession, *skillGetParams) (*skillGetResult, error) {
		return nil, fmt.Errorf("skills/get is answered by the gateway's middleware")
	}
	if err := mcp.AddReceivingCustomMethod(s.server, methodSkillList, list); err != nil {
		s.g.log.Error("cannot serve skills/list", "err", err)
	}
	if err := mcp.AddReceivingCustomMethod(s.server, methodSkillGet, get); err != nil {
		s.g.log.Error("cannot serve skills/get", "err", err)
	}
}

// skillsMiddleware answers skills/list, skills/get and resources/read of a
// skill's files, and adds the skills to resources/list of a client that
// declared the extension. Every answer is computed from the request alone.
func (g *Gateway) skillsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodSkillList:
			p, _ := req.GetParams().(*skillListParams)
			var cursor string
			if p != nil {
				cursor = p.Cursor
			}
			page, nextCursor, err := paginate(g.skills(req), func(s *skillEntry) string { return s.URI }, cursor, pageSize)
			if err != nil {
				return nil, err
			}
			c := g.skillsCacheable()
			return &skillListResult{ResultType: "complete", Skills: page, NextCursor: nextCursor, TTLMs: c.TTLMs, CacheScope: c.CacheScope}, nil
		case methodSkillGet:
			p, _ := req.GetParams().(*skillGetParams)
			if p == nil || p.URI == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `skills/get needs {"uri": "skill://<name>/SKILL.md"} with a uri from skills/list`}
			}
			sk := g.skill(req, p.URI)
			if sk == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no skill is served at %s; skills/list lists them", p.URI)}
			}
			c := g.skillsCacheable()
			return &skillGetResult{ResultType: "complete", Skill: sk, TTLMs: c.TTLMs, CacheScope: c.CacheScope}, nil
		case "resources/read":
			r, ok := req.(*mcp.ReadResourceRequest)
			if !ok || r.Params == nil || !strings.HasPrefix(r.Params.URI, skillScheme) {
				break
			}
			sk := g.skill(req, r.Params.URI)
			if sk == nil {
				// Not toolfold's own: a source's skills pass through.
				break
			}
			res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: sk.URI, MIMEType: "text/markdown", Text: string(sk.text)}}}
			if requestClient(req).ProtocolVersion >= statelessProtocol {
				res.Cacheable = g.skillsCacheable()
			}
			return res, nil
		case "resources/list":
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListResourcesResult)
			if err != nil || !ok || !declares(req, skillsExtension) {
				return res, err
			}
			if p, _ := req.GetParams().(*mcp.ListResourcesParams); p != nil && p.Cursor != "" {
				return res, err // the skills come with the first page
			}
			for _, sk := range g.skills(req) {
				lr.Resources = append(lr.Resources, &mcp.Resource{
					URI: sk.URI, Name: sk.Frontmatter["name"].(string), MIMEType: "text/markdown",
					Description: sk.Frontmatter["description"].(string), Size: int64(len(sk.text)),
				})
			}
			return lr, nil
		}
		return next(ctx, method, req)
	}
}

// skillsCacheable is the caching hint on the skills: they name tools as
// the caller's tools/list does, so they vary as that list does.
func (g *Gateway) skillsCacheable() mcp.Cacheable { return g.listCacheable() }

// skill is the skill at uri (its SKILL.md) for this caller, or nil.
func (g *Gateway) skill(req mcp.Request, uri string) *skillEntry {
	for _, sk := range g.skills(req) {
		if sk.URI == uri {
			return sk
		}
	}
	return nil
}

// skills are the skills this caller may reach: one per group of the
// gateway's catalog (a limited view's catalog holds only what it reaches)
// with a description or instructions, by URI.
func (g *Gateway) skills(req mcp.Request) []*skillEntry {
	return g.skillsFor(g.present(requestClient(req)))
}

// SkillsIndex is skills/list's skills, all pages together, as a client of
// the grouping extension gets them: what the context-cost report measures.
func (g *Gateway) SkillsIndex() json.RawMessage {
	b, _ := json.Marshal(g.skillsFor(g.present(ClientInfo{Extension: true})))
	return b
}

func (g *Gateway) skillsFor(p presentation) []*skillEntry {
	st := g.cur.Load()
	t := g.transient(st, p)
	expo := st.expo[p.mode]
	x := st.ext
	var out []*skillEntry
	for _, grp := range st.space.Catalog().Groups() {
		description := strings.TrimSpace(grp.Description)
		instructions := strings.TrimSpace(grp.Instructions)
		if description == "" && instructions == "" {
			continue
		}
		if description == "" {
			description, _, _ = strings.Cut(instructions, "\n")
		}
		name := x.names[grp.ID]
		// The tools as the caller's tools/list names them: those it lists.
		var listed []string
		if w, ok := expo.GroupWire(grp); ok && t.installed[w.Name] != nil {
			listed = append(listed, w.Name)
		}
		var index []string
		for _, tool := range grp.Tools {
			w := expo.FlatWire(tool)
			if t.installed[w.Name] != nil {
				listed = append(listed, w.Name)
			}
			index = append(index, fmt.Sprintf("- `%s`: %s", w.Name, firstSentence(tool.Def.Description)))
		}
		slices.Sort(listed)
		listed = slices.Compact(listed)
		out = append(out, newSkill(name, description, instructions, grp, listed, index))
	}
	slices.SortFunc(out, func(a, b *skillEntry) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// newSkill writes a group's SKILL.md: frontmatter as YAML whose strings
// are double-quoted JSON strings (valid YAML with the same content), then
// the instructions and the index of its tools.
func newSkill(name, description, instructions string, grp *catalog.Group, tools, index []string) *skillEntry {
	front := map[string]any{"name": name, "description": description}
	var b bytes.Buffer
	b.WriteString("---\nname: " + quoteYAML(name) + "\ndescription: " + quoteYAML(description) + "\n")
	if len(tools) > 0 {
		joined := strings.Join(tools, " ")
		front["metadata"] = map[string]any{metaSkillTools: joined}
		b.WriteString("metadata:\n  " + quoteYAML(metaSkillTools) + ": " + quoteYAML(joined) + "\n")
	}
	b.WriteString("---\n\n# " + string(grp.ID) + "\n\n")
	if instructions != "" {
		b.WriteString(instructions + "\n\n")
	}
	if len(index) > 0 {
		b.WriteString("## Tools\n\n" + strings.Join(index, "\n") + "\n")
	}
	uri := skillScheme + name + "/SKILL.md"
	sum := sha256.Sum256(b.Bytes())
	return &skillEntry{
		URI: uri, Frontmatter: front, text: b.Bytes(),
		Resources: []skillFile{{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: b.Len()}},
	}
}

// quoteYAML is s as a double-quoted scalar: JSON's escapes are YAML's.
func quoteYAML(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// firstSentence is a tool description's first line, cut at its first
// sentence: the one-line index of a skill.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	return s
}

// declares reports whether a request's client declared an extension: in
// its initialize on 2025-11-25, in the request's _meta on 2026-07-28.
func declares(req mcp.Request, id string) bool {
	r, ok := req.(clientRequest)
	if !ok {
		return false
	}
	if r.ProtocolVersion() < statelessProtocol {
		caps := r.ClientCapabilities()
		if caps == nil {
			return false
		}
		_, ok := caps.Extensions[id]
		return ok
	}
	p := r.GetParams()
	if p == nil || reflect.ValueOf(p).IsNil() {
		return false
	}
	raw, ok := p.GetMeta()[mcp.MetaKeyClientCapabilities]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if err != nil || json.Unmarshal(b, &caps) != nil {
		return false
	}
	_, ok = caps.Extensions[id]
	return ok
}
