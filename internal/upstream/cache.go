package upstream

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
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	fastjson "github.com/segmentio/encoding/json"
	"github.com/toolfold/toolfold/internal/config"
	"github.com/toolfold/toolfold/internal/jsondepth"
)

// cacheFormat is bumped when the file layout changes; files of another format
// are ignored (and overwritten on the next refresh).
// Format 2 added the groups, and lists read while declaring the groups
// extension (a server that serves it lists fewer tools to such a client);
// format-1 files of servers without the extension are still read.
const cacheFormat = 2

// cacheEntry is one server's cache file. It holds what the server said about
// itself, never its config: the key is a hash, so env values and headers (which
// are secrets) never reach the disk.
type cacheEntry struct {
	Format int `json:"format"`
	// Server is the server's name, for a person looking at the directory.
	Server string `json:"server"`
	// Key is the hash of the connection config the list was obtained with.
	Key     string    `json:"key"`
	SavedAt time.Time `json:"savedAt"`
	// Init is what the server answered to initialize: protocol version, server
	// info, capabilities, instructions.
	Init  *mcp.InitializeResult `json:"init,omitempty"`
	Tools []*mcp.Tool           `json:"tools"`
	// Groups are what the server declared through the groups extension;
	// their tools are in Tools.
	Groups []*Group `json:"groups,omitempty"`
}

// cacheFile reads a cache file with the tools' schemas kept as JSON text
// (see rawSchemas): its Tools shadow the entry's.
type cacheFile struct {
	cacheEntry
	Tools []cachedTool `json:"tools"`
}

// cachedTool is a tool whose schemas shadow mcp.Tool's, so they are read as
// text and never decoded into maps.
type cachedTool struct {
	*mcp.Tool
	InputSchema  textRef `json:"inputSchema"`
	OutputSchema textRef `json:"outputSchema,omitempty"`
}

// textRef is a JSON value's text in the data being decoded, not a copy: it
// is valid only while that data is, and tools copies it out (compacted)
// before load returns.
type textRef []byte

func (t *textRef) UnmarshalJSON(b []byte) error {
	*t = b
	return nil
}

// tools are the file's tools, their schemas packed into one array; a
// schema absent or null is nil, as a decoded map would have been.
func (f *cacheFile) tools() []*mcp.Tool {
	var p packer
	// One array of the size the texts come to, near enough (the cache
	// writes them compact): grown text by text, its copies and their
	// zeroing were most of a cached start's reading of the cache.
	size := 0
	for _, c := range f.Tools {
		size += len(schemaRef(c.InputSchema)) + len(schemaRef(c.OutputSchema))
	}
	p.buf.Grow(size)
	for _, c := range f.Tools {
		p.addValid(schemaRef(c.InputSchema))
		p.addValid(schemaRef(c.OutputSchema))
	}
	texts := p.texts()
	out := make([]*mcp.Tool, len(f.Tools))
	for i, c := range f.Tools {
		t := c.Tool
		if t == nil {
			t = &mcp.Tool{}
		}
		t.InputSchema, t.OutputSchema = nil, nil
		if in := texts[2*i]; in != nil {
			t.InputSchema = in
		}
		if o := texts[2*i+1]; o != nil {
			t.OutputSchema = o
		}
		out[i] = t
	}
	return out
}

func schemaRef(t textRef) []byte {
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	return t
}

// cacheKey hashes everything that decides which process or endpoint is reached
// and how, so a changed command, argument, env value, url or header means a new
// key (and a cache miss), while prefix, include/exclude, group, timeout and lazy,
// which do not change what the server lists, keep the key.
func cacheKey(cfg config.ServerConfig) string {
	h := sha256.New()
	write := func(parts ...string) {
		for _, p := range parts {
			// Length-prefixed, so ("ab","c") and ("a","bc") differ.
			fmt.Fprintf(h, "%d:%s;", len(p), p)
		}
	}
	writeMap := func(label string, m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		write(label, fmt.Sprint(len(keys)))
		for _, k := range keys {
			write(k, m[k])
		}
	}
	write("toolfold-upstream-v1", string(cfg.Transport), cfg.Command, cfg.Cwd, cfg.URL)
	write("args", fmt.Sprint(len(cfg.Args)))
	write(cfg.Args...)
	writeMap("env", cfg.Env)
	writeMap("headers", cfg.Headers)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// diskCache reads and writes cache files in one directory. A zero dir disables it.
type diskCache struct {
	dir string
}

func (c diskCache) path(server, key string) string {
	return filepath.Join(c.dir, fileSafe(server)+"-"+key+".json")
}

// load returns the cached entry for server under key. A missing file is (nil,
// nil); an unreadable or corrupt one is (nil, err) for the caller to warn about.
func (c diskCache) load(server, key string) (*cacheEntry, error) {
	if c.dir == "" {
		return nil, nil
	}
	p := c.path(server, key)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tool cache %s: %w", p, err)
	}
	var f cacheFile
	if !jsondepth.Within(data, jsondepth.Max) {
		return nil, fmt.Errorf("the tool cache %s is corrupt (nested deeper than %d levels); it is ignored and will be rewritten when the server next starts", p, jsondepth.Max)
	}
	if err := fastjson.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the tool cache %s is corrupt (%v); it is ignored and will be rewritten when the server next starts", p, err)
	}
	e := f.cacheEntry
	e.Tools = f.tools()
	// A format-1 file is as good as new for a server without the groups
	// extension (it would have been written the same), so upgrading toolfold
	// does not start every server once.
	current := e.Format == cacheFormat || e.Format == 1 && !advertisesGroups(e.Init)
	if !current || e.Key != key {
		return nil, fmt.Errorf("the tool cache %s is from another version of toolfold; it is ignored and will be rewritten", p)
	}
	return &e, nil
}

// save writes the entry atomically: a reader (another toolfold starting at the
// same moment) sees the old file or the new one, never half of one.
func (c diskCache) save(e *cacheEntry) error {
	if c.dir == "" {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("creating the tool cache directory: %w", err)
	}
	// Without HTML escaping, as the SDK writes messages: a schema read back
	// is then the very text a fresh list gives (see rawSchemas). Not
	// indented: every start reads every file, and indentation made
	// thousands of tools' deeply nested schemas several times the bytes to
	// read, bound and decode (files written indented are still read).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encoding the tool cache of %q: %w", e.Server, err)
	}
	data := buf.Bytes()
	final := c.path(e.Server, e.Key)
	tmp, err := os.CreateTemp(c.dir, ".tmp-*.json")
	if err != nil {
		return fmt.Errorf("writing the tool cache of %q: %w", e.Server, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the tool cache of %q: %w", e.Server, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the tool cache of %q: %w", e.Server, err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fmt.Errorf("writing the tool cache of %q: %w", e.Server, err)
	}
	return nil
}

// defaultCacheDir is os.UserCacheDir()/toolfold/catalog, or "" (no disk cache)
// when the platform has no cache directory.
func defaultCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "toolfold", "catalog")
}

// fileSafe keeps a server name readable in a file name without letting it
// escape the directory or confuse a file system.
func fileSafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			b[i] = '_'
		}
	}
	s := string(b)
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" || s[0] == '.' {
		s = "_" + s
	}
	return s
}

// loadCaches reads the cache files of servers in parallel, at most
// GOMAXPROCS at a time: a cached start of hundreds of servers is mostly
// decoding, which one goroutine would do on one core. Each server still
// admits its list (loadCache, then admit) exactly as when read alone.
func loadCaches(servers []*server) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, s := range servers {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s.loadCache()
		})
	}
	wg.Wait()
}
