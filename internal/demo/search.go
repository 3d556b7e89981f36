package demo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

func addSearchTools(g *toolfold.Group, sb *sandbox) {
	tool(g, &mcp.Tool{
		Name: "glob_files",
		Description: "Find files and directories in the sandbox whose path matches a glob: * and ? within a name, ** across directories (e.g. **/*.md, reports/*/2024-??.csv); a pattern without / matches names at any depth. " +
			"Returns the matching paths with type and size.",
		Annotations: readOnly("Glob files"),
	}, sb.glob)

	tool(g, &mcp.Tool{
		Name:        "grep_files",
		Description: "Search the text files of the sandbox for lines matching a regular expression (Go RE2 syntax), optionally only in files matching a glob. Returns each matching line with its file and line number.",
		Annotations: readOnly("Grep files"),
	}, sb.grep)
}

// Bounds on a search, so that a huge sandbox cannot stall the server.
const (
	maxWalkEntries = 100_000
	maxGrepFile    = 10 << 20
	maxGrepLine    = 500
)

// globPattern is a compiled glob over slash-separated paths.
type globPattern struct {
	segments []string
	anyDepth bool // a pattern without "/" matches the base name anywhere
}

func compileGlob(param, pattern string) (*globPattern, error) {
	p := strings.TrimSpace(strings.ReplaceAll(pattern, `\`, "/"))
	p = strings.TrimPrefix(p, "./")
	switch {
	case p == "":
		return nil, errEmpty(param, `a glob such as "**/*.txt"`)
	case strings.HasPrefix(p, "/"):
		return nil, fmt.Errorf("%s %q is absolute, but patterns are relative to the sandbox root: write it like %q", param, pattern, strings.TrimLeft(p, "/"))
	}
	g := &globPattern{segments: strings.Split(p, "/"), anyDepth: !strings.Contains(p, "/")}
	for _, s := range g.segments {
		if s == ".." {
			return nil, fmt.Errorf("%s %q contains \"..\": patterns cannot leave the sandbox", param, pattern)
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%s %q is not a valid glob (%w): check its [ ] brackets, and escape literal *, ? or [ with \\", param, pattern, err)
		}
	}
	return g, nil
}

func (g *globPattern) match(p string) bool {
	if g.anyDepth {
		ok, _ := path.Match(g.segments[0], path.Base(p))
		return ok
	}
	return matchSegments(g.segments, strings.Split(p, "/"))
}

// matchSegments matches path segments against pattern segments, where "**"
// stands for any number of segments, none included.
func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// Collapse runs of ** and try every split point.
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// walk visits every entry under the sandbox root (the root excluded) in
// lexical order, skipping what cannot be read, until fn returns an error or
// maxWalkEntries is reached.
func walk(root *os.Root, fn func(p string, d fs.DirEntry) error) (truncated bool, err error) {
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if seen++; seen > maxWalkEntries {
			truncated = true
			return fs.SkipAll
		}
		return fn(p, d)
	})
	if errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return truncated, err
}

type globFilesInput struct {
	Pattern    string `json:"pattern" jsonschema:"the glob, relative to the sandbox root: * and ? match within a name, [abc] one of a set, ** any number of directories; without a / it matches names at any depth (*.txt finds every .txt file)"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"return at most this many paths; default 200, at most 5000"`
}

type globFilesOutput struct {
	Pattern   string      `json:"pattern" jsonschema:"the pattern as given"`
	Count     int         `json:"count" jsonschema:"how many paths are returned"`
	Truncated bool        `json:"truncated" jsonschema:"true when there were more matches than max_results, or the sandbox was too large to search whole"`
	Matches   []fileEntry `json:"matches" jsonschema:"the matching paths in lexical order"`
}

func (sb *sandbox) glob(_ context.Context, in globFilesInput) (globFilesOutput, error) {
	g, err := compileGlob("pattern", in.Pattern)
	if err != nil {
		return globFilesOutput{}, err
	}
	limit, err := limitOr(in.MaxResults, 200, 5000, "max_results")
	if err != nil {
		return globFilesOutput{}, err
	}
	out := globFilesOutput{Pattern: in.Pattern, Matches: []fileEntry{}}
	err = sb.with(func(root *os.Root) error {
		truncated, err := walk(root, func(p string, d fs.DirEntry) error {
			if !g.match(p) {
				return nil
			}
			if len(out.Matches) >= limit {
				out.Truncated = true
				return fs.SkipAll
			}
			e := fileEntry{Path: p, Type: fileType(d.Type())}
			if info, err := d.Info(); err == nil {
				e.Modified = info.ModTime().UTC()
				if !info.IsDir() {
					e.Size = info.Size()
				}
			}
			out.Matches = append(out.Matches, e)
			return nil
		})
		out.Truncated = out.Truncated || truncated
		return err
	})
	out.Count = len(out.Matches)
	return out, err
}

type grepFilesInput struct {
	Pattern    string `json:"pattern" jsonschema:"a Go RE2 regular expression to look for in each line, e.g. TODO|FIXME or func \\w+\\("`
	Glob       string `json:"glob,omitempty" jsonschema:"only search files whose path matches this glob, e.g. *.go or docs/**/*.md; default every file"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"match letters regardless of case"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"return at most this many lines; default 100, at most 1000"`
}

type grepMatch struct {
	Path string `json:"path" jsonschema:"the file, relative to the sandbox root"`
	Line int    `json:"line" jsonschema:"the line number, from 1"`
	Text string `json:"text" jsonschema:"the line (cut to 500 characters)"`
}

type grepFilesOutput struct {
	Count         int         `json:"count" jsonschema:"how many lines are returned"`
	FilesSearched int         `json:"files_searched" jsonschema:"how many text files were searched"`
	FilesMatched  int         `json:"files_matched" jsonschema:"how many of them had a match"`
	Skipped       int         `json:"skipped" jsonschema:"files left out because they are binary, larger than 10 MiB or unreadable"`
	Truncated     bool        `json:"truncated" jsonschema:"true when there were more matches than max_results, or the sandbox was too large to search whole"`
	Matches       []grepMatch `json:"matches" jsonschema:"the matching lines, by file and line"`
}

func (sb *sandbox) grep(_ context.Context, in grepFilesInput) (grepFilesOutput, error) {
	re, err := compileRegex(in.Pattern, in.IgnoreCase)
	if err != nil {
		return grepFilesOutput{}, err
	}
	var filter *globPattern
	if strings.TrimSpace(in.Glob) != "" {
		if filter, err = compileGlob("glob", in.Glob); err != nil {
			return grepFilesOutput{}, err
		}
	}
	limit, err := limitOr(in.MaxResults, 100, 1000, "max_results")
	if err != nil {
		return grepFilesOutput{}, err
	}
	out := grepFilesOutput{Matches: []grepMatch{}}
	err = sb.with(func(root *os.Root) error {
		truncated, err := walk(root, func(p string, d fs.DirEntry) error {
			if !d.Type().IsRegular() || (filter != nil && !filter.match(p)) {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() > maxGrepFile {
				out.Skipped++
				return nil
			}
			data, err := fs.ReadFile(root.FS(), p)
			// Like grep, a NUL byte near the start means binary data.
			if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
				out.Skipped++
				return nil
			}
			out.FilesSearched++
			matched := false
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 0, 64<<10), maxGrepFile)
			for n := 1; sc.Scan(); n++ {
				line := strings.TrimRight(sc.Text(), "\r")
				if !re.MatchString(line) {
					continue
				}
				if len(out.Matches) >= limit {
					out.Truncated = true
					return fs.SkipAll
				}
				if !matched {
					matched = true
					out.FilesMatched++
				}
				out.Matches = append(out.Matches, grepMatch{Path: p, Line: n, Text: cutRunes(line, maxGrepLine)})
			}
			return nil
		})
		out.Truncated = out.Truncated || truncated
		return err
	})
	out.Count = len(out.Matches)
	return out, err
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
