package assemble

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/upstream"
	"github.com/toolfold/toolfold/internal/watch"
)

// trustGate holds back what an upstream says until it matches what was
// pinned (see internal/trust). It judges every definition where the
// servers' lists enter the catalog (Plan.spec), whether the list came from a
// start, the disk cache or a list_changed: the lock, not the cache, is what
// is trusted, so a changed definition read from the cache is held like one
// read live.
type trustGate struct {
	path     string
	readOnly bool
	// noWrite keeps the lock in memory for this run (an inspection
	// command) without making approvals refused as readOnly does.
	noWrite bool
	policy  trust.Policy
	log     *slog.Logger

	mu   sync.Mutex
	lock *trust.Lock
	// loadErr is why the lock file could not be read: then every upstream
	// item is held, since nothing can be compared.
	loadErr error
	// memo is the last judgement per server and what it was made from, so
	// a rebuild that changes nothing costs no digests.
	memo map[string]*serverTrust
	// gen counts lock reloads; a memo from an older one is stale.
	gen uint64
	// findings are the scan's last findings; logged are those already
	// logged, so each is said once.
	findings []trust.Finding
	scanner  trust.Scanner
	// listings are the last judgements of prompt, resource and template
	// listings, by server and kind; listingScanner scans for them.
	listings       map[string]*listingTrust
	listingScanner trust.Scanner
	// judged remembers each server's items across starts (trust.Memo), at
	// memoPath in the cache directory; nil when none is kept.
	memoPath string
	judged   *trust.Memo
	logged   map[string]bool
	// written is the SHA-256 of the text the gate last wrote to the lock
	// file, so that its watcher can skip the gate's own writes.
	written [sha256.Size]byte
	// onDisk is the lock file's content digest as the gate last read or
	// wrote it (watch.Digest, or watch.Absent): the baseline of its
	// watcher, which so needs not read and hash the file again.
	onDisk string
	// heldLogged are the holds already logged (server, item, digest).
	heldLogged map[string]bool
	// closed is set when the upstreams close: a rebuild still under way
	// then writes no lock, so nothing touches the config's directory once
	// serving has ended. done is closed with it, for the lock's watcher.
	closed bool
	done   chan struct{}
}

// close ends the gate's writes and its watcher; safe to call twice.
func (g *trustGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		close(g.done)
	}
}

// serverTrust is the judgement of one server's definitions.
type serverTrust struct {
	from  trustInput
	gen   uint64
	items []trust.Item
	v     *trust.Verdict
}

// trustInput identifies what a judgement was made from: the lists' identity
// (the Manager hands out the same slices until a server's lists change) and
// the instructions.
type trustInput struct {
	tool0  *mcp.Tool
	tools  int
	group0 *upstream.Group
	groups int
	instr  string
}

// newTrustGate reads the lock; memoPath is where judgements are remembered
// between starts ("": nowhere, see trustMemoPath).
func newTrustGate(cfg *config.Config, memoPath string, log *slog.Logger) *trustGate {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &trustGate{
		path: cfg.LockPath(), readOnly: cfg.Trust.ReadOnly, log: log,
		policy: trust.Policy{OnChange: cfg.Trust.OnChange, OnNew: cfg.Trust.OnNew, NewServers: cfg.Trust.NewServers, OnFinding: cfg.Trust.OnFinding},
		memo:   map[string]*serverTrust{}, logged: map[string]bool{}, heldLogged: map[string]bool{},
		listings: map[string]*listingTrust{},
		done:     make(chan struct{}),
		memoPath: memoPath,
	}
	g.loadJudged()
	var sum *[sha256.Size]byte
	g.lock, sum, g.loadErr = trust.ReadLock(g.path, g.judged)
	g.onDisk = watch.Absent
	if sum != nil {
		g.onDisk = watch.Digest(*sum)
	}
	if g.loadErr != nil {
		g.lock = trust.NewLock()
		log.Error("trust: every upstream definition is held", "lock_file", g.path, "error", g.loadErr)
	}
	return g
}

// Reload reads the lock file again (an operator approved something) and
// reports whether it changed what is pinned. Approvals it finds are audit
// lines.
func (g *trustGate) Reload() (bool, error) {
	text, err := os.ReadFile(g.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("trust: read lock file: %w", err)
	}
	g.mu.Lock()
	own := err == nil && g.loadErr == nil && sha256.Sum256(text) == g.written
	g.mu.Unlock()
	if own {
		// The gate's own last write, seen by the watcher: at thousands of
		// tools, reading it back would cost a parse of every pin.
		return false, nil
	}
	l, err := trust.LoadLock(g.path)
	if err != nil {
		return false, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.lock
	same, _ := l.Marshal()
	was, _ := old.Marshal()
	if string(same) == string(was) && g.loadErr == nil {
		return false, nil
	}
	for name, sp := range l.Servers {
		osp := old.Servers[name]
		if osp == nil {
			continue
		}
		for key, p := range sp.Pinned {
			if h, ok := osp.Held[key]; ok && h.Digest == p.Digest {
				g.log.Info("trust approve", "who", "lock file", "server", name, "item", key,
					"old_digest", osp.Pinned[key].Digest, "new_digest", p.Digest)
			}
		}
	}
	g.lock, g.loadErr = l, nil
	g.gen++
	return true, nil
}

// trustView is one build's judgement of every server with known lists; the
// zero view (no gate) serves everything.
type trustView struct {
	byServer map[string]*serverTrust
}

func (v trustView) serves(server string, kind trust.Kind, name string) bool {
	st := v.byServer[server]
	if st == nil {
		return true
	}
	return st.v.Serves(string(kind) + ":" + name)
}

// judge decides every server's known definitions. list gives a server's
// tools, groups and instructions as known now.
func (g *trustGate) judge(servers []string, known func(string) ([]*mcp.Tool, []*upstream.Group, string, bool)) trustView {
	g.mu.Lock()
	defer g.mu.Unlock()
	view := trustView{byServer: map[string]*serverTrust{}}
	stale := false
	inputs := map[string]trustInput{}
	lists := map[string][]trust.Item{}
	// fresh are the servers whose items were made anew, by input hash.
	fresh := map[string]string{}
	for _, name := range servers {
		tools, groups, instr, ok := known(name)
		if !ok {
			continue
		}
		in := trustInput{tools: len(tools), groups: len(groups), instr: instr}
		if len(tools) > 0 {
			in.tool0 = tools[0]
		}
		if len(groups) > 0 {
			in.group0 = groups[0]
		}
		inputs[name] = in
		if m := g.memo[name]; m != nil && m.from == in && m.gen == g.gen {
			lists[name] = m.items
			continue
		}
		stale = true
		hash := trustInputHash(tools, groups, instr)
		items, ok, known := g.memoItems(name, hash)
		if ok {
			lists[name] = items
			continue
		}
		lists[name] = trustItems(name, tools, groups, instr, g.log)
		if !known {
			fresh[name] = hash
		}
	}
	if stale || len(g.memo) != len(inputs) {
		g.findings = g.scanner.Scan(lists)
		for _, f := range g.findings {
			if s := f.String(); !g.logged[s] {
				g.logged[s] = true
				g.log.Warn("trust: the scan flagged an upstream definition", "server", f.Server, "item", f.Item, "finding", f.Kind, "detail", f.Detail)
			}
		}
		changed := false
		for _, name := range slices.Sorted(maps.Keys(lists)) {
			var v *trust.Verdict
			if g.loadErr != nil {
				v = holdAll(name, lists[name], g.loadErr)
			} else {
				v = trust.Decide(g.lock, name, lists[name], g.policy, g.findings)
			}
			changed = changed || v.LockChanged
			g.memo[name] = &serverTrust{from: inputs[name], gen: g.gen, items: lists[name], v: v}
			g.audit(v)
		}
		for name := range g.memo {
			if _, ok := inputs[name]; !ok {
				delete(g.memo, name)
			}
		}
		if changed {
			g.save()
		}
		g.rememberJudged(servers, fresh, lists)
	}
	for name := range inputs {
		view.byServer[name] = g.memo[name]
	}
	return view
}

// judgeListing decides one listing of a server's prompts, resources or
// templates, made when a client asks for them. The scan sees them beside
// the catalog's items, so a prompt that names another server's tool is
// flagged as a tool would be. A listing equal to the last one, under the
// same lock, reuses its judgement.
func (g *trustGate) judgeListing(server string, kind trust.Kind, items []trust.Item) *trust.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	var h strings.Builder
	for _, it := range items {
		h.WriteString(it.Key())
		h.WriteString(it.Digest())
	}
	key := server + "\x00" + string(kind)
	if m := g.listings[key]; m != nil && m.gen == g.gen && m.from == h.String() {
		return m.v
	}
	if g.loadErr != nil {
		return holdAll(server, items, g.loadErr)
	}
	all := map[string][]trust.Item{}
	for name, m := range g.memo {
		all[name] = m.items
	}
	all[server] = append(slices.Clone(all[server]), items...)
	var findings []trust.Finding
	for _, f := range g.listingScanner.Scan(all) {
		if k, _ := trust.ParseKey(f.Item); f.Server == server && k == kind {
			findings = append(findings, f)
			if s := f.String(); !g.logged[s] {
				g.logged[s] = true
				g.log.Warn("trust: the scan flagged an upstream definition", "server", f.Server, "item", f.Item, "finding", f.Kind, "detail", f.Detail)
			}
		}
	}
	v := trust.DecideKinds(g.lock, server, kind, items, g.policy, findings)
	g.audit(v)
	if v.LockChanged {
		g.save()
	}
	g.listings[key] = &listingTrust{from: h.String(), gen: g.gen, v: v, findings: findings}
	return v
}

// listingTrust is the last judgement of one listing and what it was made
// from (each item's key and digest).
type listingTrust struct {
	from     string
	gen      uint64
	v        *trust.Verdict
	findings []trust.Finding
}

// save writes the lock unless this run may not; g.mu is held.
func (g *trustGate) save() {
	if g.readOnly || g.noWrite || g.closed || g.loadErr != nil {
		return
	}
	text, err := g.lock.SaveText(g.path)
	if err != nil {
		g.log.Error("trust: the lock file cannot be written; pins stay in memory until it can", "lock_file", g.path, "error", err)
		return
	}
	g.written = sha256.Sum256(text)
	g.onDisk = watch.Digest(g.written)
	if g.judged != nil {
		g.judged.Wrote(text)
	}
}

// audit logs each hold once (per definition) and each warned change.
func (g *trustGate) audit(v *trust.Verdict) {
	for _, key := range slices.Sorted(maps.Keys(v.Held)) {
		h := v.Held[key]
		id := h.Server + "\x00" + h.Item + "\x00" + h.NewDigest
		if g.heldLogged[id] {
			continue
		}
		g.heldLogged[id] = true
		g.log.Warn("trust hold", "who", "toolfold", "server", h.Server, "item", h.Item, "reason", h.Reason,
			"changed", strings.Join(h.Changed, ","), "old_digest", h.OldDigest, "new_digest", h.NewDigest, "approve", h.Approve())
	}
	for _, h := range v.Warned {
		id := "warn\x00" + h.Server + "\x00" + h.Item + "\x00" + h.NewDigest
		if g.heldLogged[id] {
			continue
		}
		g.heldLogged[id] = true
		g.log.Warn("trust: a pinned definition changed and is served (trust.onChange is warn)", "server", h.Server, "item", h.Item,
			"changed", strings.Join(h.Changed, ","), "old_digest", h.OldDigest, "new_digest", h.NewDigest, "approve", h.Approve())
	}
}

// HeldCounts are the held items per server, for /metrics.
func (g *trustGate) HeldCounts() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for name, m := range g.memo {
		out[name] = len(m.v.Held)
	}
	for key, m := range g.listings {
		server, _, _ := strings.Cut(key, "\x00")
		out[server] += len(m.v.Held)
	}
	return out
}

// holdAll holds every item of a server: the lock could not be read.
func holdAll(server string, items []trust.Item, why error) *trust.Verdict {
	v := &trust.Verdict{Held: map[string]trust.Hold{}}
	for _, it := range items {
		v.Held[it.Key()] = trust.Hold{Server: server, Item: it.Key(), Reason: "lock file unreadable: " + why.Error(), NewDigest: it.Digest()}
	}
	return v
}

// trustItems are the items of one server's definitions. One that cannot be
// encoded as JSON is logged and left out; it could not be served either.
func trustItems(server string, tools []*mcp.Tool, groups []*upstream.Group, instr string, log *slog.Logger) []trust.Item {
	var out []trust.Item
	for _, t := range tools {
		it, err := trust.ToolItem(t)
		if err != nil {
			log.Warn("trust: a tool definition cannot be pinned", "server", server, "tool", t.Name, "error", err)
			continue
		}
		out = append(out, it)
	}
	var walk func(gs []*upstream.Group, parent string)
	walk = func(gs []*upstream.Group, parent string) {
		for _, g := range gs {
			name := g.Name
			if parent != "" {
				name = parent + "." + g.Name
			}
			kind := trust.KindGroup
			if g.Skill != "" {
				kind = trust.KindSkill
			}
			def := *g
			def.Groups, def.Meta = nil, nil // children are items of their own
			if it, err := trust.ValueItem(kind, name, def); err == nil {
				out = append(out, it)
			}
			walk(g.Groups, name)
		}
	}
	walk(groups, "")
	if instr != "" {
		if it, err := trust.InstructionsItem(instr); err == nil {
			out = append(out, it)
		}
	}
	return out
}

// sanitizedTool is t with invisible and bidi-control characters removed
// from what the model reads (title, description, schemas), or t itself when
// it has none.
func sanitizedTool(t *mcp.Tool) *mcp.Tool {
	var c *mcp.Tool
	clone := func() {
		if c == nil {
			cp := *t
			c = &cp
		}
	}
	if s := trust.Sanitize(t.Description); s != t.Description {
		clone()
		c.Description = s
	}
	if s := trust.Sanitize(t.Title); s != t.Title {
		clone()
		c.Title = s
	}
	for i, schema := range []any{t.InputSchema, t.OutputSchema} {
		if schema == nil {
			continue
		}
		raw, ok := schema.(json.RawMessage)
		if !ok {
			b, err := json.Marshal(schema)
			if err != nil {
				continue
			}
			raw = b
		}
		if clean := trust.SanitizeJSON(raw); &clean[0] != &raw[0] {
			clone()
			if i == 0 {
				c.InputSchema = clean
			} else {
				c.OutputSchema = clean
			}
		}
	}
	if c == nil {
		return t
	}
	return c
}

// heldNotes are the refusals of a view's held tools, by catalog ID.
func (u *Upstreams) heldNotes(v trustView) map[catalog.ToolID]string {
	out := map[catalog.ToolID]string{}
	for _, s := range u.serverList() {
		st := v.byServer[s.key]
		if st == nil {
			continue
		}
		for key, h := range st.v.Held {
			if kind, name := trust.ParseKey(key); kind == trust.KindTool {
				out[s.toolID(name)] = h.Refusal()
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sanitizedGroup is g with invisible characters removed from what the model
// reads of it, or g itself when it has none.
func sanitizedGroup(g *upstream.Group) *upstream.Group {
	c := *g
	if !sanitizeAll(&c.Title, &c.Description, &c.Instructions) {
		return g
	}
	return &c
}

// judgeListing judges one listing of a server's prompts, resources or
// templates and returns the holds by the item's name (a prompt's name as the
// server gave it, a URI, a URI template); nil when nothing is held or the
// plan does not pin. An item that cannot be encoded is held too: it could
// not be compared with its pin.
func judgeListingOf[T any](u *Upstreams, server string, kind trust.Kind, list []T, name func(T) string, item func(T) (trust.Item, error)) map[string]trust.Hold {
	if u.trust == nil || len(list) == 0 {
		return nil
	}
	var items []trust.Item
	var out map[string]trust.Hold
	for _, x := range list {
		it, err := item(x)
		if err != nil {
			if out == nil {
				out = map[string]trust.Hold{}
			}
			out[name(x)] = trust.Hold{Server: server, Item: string(kind) + ":" + name(x), Reason: "its definition cannot be encoded: " + err.Error()}
			continue
		}
		items = append(items, it)
	}
	v := u.trust.judgeListing(server, kind, items)
	for key, h := range v.Held {
		if out == nil {
			out = map[string]trust.Hold{}
		}
		_, n := trust.ParseKey(key)
		out[n] = h
	}
	return out
}

// sanitizedPrompt is a copy of p named name, with invisible and
// bidi-control characters removed from what the model reads.
func sanitizedPrompt(p *mcp.Prompt, name string) *mcp.Prompt {
	cp := *p
	cp.Name, cp.Title, cp.Description = name, trust.Sanitize(p.Title), trust.Sanitize(p.Description)
	cloned := false
	for i, a := range p.Arguments {
		if a == nil {
			continue
		}
		if d, t := trust.Sanitize(a.Description), trust.Sanitize(a.Title); d != a.Description || t != a.Title {
			if !cloned {
				cp.Arguments, cloned = slices.Clone(p.Arguments), true
			}
			ca := *a
			ca.Description, ca.Title = d, t
			cp.Arguments[i] = &ca
		}
	}
	return &cp
}

// sanitizedResource is r with invisible characters removed from what the
// model reads, or r itself when it has none.
func sanitizedResource(r *mcp.Resource) *mcp.Resource {
	cp := *r
	if !sanitizeAll(&cp.Name, &cp.Title, &cp.Description) {
		return r
	}
	return &cp
}

// sanitizedTemplate is t with invisible characters removed from what the
// model reads, or t itself when it has none.
func sanitizedTemplate(t *mcp.ResourceTemplate) *mcp.ResourceTemplate {
	cp := *t
	if !sanitizeAll(&cp.Name, &cp.Title, &cp.Description) {
		return t
	}
	return &cp
}

// sanitizeAll removes invisible characters from each text in place and
// reports whether any had some.
func sanitizeAll(texts ...*string) bool {
	changed := false
	for _, s := range texts {
		if c := trust.Sanitize(*s); c != *s {
			*s, changed = c, true
		}
	}
	return changed
}

// trustedHelp judges the actions of the programs discovered from their
// help: a program upgraded to new help text is a server that changed its
// words. Held actions leave tools, and their refusals join held.
func (p *Plan) trustedHelp(tools []*catalog.Tool, held map[catalog.ToolID]string) ([]*catalog.Tool, map[catalog.ToolID]string) {
	byCommand := map[string][]trust.Item{}
	for _, t := range tools {
		if t == nil || !p.helpCommands[t.Source] || t.Def == nil {
			continue
		}
		it, err := trust.ToolItem(t.Def)
		if err != nil {
			continue // not encodable: the build reports the tool
		}
		it.Kind = trust.KindHelp
		byCommand[t.Source] = append(byCommand[t.Source], it)
	}
	drop := map[catalog.ToolID]string{}
	for _, name := range slices.Sorted(maps.Keys(byCommand)) {
		v := p.trust.judgeListing(name, trust.KindHelp, byCommand[name])
		for _, t := range tools {
			if t == nil || t.Source != name {
				continue
			}
			if h, ok := v.Held[string(trust.KindHelp)+":"+t.Def.Name]; ok {
				drop[t.ID] = h.Refusal()
			}
		}
	}
	if len(drop) == 0 {
		return tools, held
	}
	out := make([]*catalog.Tool, 0, len(tools))
	for _, t := range tools {
		if t != nil {
			if _, ok := drop[t.ID]; ok {
				continue
			}
		}
		out = append(out, t)
	}
	merged := maps.Clone(held)
	if merged == nil {
		merged = map[catalog.ToolID]string{}
	}
	maps.Copy(merged, drop)
	return out, merged
}
