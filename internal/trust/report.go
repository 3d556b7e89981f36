package trust

import (
	"encoding/json"
	"maps"
	"slices"
)

// Report is the trust state as `toolfold pins --json` and /api/pins show
// it: every server's state and, per held item, old and new definitions,
// their line diff and the command that approves it.
type Report struct {
	LockFile string         `json:"lockFile"`
	ReadOnly bool           `json:"readOnly"`
	Servers  []ServerReport `json:"servers"`
	Findings []Finding      `json:"findings"`
}

// ServerReport is one server in a [Report].
type ServerReport struct {
	Name        string       `json:"name"`
	State       string       `json:"state"` // pinned, held, quarantined
	Pinned      int          `json:"pinned"`
	Held        []HeldReport `json:"held"`
	Quarantined bool         `json:"quarantined,omitempty"`
}

// HeldReport is one held item in a [Report].
type HeldReport struct {
	Item      string          `json:"item"`
	Changed   []string        `json:"changed,omitempty"`
	OldDigest string          `json:"oldDigest,omitempty"`
	NewDigest string          `json:"newDigest"`
	Old       json.RawMessage `json:"old,omitempty"`
	New       json.RawMessage `json:"new"`
	Diff      string          `json:"diff"`
	Approve   string          `json:"approve"`
}

// NewReport reports a lock as judged and the scan's findings.
func NewReport(lockFile string, readOnly bool, l *Lock, findings []Finding) Report {
	r := Report{LockFile: lockFile, ReadOnly: readOnly, Findings: findings, Servers: []ServerReport{}}
	// Without them (the file changed since it was read), a held item's
	// diff shows its new definition whole until the watcher reads the file.
	_ = l.LoadHeldDefinitions()
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, name := range slices.Sorted(maps.Keys(l.Servers)) {
		sp := l.Servers[name]
		s := ServerReport{Name: name, State: "pinned", Pinned: len(sp.Pinned), Held: []HeldReport{}, Quarantined: sp.Quarantined}
		switch {
		case sp.Quarantined:
			s.State = "quarantined"
		case len(sp.Held) > 0:
			s.State = "held"
		}
		for _, key := range slices.Sorted(maps.Keys(sp.Held)) {
			h, old := sp.Held[key], sp.Pinned[key]
			hold := Hold{Server: name, Item: key}
			s.Held = append(s.Held, HeldReport{Item: key, Changed: Changed(old.Definition, h.Definition), OldDigest: old.Digest, NewDigest: h.Digest,
				Old: old.Definition, New: h.Definition, Diff: Diff(old.Definition, h.Definition), Approve: hold.Approve()})
		}
		r.Servers = append(r.Servers, s)
	}
	r.Findings = append(r.Findings, heldFindings(l, r.Findings)...)
	return r
}

// heldFindings scans the held definitions the lock keeps that findings do
// not cover: a lock pulled onto another machine, or read where the servers'
// lists are not cached, still says why a held item looks poisoned.
func heldFindings(l *Lock, findings []Finding) []Finding {
	covered := map[string]bool{}
	for _, f := range findings {
		covered[f.Server+"\x00"+f.Item] = true
	}
	held := map[string][]Item{}
	for name, sp := range l.Servers {
		for key, pin := range sp.Held {
			if covered[name+"\x00"+key] {
				continue
			}
			kind, item := ParseKey(key)
			held[name] = append(held[name], Item{Kind: kind, Name: item, Def: pin.Definition})
		}
	}
	if len(held) == 0 {
		return nil
	}
	return Scan(held)
}
