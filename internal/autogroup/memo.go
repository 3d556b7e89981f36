package autogroup

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
	"strconv"
	"sync"

	fastjson "github.com/segmentio/encoding/json"
	"github.com/toolfold/toolfold/internal/jsondepth"
)

// memoVersion is bumped when what a memo file holds changes shape.
const memoVersion = 1

// Memo remembers derivations by a fingerprint of what they were made from
// (each tool's ID, name, description and readOnlyHint, and the options),
// so that a rebuild after one server's change derives that server's group
// alone, and a restart on an unchanged catalog derives none: it reads the
// trees from the file the last start left in the cache directory.
//
// Derive is pure but for Options.Taken, the declared groups' names: a
// memo keeps the answers Taken gave and reuses a tree only when Taken
// gives them again, so a derivation reused is the one that would be made.
// A Memo is safe for concurrent use.
type Memo struct {
	path, build string

	mu      sync.Mutex
	entries map[string]*memoEntry
	// used are the fingerprints asked for since the last Flush; Flush
	// keeps only them, so the file follows the catalog.
	used  map[string]bool
	dirty bool
}

// memoEntry is one remembered derivation.
type memoEntry struct {
	// Taken are the local names Options.Taken was asked about, with its
	// answers.
	Taken map[string]bool `json:"taken,omitempty"`
	Root  *Node           `json:"root"`
}

// memoFile is a memo on disk.
type memoFile struct {
	Version int                   `json:"version"`
	Build   string                `json:"build"`
	Entries map[string]*memoEntry `json:"entries"`
}

// OpenMemo is the memo kept at path ("": in memory only) by the binary
// build (its path, size and time, say): trees another build derived are
// not reused, since an upgrade may derive differently. A file that is
// missing, of another build, or unreadable starts an empty memo; the
// error says why, for a log line, when the file was there.
func OpenMemo(path, build string) (*Memo, error) {
	m := &Memo{path: path, build: build, entries: map[string]*memoEntry{}, used: map[string]bool{}}
	if path == "" {
		return m, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	var f memoFile
	switch {
	case err != nil:
	case !jsondepth.Within(b, jsondepth.Max):
		err = fmt.Errorf("nested deeper than %d levels", jsondepth.Max)
	default:
		err = fastjson.Unmarshal(b, &f)
	}
	if err == nil && (f.Version != memoVersion || f.Build != build) {
		err = errors.New("written by another build of toolfold")
	}
	if err != nil {
		return m, fmt.Errorf("autogroup: the derived groups remembered in %s are not used (%v); they are derived again", path, err)
	}
	for k, e := range f.Entries {
		if e != nil && e.Root != nil {
			m.entries[k] = e
		}
	}
	return m, nil
}

// Derive is [Derive], reusing the tree of a derivation from the same
// tools and options. The tree returned is shared: callers read it only.
func (m *Memo) Derive(tools []Tool, opts Options) *Node {
	key := fingerprint(tools, opts)
	m.mu.Lock()
	e := m.entries[key]
	m.used[key] = true
	m.mu.Unlock()
	if e != nil && sameAnswers(e.Taken, opts.Taken) && placesExactly(e.Root, tools) {
		return e.Root
	}
	asked := map[string]bool{}
	recorded := opts
	recorded.Taken = func(local string) bool {
		taken := opts.Taken != nil && opts.Taken(local)
		asked[local] = taken
		return taken
	}
	root := Derive(tools, recorded)
	m.mu.Lock()
	m.entries[key] = &memoEntry{Taken: asked, Root: root}
	m.dirty = true
	m.mu.Unlock()
	return root
}

func sameAnswers(asked map[string]bool, taken func(string) bool) bool {
	for local, was := range asked {
		if (taken != nil && taken(local)) != was {
			return false
		}
	}
	return true
}

// placesExactly reports whether root places each of tools once and
// nothing else, as a derivation from them does: a memo file damaged on
// disk must not lose or invent a tool.
func placesExactly(root *Node, tools []Tool) bool {
	want := make(map[string]bool, len(tools))
	for _, t := range tools {
		want[t.ID] = true
	}
	n := 0
	var places func(g *Node) bool
	places = func(g *Node) bool {
		if g == nil {
			return false
		}
		for _, id := range g.Tools {
			if !want[id] {
				return false
			}
			n++
		}
		for _, c := range g.Children {
			if !places(c) {
				return false
			}
		}
		return true
	}
	return places(root) && n == len(want) && len(want) == len(tools)
}

// Flush forgets the derivations not asked for since the last Flush and
// writes the memo's file when anything changed. The caller flushes after
// deriving for a whole catalog, not one with servers still pending.
func (m *Memo) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if !m.used[k] {
			delete(m.entries, k)
			m.dirty = true
		}
	}
	m.used = map[string]bool{}
	if !m.dirty || m.path == "" {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(memoFile{Version: memoVersion, Build: m.build, Entries: m.entries}); err != nil {
		return fmt.Errorf("autogroup: encode the derived groups: %w", err)
	}
	if err := writeFile(m.path, buf.Bytes()); err != nil {
		return fmt.Errorf("autogroup: remember the derived groups: %w", err)
	}
	m.dirty = false
	return nil
}

// writeFile writes b to path through a temporary file renamed over it, so
// a start reading it meanwhile sees the old file or the new.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".derived-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fingerprint is SHA-256 over everything Derive reads but Taken, each
// part length-prefixed.
func fingerprint(tools []Tool, opts Options) string {
	h := sha256.New()
	var n []byte
	str := func(s string) {
		n = strconv.AppendInt(n[:0], int64(len(s)), 10)
		n = append(n, ':')
		h.Write(n)
		h.Write([]byte(s))
	}
	str("toolfold-autogroup-v1")
	str(strconv.Itoa(opts.Size))
	str(strconv.Itoa(len(opts.Ignore)))
	for _, w := range opts.Ignore {
		str(w)
	}
	str(opts.Name)
	str(opts.Instructions)
	str(strconv.Itoa(len(tools)))
	for _, t := range tools {
		str(t.ID)
		str(t.Name)
		str(t.Description)
		str(strconv.FormatBool(t.ReadOnly))
	}
	return hex.EncodeToString(h.Sum(nil))
}
