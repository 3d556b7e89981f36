package demo

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteAndReadFile(t *testing.T) {
	c := newClient(t)
	w := callOK[writeFileOutput](c, "write_file", map[string]any{"path": "notes/todo.txt", "content": "héllo\n"})
	if !w.Created || w.BytesWritten != 7 || w.Size != 7 || w.Path != "notes/todo.txt" {
		t.Errorf("write_file = %+v", w)
	}
	onDisk, err := os.ReadFile(filepath.Join(c.sandbox, "notes", "todo.txt"))
	if err != nil || string(onDisk) != "héllo\n" {
		t.Fatalf("the file on disk holds %q, %v", onDisk, err)
	}
	app := callOK[writeFileOutput](c, "write_file", map[string]any{"path": "notes/todo.txt", "content": "world\n", "append": true})
	if app.Created || app.Size != 13 {
		t.Errorf("append = %+v", app)
	}
	r := callOK[readFileOutput](c, "read_file", map[string]any{"path": "./notes//todo.txt"})
	if r.Content != "héllo\nworld\n" || r.Encoding != "utf-8" || !r.EOF || r.Size != 13 || r.Path != "notes/todo.txt" {
		t.Errorf("read_file = %+v", r)
	}

	// A window that ends inside "é" (2 bytes) stops before it, so the text
	// stays valid and the next read starts on the character.
	part := callOK[readFileOutput](c, "read_file", map[string]any{"path": "notes/todo.txt", "max_bytes": 2})
	if part.Content != "h" || part.BytesRead != 1 || part.NextOffset != 1 || part.EOF {
		t.Errorf("partial read = %+v", part)
	}
	rest := callOK[readFileOutput](c, "read_file", map[string]any{"path": "notes/todo.txt", "offset": part.NextOffset})
	if rest.Content != "éllo\nworld\n" || !rest.EOF {
		t.Errorf("continued read = %+v", rest)
	}

	replaced := callOK[writeFileOutput](c, "write_file", map[string]any{"path": "notes/todo.txt", "content": "new"})
	if replaced.Created || replaced.Size != 3 {
		t.Errorf("replace = %+v", replaced)
	}
	c.callErr("write_file", map[string]any{"path": "notes/todo.txt", "content": "x", "no_overwrite": true}, "already exists")

	binary := []byte{0, 1, 2, 0xff, 0xfe}
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "data.bin", "content": base64.StdEncoding.EncodeToString(binary), "encoding": "base64"})
	br := callOK[readFileOutput](c, "read_file", map[string]any{"path": "data.bin"})
	if br.Encoding != "base64" || br.Content != base64.StdEncoding.EncodeToString(binary) {
		t.Errorf("binary read = %+v", br)
	}

	c.callErr("read_file", map[string]any{"path": "missing.txt"}, `cannot read "missing.txt": it does not exist in the sandbox`)
	c.callErr("read_file", map[string]any{"path": "notes"}, "is a directory")
	c.callErr("read_file", map[string]any{"path": "data.bin", "offset": 99}, "past the end")
	c.callErr("write_file", map[string]any{"path": "notes", "content": "x"}, "is a directory")
	c.callErr("write_file", map[string]any{"path": "", "content": "x"}, "path is empty")
	c.callErr("write_file", map[string]any{"path": "x", "content": "%%%", "encoding": "base64"}, "not valid standard base64")
}

func TestListAndInfo(t *testing.T) {
	c := newClient(t)
	for _, f := range []string{"b.txt", "a/one.md", "a/two.md", "a/deep/three.md"} {
		callOK[writeFileOutput](c, "write_file", map[string]any{"path": f, "content": "x"})
	}
	top := callOK[listFilesOutput](c, "list_files", map[string]any{})
	if got := entryPaths(top.Entries); !slices.Equal(got, []string{"a", "b.txt"}) || top.Entries[0].Type != "directory" || top.Entries[1].Size != 1 {
		t.Errorf("list_files = %+v", top)
	}
	all := callOK[listFilesOutput](c, "list_files", map[string]any{"path": "a", "recursive": true})
	if got := entryPaths(all.Entries); !slices.Equal(got, []string{"a/deep", "a/deep/three.md", "a/one.md", "a/two.md"}) {
		t.Errorf("recursive list = %v", got)
	}
	capped := callOK[listFilesOutput](c, "list_files", map[string]any{"recursive": true, "max_entries": 2})
	if capped.Count != 2 || !capped.Truncated {
		t.Errorf("capped list = %+v", capped)
	}
	c.callErr("list_files", map[string]any{"path": "b.txt"}, "is a file, not a directory")
	c.callErr("list_files", map[string]any{"path": "nope"}, "does not exist")

	info := callOK[fileInfoOutput](c, "file_info", map[string]any{"path": "b.txt"})
	sum := sha256.Sum256([]byte("x"))
	if info.Type != "file" || info.Size != 1 || info.SHA256 != hex.EncodeToString(sum[:]) || info.IsText == nil || !*info.IsText || info.Mode != "-rw-r--r--" {
		t.Errorf("file_info(b.txt) = %+v", info)
	}
	dir := callOK[fileInfoOutput](c, "file_info", map[string]any{"path": "a"})
	if dir.Type != "directory" || dir.Entries == nil || *dir.Entries != 3 || dir.SHA256 != "" {
		t.Errorf("file_info(a) = %+v", dir)
	}
	if err := os.Symlink("b.txt", filepath.Join(c.sandbox, "link")); err != nil {
		t.Skipf("cannot create symbolic links here: %v", err)
	}
	link := callOK[fileInfoOutput](c, "file_info", map[string]any{"path": "link"})
	if link.Type != "symlink" || link.SymlinkTarget != "b.txt" {
		t.Errorf("file_info(link) = %+v", link)
	}
}

func entryPaths(entries []fileEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

func TestMakeMoveDelete(t *testing.T) {
	c := newClient(t)
	mk := callOK[makeDirOutput](c, "make_directory", map[string]any{"path": "reports/2024"})
	again := callOK[makeDirOutput](c, "make_directory", map[string]any{"path": "reports/2024"})
	if !mk.Created || again.Created {
		t.Errorf("make_directory = %+v then %+v", mk, again)
	}
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "draft.txt", "content": "v1"})
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "final.txt", "content": "v0"})
	c.callErr("make_directory", map[string]any{"path": "draft.txt"}, "a file with that name exists")

	mv := callOK[moveFileOutput](c, "move_file", map[string]any{"from": "draft.txt", "to": "reports/2024/q1.txt"})
	if mv.Overwritten {
		t.Errorf("move_file = %+v", mv)
	}
	if got := callOK[readFileOutput](c, "read_file", map[string]any{"path": "reports/2024/q1.txt"}); got.Content != "v1" {
		t.Errorf("moved file holds %q", got.Content)
	}
	c.callErr("read_file", map[string]any{"path": "draft.txt"}, "does not exist")
	c.callErr("move_file", map[string]any{"from": "reports/2024/q1.txt", "to": "final.txt"}, "pass overwrite: true")
	over := callOK[moveFileOutput](c, "move_file", map[string]any{"from": "reports/2024/q1.txt", "to": "final.txt", "overwrite": true})
	if !over.Overwritten {
		t.Errorf("overwrite move = %+v", over)
	}
	c.callErr("move_file", map[string]any{"from": "final.txt", "to": "reports"}, "a directory is there", "reports/final.txt")
	c.callErr("move_file", map[string]any{"from": "nope", "to": "x"}, "does not exist")

	c.callErr("delete_file", map[string]any{"path": "reports"}, "holds 1 entries", "recursive: true")
	del := callOK[deleteFileOutput](c, "delete_file", map[string]any{"path": "reports", "recursive": true})
	if del.Type != "directory" || del.Removed != 2 {
		t.Errorf("recursive delete = %+v", del)
	}
	one := callOK[deleteFileOutput](c, "delete_file", map[string]any{"path": "final.txt"})
	if one.Type != "file" || one.Removed != 1 {
		t.Errorf("delete_file = %+v", one)
	}
	if entries, _ := os.ReadDir(c.sandbox); len(entries) != 0 {
		t.Errorf("the sandbox still holds %v", entries)
	}
	c.callErr("delete_file", map[string]any{"path": "."}, "root itself cannot be deleted")
	c.callErr("delete_file", map[string]any{"path": "final.txt"}, "does not exist")
}

// TestSandboxEscapes tries every way out of the sandbox through every tool
// that takes a path: none may read, write, list or delete anything outside.
func TestSandboxEscapes(t *testing.T) {
	c := newClient(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlinks := true
	if err := os.Symlink(secret, filepath.Join(c.sandbox, "to_secret")); err != nil {
		symlinks = false
	}
	if symlinks {
		if err := os.Symlink(outside, filepath.Join(c.sandbox, "to_outside")); err != nil {
			t.Fatal(err)
		}
		// A relative link that climbs out is just as much an escape.
		if err := os.Symlink(filepath.Join("..", filepath.Base(outside)), filepath.Join(c.sandbox, "relative_out")); err != nil {
			t.Fatal(err)
		}
	}

	type attempt struct {
		tool string
		args map[string]any
		want string
	}
	attempts := []attempt{
		{"read_file", map[string]any{"path": "../x"}, "leads outside the sandbox"},
		{"read_file", map[string]any{"path": "a/../../x"}, "leads outside the sandbox"},
		{"read_file", map[string]any{"path": "/etc/passwd"}, `is absolute, but paths are relative to the sandbox root: write it like "etc/passwd"`},
		{"read_file", map[string]any{"path": secret}, "is absolute"},
		{"write_file", map[string]any{"path": "../evil.txt", "content": "x"}, "leads outside the sandbox"},
		{"write_file", map[string]any{"path": "/tmp/evil.txt", "content": "x"}, "is absolute"},
		{"list_files", map[string]any{"path": ".."}, "leads outside the sandbox"},
		{"list_files", map[string]any{"path": "/"}, "is absolute"},
		{"file_info", map[string]any{"path": "../"}, "leads outside the sandbox"},
		{"delete_file", map[string]any{"path": "../" + filepath.Base(c.sandbox)}, "leads outside the sandbox"},
		{"make_directory", map[string]any{"path": "../newdir"}, "leads outside the sandbox"},
		{"move_file", map[string]any{"from": "../x", "to": "y"}, "leads outside the sandbox"},
		{"move_file", map[string]any{"from": "y", "to": "/tmp/y"}, "is absolute"},
		{"glob_files", map[string]any{"pattern": "../*"}, `contains ".."`},
		{"glob_files", map[string]any{"pattern": "/etc/*"}, "is absolute"},
		{"grep_files", map[string]any{"pattern": "x", "glob": "../**"}, `contains ".."`},
	}
	if symlinks {
		attempts = append(attempts,
			attempt{"read_file", map[string]any{"path": "to_secret"}, "leads outside the sandbox through a symbolic link"},
			attempt{"read_file", map[string]any{"path": "to_outside/secret.txt"}, "through a symbolic link"},
			attempt{"read_file", map[string]any{"path": "relative_out/secret.txt"}, "through a symbolic link"},
			attempt{"write_file", map[string]any{"path": "to_secret", "content": "pwned"}, "through a symbolic link"},
			attempt{"write_file", map[string]any{"path": "to_outside/new.txt", "content": "pwned"}, "through a symbolic link"},
			attempt{"list_files", map[string]any{"path": "to_outside"}, "through a symbolic link"},
			attempt{"make_directory", map[string]any{"path": "to_outside/sub"}, "through a symbolic link"},
			attempt{"move_file", map[string]any{"from": "to_outside/secret.txt", "to": "stolen.txt"}, "through a symbolic link"},
			attempt{"delete_file", map[string]any{"path": "to_outside/secret.txt"}, "through a symbolic link"},
		)
	}
	for _, a := range attempts {
		c.callErr(a.tool, a.args, a.want)
	}

	if data, err := os.ReadFile(secret); err != nil || string(data) != "top secret" {
		t.Errorf("the file outside was touched: %q, %v", data, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("something was created outside the sandbox: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(c.sandbox), "evil.txt")); err == nil {
		t.Error("evil.txt was written next to the sandbox")
	}

	if symlinks {
		// Searching walks the sandbox without following links out of it.
		found := callOK[grepFilesOutput](c, "grep_files", map[string]any{"pattern": "secret"})
		if found.Count != 0 {
			t.Errorf("grep_files found %+v through a link", found.Matches)
		}
		globbed := callOK[globFilesOutput](c, "glob_files", map[string]any{"pattern": "**/*.txt"})
		if globbed.Count != 0 {
			t.Errorf("glob_files found %+v through a link", globbed.Matches)
		}
		// Deleting the link itself is fine: it is inside the sandbox, and
		// what it points to stays.
		callOK[deleteFileOutput](c, "delete_file", map[string]any{"path": "to_secret"})
		if _, err := os.Stat(secret); err != nil {
			t.Errorf("deleting the link removed its target: %v", err)
		}
	}
}

func TestCleanPath(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", ".", ""},
		{".", ".", ""},
		{"a/b/../c", "a/c", ""},
		{`a\b`, "a/b", ""},
		{"./x/", "x", ""},
		{"..", "", "leads outside"},
		{"a/../..", "", "leads outside"},
		{"/x", "", "is absolute"},
		{`\x`, "", "is absolute"},
	}
	for _, tt := range tests {
		got, err := cleanPath("path", tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("cleanPath(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("cleanPath(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestGlobFiles(t *testing.T) {
	c := newClient(t)
	for _, f := range []string{"readme.md", "docs/guide.md", "docs/api/index.md", "docs/api/notes.txt", "src/main.go", "src/util/strings.go"} {
		callOK[writeFileOutput](c, "write_file", map[string]any{"path": f, "content": "x"})
	}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*.md", []string{"docs/api/index.md", "docs/guide.md", "readme.md"}},
		{"docs/*.md", []string{"docs/guide.md"}},
		{"docs/**/*.md", []string{"docs/api/index.md", "docs/guide.md"}},
		{"**/util/*", []string{"src/util/strings.go"}},
		{"src/**", []string{"src", "src/main.go", "src/util", "src/util/strings.go"}}, // ** also matches no directory at all
		{"docs/api/[in]*.*", []string{"docs/api/index.md", "docs/api/notes.txt"}},
		{"nothing*", []string{}},
	}
	for _, tt := range tests {
		got := callOK[globFilesOutput](c, "glob_files", map[string]any{"pattern": tt.pattern})
		if paths := entryPaths(got.Matches); !slices.Equal(paths, tt.want) && !(len(paths) == 0 && len(tt.want) == 0) {
			t.Errorf("glob_files(%q) = %v, want %v", tt.pattern, paths, tt.want)
		}
	}
	capped := callOK[globFilesOutput](c, "glob_files", map[string]any{"pattern": "**", "max_results": 3})
	if capped.Count != 3 || !capped.Truncated {
		t.Errorf("capped glob = %+v", capped)
	}
	c.callErr("glob_files", map[string]any{"pattern": "docs/[a"}, "not a valid glob")
}

func TestGrepFiles(t *testing.T) {
	c := newClient(t)
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "main.go", "content": "package main\n\n// TODO: tidy\nfunc main() {}\n"})
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "docs/plan.md", "content": "# Plan\r\n- todo: write docs\r\n"})
	callOK[writeFileOutput](c, "write_file", map[string]any{"path": "blob.bin", "content": base64.StdEncoding.EncodeToString([]byte("TODO\x00binary")), "encoding": "base64"})

	got := callOK[grepFilesOutput](c, "grep_files", map[string]any{"pattern": "todo", "ignore_case": true})
	want := []grepMatch{{"docs/plan.md", 2, "- todo: write docs"}, {"main.go", 3, "// TODO: tidy"}}
	if !slices.Equal(got.Matches, want) || got.FilesSearched != 2 || got.FilesMatched != 2 || got.Skipped != 1 {
		t.Errorf("grep_files = %+v", got)
	}
	onlyGo := callOK[grepFilesOutput](c, "grep_files", map[string]any{"pattern": `^func \w+`, "glob": "*.go"})
	if onlyGo.Count != 1 || onlyGo.Matches[0].Line != 4 || onlyGo.FilesSearched != 1 {
		t.Errorf("grep_files with glob = %+v", onlyGo)
	}
	capped := callOK[grepFilesOutput](c, "grep_files", map[string]any{"pattern": ".", "max_results": 2})
	if capped.Count != 2 || !capped.Truncated {
		t.Errorf("capped grep = %+v", capped)
	}
	c.callErr("grep_files", map[string]any{"pattern": "(unclosed"}, "not a valid Go (RE2) regular expression")
}

// TestDefaultSandboxDir checks the documented default and its override.
func TestDefaultSandboxDir(t *testing.T) {
	t.Setenv(SandboxEnv, "")
	if d := DefaultSandboxDir(); !strings.HasSuffix(filepath.ToSlash(d), "toolfold/demo-sandbox") {
		t.Errorf("DefaultSandboxDir() = %q", d)
	}
	t.Setenv(SandboxEnv, "/srv/sandbox")
	if d := DefaultSandboxDir(); d != "/srv/sandbox" {
		t.Errorf("with %s set, DefaultSandboxDir() = %q", SandboxEnv, d)
	}
}

// TestSandboxCreatedOnFirstUse checks that building the server touches
// nothing on disk and the first files call creates the sandbox.
func TestSandboxCreatedOnFirstUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	New(&Options{SandboxDir: dir})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("New created the sandbox: %v", err)
	}
	sb := &sandbox{dir: dir}
	out, err := sb.list(t.Context(), listFilesInput{})
	if err != nil || out.Count != 0 {
		t.Fatalf("listing a fresh sandbox: %+v, %v", out, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("the sandbox was not created: %v", err)
	}
}
