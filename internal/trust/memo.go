package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	fastjson "github.com/segmentio/encoding/json"
	"github.com/toolfold/toolfold/internal/jsondepth"
)

// memoVersion is bumped when what is remembered, or how an input is hashed,
// changes: a memo of another version is ignored.
const memoVersion = 2

// Memo is what a start may reuse of the last judgement of each server's
// definitions: per server, a hash of exactly what its items were computed
// from (the caller's Input) and, per item, its key, digest and what the scan
// found in it on its own. A start whose server says the same bytes again
// needs no canonical JSON, digest or scan of its items, only the comparison
// of the remembered digests with the lock.
//
// It is derived data, kept in toolfold's private cache directory beside the
// catalog cache: it says nothing the lock has not judged, and an input that
// differs in one byte misses it and is judged item by item.
type Memo struct {
	Version int `json:"version"`
	// Build names the toolfold binary that wrote the memo (see
	// [LoadMemo]): a scan rule added by an upgrade must see every item.
	Build   string                 `json:"build"`
	Servers map[string]*MemoServer `json:"servers"`
	// Lock is the SHA-256 of the last lock text (its bytes as read or
	// written) whose every pin was checked against its digest and found
	// canonical but for spacing (see [Memo.LoadLock]).
	Lock string `json:"lock,omitempty"`
	// dirty is set by a change not yet saved.
	dirty bool
}

// MemoServer is one server's remembered items.
type MemoServer struct {
	// Input is the caller's hash of what the items were made from.
	Input string     `json:"input"`
	Items []MemoItem `json:"items"`
}

// MemoItem is one remembered item.
type MemoItem struct {
	Key    string   `json:"k"`
	Digest string   `json:"d"`
	Scan   ItemScan `json:"s"`
}

// NewMemo is an empty memo for the binary build (see [LoadMemo]).
func NewMemo(build string) *Memo {
	return &Memo{Version: memoVersion, Build: build, Servers: map[string]*MemoServer{}}
}

// LoadMemo reads the memo at path. build names the running binary (its
// path, size and time, say): a memo another build wrote is not used, so
// that what a new build scans for, or how it digests, is never taken on
// trust from an old one. A missing file, one of another build or version,
// or one that cannot be read is an empty memo and the reason (nil for a
// missing file): the memo only saves work, so nothing is lost without it.
func LoadMemo(path, build string) (*Memo, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewMemo(build), nil
	}
	if err != nil {
		return NewMemo(build), fmt.Errorf("trust: read the memo of judged definitions: %w", err)
	}
	m := NewMemo(build)
	if !jsondepth.Within(b, jsondepth.Max) {
		err = fmt.Errorf("nested deeper than %d levels", jsondepth.Max)
	} else {
		err = fastjson.Unmarshal(b, m)
	}
	switch {
	case err != nil:
	case m.Version != memoVersion || m.Build != build:
		err = fmt.Errorf("written by another build of toolfold")
	case m.Servers == nil:
		err = fmt.Errorf("it lists no servers")
	}
	if err != nil {
		return NewMemo(build), fmt.Errorf("trust: the memo of judged definitions %s is not used (%v); it is rewritten after this start", path, err)
	}
	return m, nil
}

// Save writes the memo to path atomically, creating its directory private
// to the user as the catalog cache is.
func (m *Memo) Save(path string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("trust: encode the memo of judged definitions: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("trust: write the memo of judged definitions: %w", err)
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("trust: the memo of judged definitions: %w", err)
	}
	m.dirty = false
	return nil
}

// Dirty reports whether the memo changed since it was read or saved.
func (m *Memo) Dirty() bool { return m.dirty }

// LoadLock is [LoadLock], which checks every pin's digest against its
// definition, except for a text the memo says was checked before: the
// same bytes check the same. Only the spacing of such a text's
// definitions is removed to make them canonical again. A text checked now
// is remembered.
//
// The memo lives where the catalog cache does, private to the user; what
// it spares is the check against hand edits that a lock's writer could
// defeat anyway (digests are plain SHA-256), never the comparison of what
// servers say with the pins.
func (m *Memo) LoadLock(path string) (*Lock, error) {
	l, _, err := ReadLock(path, m)
	return l, err
}

// Wrote remembers text as the lock's, written by [Lock.SaveText] from
// canonical definitions, so the next [Memo.LoadLock] of it needs no check.
// A text nested deeper than a lock may be is not remembered: each read of
// it is checked, and refused.
func (m *Memo) Wrote(text []byte) {
	if !jsondepth.Within(text, jsondepth.Max) {
		return
	}
	sum := sha256.Sum256(text)
	if s := hex.EncodeToString(sum[:]); m.Lock != s {
		m.Lock, m.dirty = s, true
	}
}

// Items are the server's remembered items when it was last judged from
// input, or false.
func (m *Memo) Items(server, input string) ([]Item, bool) {
	ms := m.Servers[server]
	if ms == nil || ms.Input != input {
		return nil, false
	}
	out := make([]Item, len(ms.Items))
	for i, mi := range ms.Items {
		kind, name := ParseKey(mi.Key)
		out[i] = Item{Kind: kind, Name: name, digest: mi.Digest}
	}
	return out, true
}

// Remember records server's items, made from input, with what s found in
// each on its own.
func (m *Memo) Remember(server, input string, items []Item, s *Scanner) {
	ms := &MemoServer{Input: input, Items: make([]MemoItem, len(items))}
	for i, it := range items {
		mi := MemoItem{Key: it.Key(), Digest: it.Digest()}
		if sc := s.known(mi.Digest); sc != nil {
			mi.Scan = ItemScan{Size: sc.size, Words: sc.words, Local: sc.local}
		} else {
			mi.Scan = scanItem(it).export()
		}
		ms.Items[i] = mi
	}
	m.Servers[server] = ms
	m.dirty = true
}

// Forget drops the servers not in keep.
func (m *Memo) Forget(keep func(server string) bool) {
	for name := range m.Servers {
		if !keep(name) {
			delete(m.Servers, name)
			m.dirty = true
		}
	}
}

// Teach gives each scanner what the memo says the scan found in server's
// items, so a scan of them needs not their definitions. The scanners share
// what they are taught, which none changes.
func (m *Memo) Teach(server string, scanners ...*Scanner) {
	ms := m.Servers[server]
	if ms == nil {
		return
	}
	for _, s := range scanners {
		if s.learned == nil {
			s.learned = map[string]*itemScan{}
		}
	}
	for _, mi := range ms.Items {
		sc := &itemScan{size: mi.Scan.Size, words: mi.Scan.Words, local: mi.Scan.Local}
		for _, s := range scanners {
			s.learned[mi.Digest] = sc
		}
	}
}

// AllPinned reports whether every item is pinned as it is for server and
// nothing of the server is quarantined or held: then judging the items
// needs only their digests, since each serves as approved.
func AllPinned(l *Lock, server string, items []Item) bool {
	sp := l.Servers[server]
	if sp == nil || sp.Quarantined {
		return false
	}
	for _, it := range items {
		if p, ok := sp.Pinned[it.Key()]; !ok || p.Digest != it.Digest() {
			return false
		}
	}
	return true
}

// ItemScan is what the scan found in one definition on its own: its text's
// size, the words in it shaped like tool names, and its own findings (Kind
// and Detail only). The catalog-wide checks (shadowing, outsized text) are
// made from these at each scan.
type ItemScan struct {
	Size  int       `json:"n"`
	Words []string  `json:"w,omitempty"`
	Local []Finding `json:"f,omitempty"`
}

func (sc *itemScan) export() ItemScan {
	return ItemScan{Size: sc.size, Words: sc.words, Local: sc.local}
}
