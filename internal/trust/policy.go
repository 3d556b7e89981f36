package trust

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Policy says what to do with a definition that is not pinned as it is.
// The zero value is the default policy.
type Policy struct {
	// OnChange is for a pinned item whose definition changed: "hold"
	// (default), "warn" (serve the new text and say so) or "accept" (re-pin).
	OnChange string
	// OnNew is for an item new to an already-pinned server: "hold"
	// (default) or "accept".
	OnNew string
	// NewServers is for a server the lock has never seen: "accept" (default,
	// pin on first sight) or "hold" (quarantine the whole server).
	NewServers string
	// OnFinding is for a definition the scan flags, before it is pinned:
	// "warn" (default) or "hold".
	OnFinding string
}

// Policy values.
const (
	PolicyHold   = "hold"
	PolicyWarn   = "warn"
	PolicyAccept = "accept"
)

func (p Policy) onChange() string   { return or(p.OnChange, PolicyHold) }
func (p Policy) onNew() string      { return or(p.OnNew, PolicyHold) }
func (p Policy) newServers() string { return or(p.NewServers, PolicyAccept) }
func (p Policy) onFinding() string  { return or(p.OnFinding, PolicyWarn) }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Validate names the first value that is not one of a key's choices.
func (p Policy) Validate() error {
	for _, c := range []struct {
		key, val string
		ok       []string
	}{
		{"trust.onChange", p.OnChange, []string{PolicyHold, PolicyWarn, PolicyAccept}},
		{"trust.onNew", p.OnNew, []string{PolicyHold, PolicyAccept}},
		{"trust.newServers", p.NewServers, []string{PolicyAccept, PolicyHold}},
		{"trust.onFinding", p.OnFinding, []string{PolicyWarn, PolicyHold}},
	} {
		if c.val != "" && !slices.Contains(c.ok, c.val) {
			return fmt.Errorf("%s is %q; use one of %s", c.key, c.val, strings.Join(c.ok, ", "))
		}
	}
	return nil
}

// Reasons an item is held (or warned about).
const (
	ReasonChanged   = "changed"
	ReasonNew       = "new"
	ReasonNewServer = "new server"
	ReasonFinding   = "scan finding"
)

// Hold is why one item is not served as the server gave it.
type Hold struct {
	Server string
	Item   string // "kind:name"
	Reason string
	// Changed names the top-level fields that differ from the pin
	// (description, inputSchema…); empty for a new item.
	Changed              []string
	OldDigest, NewDigest string
	Findings             []Finding
}

// Approve is the command that approves the item.
func (h Hold) Approve() string {
	kind, name := ParseKey(h.Item)
	arg := h.Item
	if kind == KindTool {
		arg = name
	}
	return fmt.Sprintf("toolfold pins approve %s %s", shellWord(h.Server), shellWord(arg))
}

// Refusal is the text of a call's refusal: the server, the item, what
// changed and the command that approves it.
func (h Hold) Refusal() string {
	kind, name := ParseKey(h.Item)
	var why string
	switch h.Reason {
	case ReasonChanged:
		why = fmt.Sprintf("its %s changed since it was pinned (%s, now %s)", strings.Join(h.Changed, ", "), short(h.OldDigest), short(h.NewDigest))
	case ReasonNew:
		why = "it is new to a server whose definitions are pinned"
	case ReasonNewServer:
		why = "the server is new and trust.newServers is \"hold\""
	case ReasonFinding:
		var kinds []string
		for _, f := range h.Findings {
			kinds = append(kinds, f.Kind)
		}
		slices.Sort(kinds)
		why = "the poisoning scan flagged it (" + strings.Join(slices.Compact(kinds), ", ") + ")"
	}
	return fmt.Sprintf("toolfold holds %s %q of server %q: %s. An operator reviews it with `toolfold pins` and approves it with `%s`.", kind, name, h.Server, why, h.Approve())
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ':' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Verdict is the decision over one server's items.
type Verdict struct {
	// Held maps item keys to why they are held; an item not in it serves.
	Held map[string]Hold
	// Warned are changes served under trust.onChange "warn".
	Warned []Hold
	// Pinned are the keys pinned by this decision (first sight, accept).
	Pinned []string
	// LockChanged is true when the lock needs saving.
	LockChanged bool
}

// Serves reports whether the item with key may be served.
func (v *Verdict) Serves(key string) bool { _, held := v.Held[key]; return !held }

// Decide compares a server's items with its pins under the policy, updates
// the lock (first-sight pins, accepted changes, held definitions) and says
// per item serve or hold. findings are the scan's findings on these items;
// they hold an item only if it is not already pinned as it is, so an
// approved item is never held again for the same text.
//
// Decide judges a server's catalog: its tools, groups, skills, instructions
// and a command's help. Its prompts, resources and templates are listed
// apart, when a client asks: [DecideKinds] judges those.
func Decide(l *Lock, server string, items []Item, p Policy, findings []Finding) *Verdict {
	return decide(l, server, items, p, findings, catalogKinds)
}

// catalogKinds are the kinds a server's catalog holds, judged together.
var catalogKinds = []Kind{KindTool, KindGroup, KindSkill, KindInstructions, KindHelp}

// DecideKinds is [Decide] over one listing of kind (prompts, resources or
// templates): held items of other kinds stay as they are, and the first
// listing of the kind on a pinned server pins what it lists, as a server's
// first start does.
func DecideKinds(l *Lock, server string, kind Kind, items []Item, p Policy, findings []Finding) *Verdict {
	return decide(l, server, items, p, findings, []Kind{kind})
}

func decide(l *Lock, server string, items []Item, p Policy, findings []Finding, kinds []Kind) *Verdict {
	d := &decision{l: l, server: server, p: p, v: &Verdict{Held: map[string]Hold{}}, findings: map[string][]Finding{}}
	for _, f := range findings {
		if f.Server == server {
			d.findings[f.Item] = append(d.findings[f.Item], f)
		}
	}
	d.open(l, kinds)
	oldHeld := maps.Clone(d.sp.Held)
	// Only the held items of the kinds judged now are judged again.
	maps.DeleteFunc(d.sp.Held, func(key string, _ Pin) bool {
		k, _ := ParseKey(key)
		return slices.Contains(kinds, k)
	})
	if len(d.sp.Held) == 0 {
		d.sp.Held = nil
	}
	for _, it := range items {
		d.judge(it)
	}
	if !sameHeld(oldHeld, d.sp.Held) {
		d.v.LockChanged = true
	}
	return d.v
}

// decision is one Decide under way: the server's pins, whether this is
// their first sight, and the verdict it builds.
type decision struct {
	l        *Lock
	server   string
	p        Policy
	sp       *ServerPins
	first    bool
	findings map[string][]Finding // by item key
	v        *Verdict
}

// open finds the server's pins, making them on first sight, and says
// whether what is judged now is seen for the first time: the server's first
// listing, or a kind's first listing beyond the catalog's.
func (d *decision) open(l *Lock, kinds []Kind) {
	d.sp = l.Servers[d.server]
	d.first = d.sp == nil
	if d.first {
		d.sp = &ServerPins{Pinned: map[string]Pin{}, Quarantined: d.p.newServers() == PolicyHold}
		l.Servers[d.server] = d.sp
		d.v.LockChanged = true
	}
	if slices.Equal(kinds, []Kind{KindResource}) {
		// Resources are a server's data as much as its definitions: they
		// come and go as it works (a file, a session's log), so a new one
		// is pinned on sight, never held as "new"; a known one whose
		// description changes is held like any definition.
		d.first = true
	}
	if slices.Equal(kinds, catalogKinds) || slices.Contains(d.sp.Listed, kinds[0]) {
		return
	}
	d.first = true
	d.sp.Listed = append(d.sp.Listed, kinds[0])
	slices.Sort(d.sp.Listed)
	d.v.LockChanged = true
}

// judge decides one item: serve it as pinned, pin it, warn or hold it.
func (d *decision) judge(it Item) {
	key := it.Key()
	fs := d.findings[key]
	old, pinned := d.sp.Pinned[key]
	switch {
	case d.sp.Quarantined:
		d.hold(it, Hold{Reason: ReasonNewServer, OldDigest: old.Digest, Findings: fs})
	case pinned && old.Digest == it.Digest():
		// As approved.
	case len(fs) > 0 && d.p.onFinding() == PolicyHold:
		d.hold(it, Hold{Reason: ReasonFinding, OldDigest: old.Digest, Changed: changedIf(pinned, d.definition(key, old), it), Findings: fs})
	case pinned:
		d.changed(it, Hold{Server: d.server, Item: key, Reason: ReasonChanged, Changed: Changed(d.definition(key, old).Definition, it.Def), OldDigest: old.Digest, NewDigest: it.Digest(), Findings: fs})
	case d.first || d.p.onNew() == PolicyAccept:
		d.pin(it)
	default:
		d.hold(it, Hold{Reason: ReasonNew, Findings: fs})
	}
}

// definition is the pin old of key with its definition, read from the
// lock file when the lock was read without (Lock.LoadDefinitions). A file
// changed since leaves it without: the change is then described against
// nothing until the watcher reads the new file.
func (d *decision) definition(key string, old Pin) Pin {
	if old.Definition != nil || d.l.LoadDefinitions() != nil {
		return old
	}
	return d.sp.Pinned[key]
}

// changed applies trust.onChange to a pinned item whose definition changed.
func (d *decision) changed(it Item, h Hold) {
	switch d.p.onChange() {
	case PolicyAccept:
		d.pin(it)
	case PolicyWarn:
		d.v.Warned = append(d.v.Warned, h)
	default:
		d.hold(it, h)
	}
}

func (d *decision) hold(it Item, h Hold) {
	h.Server, h.Item, h.NewDigest = d.server, it.Key(), it.Digest()
	d.v.Held[h.Item] = h
	if d.sp.Held == nil {
		d.sp.Held = map[string]Pin{}
	}
	d.sp.Held[h.Item] = Pin{Digest: h.NewDigest, Definition: it.Def}
}

func (d *decision) pin(it Item) {
	d.sp.Pinned[it.Key()] = Pin{Digest: it.Digest(), Definition: it.Def}
	d.v.Pinned = append(d.v.Pinned, it.Key())
	d.v.LockChanged = true
}

func changedIf(pinned bool, old Pin, it Item) []string {
	if !pinned {
		return nil
	}
	return Changed(old.Definition, it.Def)
}

func sameHeld(a, b map[string]Pin) bool {
	return maps.EqualFunc(a, b, func(x, y Pin) bool { return x.Digest == y.Digest && bytes.Equal(x.Definition, y.Definition) })
}
