package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"
)

// The skills an upstream serves (SEP-2640) become its groups, as the
// grouping interest group's "skills as groups" draft reads them: a skill's
// frontmatter names its tools in metadata["io.modelcontextprotocol/tools"]
// (space-separated, resolved against the server's tools/list), and the
// body of its SKILL.md is what an agent should know when it uses them,
// which is what a group's instructions are. A skill that names no tools is
// a group with instructions only: toolfold serves every group with a
// description as a skill of its own, so the server's skills reach
// toolfold's clients under the group's name.
const (
	skillMetaTools = "io.modelcontextprotocol/tools"
	// maxSkillBytes bounds one SKILL.md: its body becomes instructions
	// that an agent is given whole.
	maxSkillBytes = 256 << 10
	// maxSkillFiles bounds the supporting files named in the instructions.
	maxSkillFiles = 32
)

// skillEntry is a skills/list entry, decoded leniently.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

type skillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// readSkills reads every skill the server lists and merges them into the
// groups read so far: a skill whose name is one of those groups gives it
// its body as instructions (and its description if it had none) and adds
// its tools; any other skill is a new top-level group. Two skills of one
// name are told apart by their paths (skill://acme/refunds becomes
// "acme-refunds"), as the skills extension asks of a host.
func (r *groupReader) readSkills(ctx context.Context, groups []*Group, tools []*mcp.Tool) []*Group {
	raws := r.pages(ctx, methodSkillsList, func(cursor string) ([]json.RawMessage, string, error) {
		res, err := mcp.CallCustomMethod[*pageParams, *skillsListResult](ctx, r.cs, methodSkillsList, &pageParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Skills, res.NextCursor, nil
	})
	known := make(map[string]bool, len(tools))
	for _, t := range tools {
		known[t.Name] = true
	}
	byName := make(map[string]*Group, len(groups))
	for _, g := range groups {
		byName[g.Name] = g
	}
	fromSkill := map[string]bool{}
	for i, raw := range raws {
		if len(groups) >= maxGroups {
			break // readGroups warns
		}
		g, ok := r.skill(ctx, raw, fmt.Sprintf("skills/list entry #%d", i+1))
		if !ok {
			continue
		}
		var members []string
		for _, name := range g.Tools {
			if !known[name] {
				r.warn("a skill names a tool the server does not list; it is left out of the skill's group", "skill", g.Skill, "tool", name)
				continue
			}
			if !slices.Contains(members, name) {
				members = append(members, name)
			}
		}
		g.Tools = members
		if fromSkill[g.Name] {
			name := skillPathName(g.Skill)
			if !validGroupName(name) || byName[name] != nil {
				r.warn("two skills have the same name and their paths do not tell them apart; the second is left out", "skill", g.Skill)
				continue
			}
			g.Name = name
		}
		fromSkill[g.Name] = true
		if have := byName[g.Name]; have != nil {
			// The server's group and skill of one name are one group.
			have.Instructions, have.Skill = g.Instructions, g.Skill
			if have.Description == "" {
				have.Description = g.Description
			}
			for _, t := range g.Tools {
				if !slices.Contains(have.Tools, t) {
					have.Tools = append(have.Tools, t)
				}
			}
			continue
		}
		byName[g.Name] = g
		groups = append(groups, g)
	}
	return groups
}

// skill checks one entry and reads its SKILL.md: the group it gives, with
// the tool names of its frontmatter as the server wrote them.
func (r *groupReader) skill(ctx context.Context, raw json.RawMessage, where string) (*Group, bool) {
	var e skillEntry
	if err := json.Unmarshal(raw, &e); err != nil || e.Frontmatter == nil {
		r.warn("a skill entry is malformed; it is skipped", "where", where, "error", errorOf(err))
		return nil, false
	}
	name, _ := e.Frontmatter["name"].(string)
	description, _ := e.Frontmatter["description"].(string)
	if !validGroupName(name) {
		r.warn("a skill name breaks the skills' naming rule (1-64 of a-z, 0-9 and single '-'); the skill is skipped", "where", where, "skill", name)
		return nil, false
	}
	// The last segment of the skill's path is its name (SEP-2640).
	if !strings.HasSuffix(e.URI, "/"+name+"/SKILL.md") && e.URI != "skill://"+name+"/SKILL.md" {
		r.warn("a skill's URI does not end in <name>/SKILL.md; the skill is skipped", "where", where, "uri", e.URI, "skill", name)
		return nil, false
	}
	files, dynamic, ok := skillFiles(e.Resources)
	if !ok {
		r.warn("a skill entry has no valid resources (a list, or \"dynamic\"); the skill is skipped", "skill", e.URI)
		return nil, false
	}
	res, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: e.URI})
	if err != nil {
		r.noteFailure(err)
		r.warn("reading a skill's SKILL.md failed; the skill is skipped", "skill", e.URI, "error", err)
		return nil, false
	}
	text, err := skillText(res, e.URI)
	if err != nil {
		r.warn("a skill's SKILL.md cannot be used; the skill is skipped", "skill", e.URI, "error", err)
		return nil, false
	}
	if !dynamic {
		if err := verifySkillFile(files, e.URI, text); err != nil {
			r.warn("a skill's SKILL.md is not what its entry describes; the skill is skipped", "skill", e.URI, "error", err)
			return nil, false
		}
	}
	front, body, err := splitSkill(text)
	if err == nil {
		err = sameFrontmatter(front, e.Frontmatter)
	}
	if err != nil {
		r.warn("a skill's SKILL.md does not match its entry; the skill is skipped", "skill", e.URI, "error", err)
		return nil, false
	}
	g := &Group{Name: name, Description: description, Skill: e.URI, Tools: skillTools(e.Frontmatter)}
	g.Instructions = strings.TrimSpace(body)
	if other := supportingFiles(files, e.URI); len(other) > 0 {
		// The server's resources pass through toolfold at their own URIs;
		// the skill toolfold serves for the group holds only its SKILL.md.
		g.Instructions += "\n\nThe skill's other files can be read as resources: " + strings.Join(other, ", ")
	}
	return g, true
}

// skillTools reads the tool names of a skill's frontmatter: a
// space-separated string, or (leniently) a list of strings.
func skillTools(front map[string]any) []string {
	meta, _ := front["metadata"].(map[string]any)
	switch v := meta[skillMetaTools].(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, strings.Fields(s)...)
			}
		}
		return out
	}
	return nil
}

// skillPathName is a name made of a skill's whole path, for two skills of
// one name: skill://acme/billing/refunds/SKILL.md gives
// "acme-billing-refunds".
func skillPathName(uri string) string {
	_, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return ""
	}
	rest = strings.TrimSuffix(rest, "/SKILL.md")
	return strings.ReplaceAll(rest, "/", "-")
}

func skillFiles(raw json.RawMessage) (files []skillFile, dynamic, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, true, s == "dynamic"
	}
	if err := json.Unmarshal(raw, &files); err != nil || files == nil {
		return nil, false, false
	}
	return files, false, true
}

// skillText is the SKILL.md of a resources/read answer.
func skillText(res *mcp.ReadResourceResult, uri string) ([]byte, error) {
	for _, c := range res.Contents {
		if c == nil || c.URI != uri {
			continue
		}
		data := []byte(c.Text)
		if c.Blob != nil {
			data = c.Blob
		}
		if len(data) > maxSkillBytes {
			return nil, fmt.Errorf("it is %d bytes, over toolfold's bound of %d", len(data), maxSkillBytes)
		}
		return data, nil
	}
	return nil, fmt.Errorf("resources/read returned no contents for %s", uri)
}

// verifySkillFile checks content against the entry's digest and size, as
// a host must before it uses a listed file.
func verifySkillFile(files []skillFile, uri string, data []byte) error {
	i := slices.IndexFunc(files, func(f skillFile) bool { return f.URI == uri })
	if i < 0 {
		return fmt.Errorf("the entry's resources do not list %s", uri)
	}
	sum := sha256.Sum256(data)
	if want, got := files[i].Digest, "sha256:"+hex.EncodeToString(sum[:]); want != got || files[i].Size != len(data) {
		return fmt.Errorf("read %d bytes with digest %s; the entry says %d bytes with %s", len(data), got, files[i].Size, want)
	}
	return nil
}

// splitSkill cuts a SKILL.md into its YAML frontmatter and its body.
func splitSkill(text []byte) (front map[string]any, body string, err error) {
	text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(text, []byte("---\n"))
	if !ok {
		return nil, "", fmt.Errorf("it does not begin with YAML frontmatter")
	}
	yml, after, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return nil, "", fmt.Errorf("its frontmatter has no closing ---")
	}
	if err := yaml.Unmarshal(yml, &front); err != nil {
		return nil, "", fmt.Errorf("its frontmatter is not YAML: %w", err)
	}
	after = bytes.TrimLeft(after, "-")
	return front, string(after), nil
}

// sameFrontmatter compares the frontmatter of a SKILL.md with its entry's,
// field by field, as JSON sees them.
func sameFrontmatter(file, entry map[string]any) error {
	a, err1 := json.Marshal(file)
	b, err2 := json.Marshal(entry)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("its frontmatter cannot be compared: %v %v", err1, err2)
	}
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	if !sameJSON(x, y) {
		return fmt.Errorf("its frontmatter %s differs from the entry's %s", a, b)
	}
	return nil
}

// supportingFiles are a skill's files other than its SKILL.md, at most
// maxSkillFiles.
func supportingFiles(files []skillFile, uri string) []string {
	var out []string
	for _, f := range files {
		if f.URI != uri && len(out) < maxSkillFiles {
			out = append(out, f.URI)
		}
	}
	return out
}
