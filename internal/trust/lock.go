package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	fastjson "github.com/segmentio/encoding/json"
	"github.com/toolfold/toolfold/internal/jsondepth"
)

// DefaultLockFile is the lock's name beside the config.
const DefaultLockFile = "toolfold.lock"

const lockVersion = 1

// Pin is one pinned item: its digest and the definition it was taken from.
//
// The definition is kept, not only the digest, so that a held change can be
// shown as a readable diff of old and new without the old server, and so a
// reviewer of the committed lock sees the words the model will read. The lock
// grows with the catalog (the 35 recorded catalogs are about 600 KB of JSON);
// go.sum-style digests alone would make every hold unreviewable.
type Pin struct {
	Digest     string          `json:"digest"`
	Definition json.RawMessage `json:"definition"`
}

// ServerPins are a server's pins and its held items.
type ServerPins struct {
	// Pinned maps an item key ("tool:send_email") to its pin.
	Pinned map[string]Pin `json:"pinned"`
	// Held maps an item key to the definition the server gave that is not
	// served until someone approves it. A held item new to the server has no
	// entry in Pinned.
	Held map[string]Pin `json:"held,omitempty"`
	// Quarantined is true while the whole server waits for approval
	// (trust.newServers "hold"); its items are all in Held.
	Quarantined bool `json:"quarantined,omitempty"`
	// Listed are the kinds of item beyond the catalog's (prompts,
	// resources, templates) whose first listing has been pinned. A server's
	// prompts are listed when a client asks, often long after its tools
	// were pinned: their first listing is first sight, and only a prompt
	// new after it is "new to a pinned server".
	Listed []Kind `json:"listed,omitempty"`
}

// Lock is the content of the lock file: one entry per server.
type Lock struct {
	Version int                    `json:"version"`
	Servers map[string]*ServerPins `json:"servers"`
	// unread is the file that holds the pinned definitions a read through
	// the memo left out (see [ReadLock]); nil when every pin has its own.
	unread *unreadDefinitions
}

// unreadDefinitions names the lock text whose pinned definitions were not
// decoded: its file and the SHA-256 of the bytes read then.
type unreadDefinitions struct {
	path string
	sum  [sha256.Size]byte
}

// NewLock is an empty lock.
func NewLock() *Lock { return &Lock{Version: lockVersion, Servers: map[string]*ServerPins{}} }

// LoadLock reads the lock at path. A missing file is an empty lock.
func LoadLock(path string) (*Lock, error) {
	l, _, err := ReadLock(path, nil)
	return l, err
}

// ReadLock is [LoadLock], or [Memo.LoadLock] with a memo, that also
// returns the SHA-256 of the file's bytes (nil for a missing file): a
// watcher of the file starts from it instead of reading and hashing a
// lock of thousands of pins again.
func ReadLock(path string, memo *Memo) (*Lock, *[sha256.Size]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewLock(), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trust: read lock file: %w", err)
	}
	sum := sha256.Sum256(b)
	if memo != nil && memo.Lock == hex.EncodeToString(sum[:]) {
		// These very bytes were checked before: a start needs the pins'
		// digests, not the definitions kept for diffs and review, which
		// are most of the text. They are read from the file again when
		// something needs them (Lock.LoadDefinitions).
		if l, err := parseDigests(b); err == nil {
			l.unread = &unreadDefinitions{path: path, sum: sum}
			return l, &sum, nil
		}
	}
	l, _, err := parseLock(b, sum, memo)
	return l, &sum, err
}

// parseDigests reads a lock text that was checked before (its bytes hash
// to what the memo recorded, so it is valid, nested within bounds and its
// digests match its definitions), keeping of each pin only its digest. A
// held item keeps its definition: holds are few, and shown as diffs.
func parseDigests(b []byte) (*Lock, error) {
	l := NewLock()
	if _, err := fastjson.Parse(b, l, fastjson.DisallowUnknownFields|fastjson.DontCopyRawMessage); err != nil {
		return nil, err
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("version %d", l.Version)
	}
	if l.Servers == nil {
		l.Servers = map[string]*ServerPins{}
	}
	for name, sp := range l.Servers {
		if sp == nil {
			sp = &ServerPins{}
			l.Servers[name] = sp
		}
		if sp.Pinned == nil {
			sp.Pinned = map[string]Pin{}
		}
		// The definitions point into b: dropped, so b is not kept.
		for key, p := range sp.Pinned {
			sp.Pinned[key] = Pin{Digest: p.Digest}
		}
		for key, p := range sp.Held {
			c, err := Canonical(p.Definition)
			if err != nil {
				return nil, err
			}
			sp.Held[key] = Pin{Digest: p.Digest, Definition: c}
		}
	}
	return l, nil
}

// LoadDefinitions gives every pin its definition, for a lock that
// [ReadLock] read through the memo without them: they are decoded from the
// lock file, which must still hold the bytes read then. A lock with all
// its definitions is left as it is. Saving the lock and diffing a changed
// definition call it; it fails when the file changed since, and its
// watcher then reads the new file as a whole.
func (l *Lock) LoadDefinitions() error {
	if l.unread == nil {
		return nil
	}
	u := l.unread
	b, err := os.ReadFile(u.path)
	if err == nil && sha256.Sum256(b) != u.sum {
		err = errors.New("it changed since it was read at the start")
	}
	if err != nil {
		return fmt.Errorf("trust: the pinned definitions are read from the lock file %s when needed, and %w; the lock is read again as a whole once its change is seen", u.path, err)
	}
	// The same bytes as checked before: a memo of them spares the check.
	full, _, err := parseLock(b, u.sum, &Memo{Lock: hex.EncodeToString(u.sum[:])})
	if err != nil {
		return err
	}
	for name, sp := range l.Servers {
		fsp := full.Servers[name]
		for key, p := range sp.Pinned {
			if p.Definition != nil || fsp == nil {
				continue
			}
			if fp, ok := fsp.Pinned[key]; ok && fp.Digest == p.Digest {
				sp.Pinned[key] = fp
			}
		}
	}
	l.unread = nil
	return nil
}

// ParseLock reads a lock from its text.
func ParseLock(b []byte) (*Lock, error) {
	l, _, err := parseLock(b, [sha256.Size]byte{}, nil)
	return l, err
}

// parseLock reads a lock from its text, whose SHA-256 is sum (read only
// with a memo). Unless memo says the text was checked before, every pin's
// definition is made canonical and its digest checked; canonical then
// reports whether every definition in the text was canonical but for its
// spacing, as a lock toolfold wrote is: a checked text of that kind needs
// only its spacing removed on the next read. Texts are told apart by the
// SHA-256 of their bytes as read, which the watcher of the file needs
// anyway: any byte changed, spacing included, is checked again.
func parseLock(b []byte, textSHA [sha256.Size]byte, memo *Memo) (l *Lock, canonical bool, err error) {
	l = NewLock()
	// The text loses its spacing first, in one pass: the file is indented
	// for review, mostly spaces, and its definitions are then compact as
	// they are read, in place. The decoder recurses without a bound: a
	// corrupt lock nested millions deep must be refused, not overflow the
	// stack; the same pass bounds the nesting.
	b, within := withoutSpace(b, jsondepth.Max)
	checked := false
	if memo != nil && within {
		sum := hex.EncodeToString(textSHA[:])
		checked = memo.Lock == sum
		defer func() {
			if err == nil && canonical && !checked {
				memo.Lock, memo.dirty = sum, true
			}
		}()
	}
	if !within {
		err = fmt.Errorf("nested deeper than %d levels", jsondepth.Max)
	} else {
		_, err = fastjson.Parse(b, l, fastjson.DisallowUnknownFields|fastjson.DontCopyRawMessage)
	}
	if err != nil {
		return nil, false, fmt.Errorf("trust: the lock file is not valid (%w); restore it from version control, or delete it to pin everything anew", err)
	}
	if l.Version != lockVersion {
		return nil, false, fmt.Errorf("trust: the lock file has version %d, this toolfold reads version %d; upgrade toolfold or delete the file to pin anew", l.Version, lockVersion)
	}
	if l.Servers == nil {
		l.Servers = map[string]*ServerPins{}
	}
	canonical = true
	for name, sp := range l.Servers {
		if sp == nil {
			sp = &ServerPins{}
			l.Servers[name] = sp
		}
		if sp.Pinned == nil {
			sp.Pinned = map[string]Pin{}
		}
		if checked {
			continue // compact is canonical, as the check found
		}
		for _, m := range []map[string]Pin{sp.Pinned, sp.Held} {
			for key, p := range m {
				// The digest is over the canonical form, which must still
				// match the definition, so a hand edit of one without the
				// other is caught here.
				c, err := Canonical(p.Definition)
				if err != nil || digest(c) != p.Digest {
					return nil, false, fmt.Errorf("trust: the lock file's %s %s does not match its digest; restore the file from version control, or remove the entry to pin it anew", name, key)
				}
				canonical = canonical && bytes.Equal(p.Definition, c)
				m[key] = Pin{Digest: p.Digest, Definition: c}
			}
		}
	}
	return l, canonical, nil
}

// withoutSpace is JSON text with the white space outside its strings
// removed, and whether it nests objects and arrays at most max deep. Each
// string is copied whole: indented text is runs of spaces between
// strings, and a byte at a time would be most of a start's reading of the
// lock.
func withoutSpace(b []byte, max int) ([]byte, bool) {
	// A lock toolfold wrote compacts to a little under half its size: room
	// for more, so a big lock is not copied again and again as the result
	// grows, and not so much that the pins, which keep the result, keep
	// much unused.
	out := make([]byte, 0, len(b)*5/8)
	depth := 0
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			end := stringEnd(b, i)
			out = append(out, b[i:end]...)
			i = end
		default:
			switch c {
			case '{', '[':
				if depth++; depth > max {
					return nil, false
				}
			case '}', ']':
				depth--
			}
			out = append(out, c)
			i++
		}
	}
	return out, true
}

// stringEnd is the index just past the string that starts at b[i] == '"',
// or len(b) for one that does not end.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], `"\`)
		if k < 0 {
			return len(b)
		}
		j += k
		if b[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
	}
	return len(b)
}

// LoadHeldDefinitions is [Lock.LoadDefinitions] when anything is held, so
// that a held item's diff shows the pinned definition; a lock with nothing
// held keeps reading none.
func (l *Lock) LoadHeldDefinitions() error {
	for _, sp := range l.Servers {
		if len(sp.Held) > 0 {
			return l.LoadDefinitions()
		}
	}
	return nil
}

// Marshal is the lock's text: indented JSON, keys sorted, so a change of one
// definition is a small line diff.
func (l *Lock) Marshal() ([]byte, error) {
	if err := l.LoadDefinitions(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("trust: encode lock: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes the lock to path atomically: a temporary file in the same
// directory, synced, then renamed over the old one, so a reader (another
// replica, a watching gateway) sees the old file or the new, never half.
func (l *Lock) Save(path string) error {
	_, err := l.SaveText(path)
	return err
}

// SaveText is Save, returning the text written: a watcher of the file can
// tell its own write from someone else's by it.
func (l *Lock) SaveText(path string) ([]byte, error) {
	b, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	return b, writeAtomic(path, b)
}

// writeAtomic writes b to path through a synced temporary file renamed
// over it.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".toolfold.lock-*")
	if err != nil {
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("trust: write lock file: %w", err)
	}
	return nil
}

// Clone is a deep copy of the lock.
func (l *Lock) Clone() *Lock {
	c := &Lock{Version: l.Version, Servers: make(map[string]*ServerPins, len(l.Servers)), unread: l.unread}
	for name, sp := range l.Servers {
		c.Servers[name] = &ServerPins{Pinned: maps.Clone(sp.Pinned), Held: maps.Clone(sp.Held), Quarantined: sp.Quarantined}
	}
	return c
}

// ErrNotHeld is what an approval of a server or item that is not held
// matches (errors.Is): the caller's mistake, not a failure.
var ErrNotHeld = errors.New("not held")

type notHeldError struct{ msg string }

func (e *notHeldError) Error() string        { return e.msg }
func (e *notHeldError) Is(target error) bool { return target == ErrNotHeld }

func notHeld(msg string) error { return &notHeldError{msg} }

// Approval is one item re-pinned by [Lock.Approve].
type Approval struct {
	Server, Item         string
	OldDigest, NewDigest string
}

// Approve pins the held items of server named by keys (all of them when
// keys is empty) and ends its quarantine. A key may be "kind:name" or a bare
// tool name. It fails, naming what exists, when the server or an item is not
// held.
func (l *Lock) Approve(server string, keys ...string) ([]Approval, error) {
	sp := l.Servers[server]
	if sp == nil {
		return nil, notHeld(fmt.Sprintf("trust: no server %q in the lock (servers: %v)", server, slices.Sorted(maps.Keys(l.Servers))))
	}
	if len(keys) == 0 {
		keys = slices.Sorted(maps.Keys(sp.Held))
	}
	var out []Approval
	for _, k := range keys {
		kind, name := ParseKey(k)
		key := string(kind) + ":" + name
		h, ok := sp.Held[key]
		if !ok {
			return nil, notHeld(fmt.Sprintf("trust: %s has no held item %q (held: %v)", server, k, slices.Sorted(maps.Keys(sp.Held))))
		}
		out = append(out, Approval{Server: server, Item: key, OldDigest: sp.Pinned[key].Digest, NewDigest: h.Digest})
	}
	for _, a := range out {
		sp.Pinned[a.Item] = sp.Held[a.Item]
		delete(sp.Held, a.Item)
	}
	if len(sp.Held) == 0 {
		sp.Quarantined = false
	}
	return out, nil
}
