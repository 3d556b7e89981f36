package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/trust"
	"github.com/toolfold/toolfold/internal/upstream"
)

// trustMemoPath is where the gate of the lock at lockPath remembers its
// judgements (trust.Memo), in the cache directory; "" (none) without one.
// It is named after the lock, so two configs sharing the cache directory
// keep their own.
func trustMemoPath(cacheDir, lockPath string) string {
	if cacheDir == "" {
		return ""
	}
	abs, err := filepath.Abs(lockPath)
	if err != nil {
		abs = lockPath
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cacheDir, "trust", "judged-"+hex.EncodeToString(sum[:8])+".json")
}

// buildIdentity names the running binary by its path, size and time:
// what a memo remembers (a scan's findings, derived groups) was worked out
// by code that an upgrade may change, so a memo is used only by the build
// that wrote it. "" when the binary cannot be found: then none is kept.
func buildIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
}

// trustInputHash is SHA-256 over every field a server's items are made
// from (trustItems): each tool's name, title, description, schemas and
// annotations, the groups and the instructions, each length-prefixed. Equal
// hashes mean equal items, so a memo made from one serves the other; a byte
// changed anywhere means the items are made again. Schemas read from the
// cache or the wire are JSON text and hashed as they are, with no decoding.
func trustInputHash(tools []*mcp.Tool, groups []*upstream.Group, instr string) string {
	h := sha256.New()
	// scratch carries each length prefix, and each string: the hash takes
	// bytes, and a conversion per field would copy a catalog's every text.
	var scratch []byte
	// tagged hashes tag (if not 0) and b as one length-prefixed field.
	tagged := func(tag byte, b []byte) {
		n := len(b)
		if tag != 0 {
			n++
		}
		scratch = append(strconv.AppendInt(scratch[:0], int64(n), 10), ':')
		if tag != 0 {
			scratch = append(scratch, tag)
		}
		h.Write(scratch)
		h.Write(b)
	}
	field := func(b []byte) { tagged(0, b) }
	str := func(s string) {
		scratch = append(strconv.AppendInt(scratch[:0], int64(len(s)), 10), ':')
		scratch = append(scratch, s...)
		h.Write(scratch)
	}
	value := func(v any) {
		switch x := v.(type) {
		case nil:
			field(nil)
		case json.RawMessage:
			tagged('r', x)
		default:
			b, err := json.Marshal(x)
			if err != nil {
				// Not encodable: trustItems leaves the tool out, and will
				// again for the same value.
				b = []byte("unencodable: " + err.Error())
			}
			tagged('v', b)
		}
	}
	str("toolfold-trust-input-v1")
	str(strconv.Itoa(len(tools)))
	for _, t := range tools {
		str(t.Name)
		str(t.Title)
		str(t.Description)
		value(t.InputSchema)
		value(t.OutputSchema)
		if t.Annotations == nil {
			field(nil)
		} else {
			value(t.Annotations)
		}
	}
	gb, err := json.Marshal(groups)
	if err != nil {
		gb = []byte("unencodable: " + err.Error())
	}
	field(gb)
	str(instr)
	return hex.EncodeToString(h.Sum(nil))
}

// memoItems are server's items as remembered for input, when the memo has
// them and every one is pinned as it is (so judging them needs no
// definition); the scanners are taught what the scan found in them.
// known reports whether the memo has them at all, pinned or not: then
// they need not be remembered again.
func (g *trustGate) memoItems(server, input string) (items []trust.Item, ok, known bool) {
	if g.judged == nil || g.loadErr != nil {
		return nil, false, false
	}
	items, known = g.judged.Items(server, input)
	if !known || !trust.AllPinned(g.lock, server, items) {
		return nil, false, known
	}
	g.judged.Teach(server, &g.scanner, &g.listingScanner)
	return items, true, true
}

// loadJudged reads the memo, as the gate is made.
func (g *trustGate) loadJudged() {
	if g.memoPath == "" {
		return
	}
	build := buildIdentity()
	if build == "" {
		return // no build to tie a memo to: judge item by item
	}
	m, err := trust.LoadMemo(g.memoPath, build)
	if err != nil {
		g.log.Info("trust: every definition is judged item by item this start", "error", err)
	}
	g.judged = m
}

// rememberJudged records the items made anew (fresh, by input hash) and
// writes the memo when it changed; g.mu is held.
func (g *trustGate) rememberJudged(servers []string, fresh map[string]string, lists map[string][]trust.Item) {
	if g.judged == nil || g.closed {
		return
	}
	for name, hash := range fresh {
		g.judged.Remember(name, hash, lists[name], &g.scanner)
	}
	configured := make(map[string]bool, len(servers))
	for _, name := range servers {
		configured[name] = true
	}
	g.judged.Forget(func(name string) bool { return configured[name] })
	if !g.judged.Dirty() {
		return
	}
	if err := g.judged.Save(g.memoPath); err != nil {
		g.log.Warn("trust: the memo of judged definitions cannot be written; the next start judges every definition again", "error", err)
	}
}
