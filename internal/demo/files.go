package demo

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
)

// sandbox is the one directory the files tools may touch. Every access goes
// through an os.Root, which resolves each path component itself and
// refuses to leave the directory by "..", an absolute path or a symbolic
// link, even one created after the check (no time-of-check races).
//
// The root is opened per call rather than held open: a call costs one
// extra open(2), the server never leaks a descriptor (it has no Close), and
// a sandbox directory deleted and recreated behind the server's back still
// works.
type sandbox struct {
	dir string
}

func (s *sandbox) open() (*os.Root, error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the sandbox directory %s: %w; point %s at a writable directory", s.dir, err, SandboxEnv)
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the sandbox directory %s: %w", s.dir, err)
	}
	return root, nil
}

// with runs fn with the sandbox root open.
func (s *sandbox) with(fn func(root *os.Root) error) error {
	root, err := s.open()
	if err != nil {
		return err
	}
	defer root.Close()
	return fn(root)
}

// cleanPath checks a path an agent gave and returns it in the slash form
// used in results ("." for the root). It refuses what can never be inside
// the sandbox, with a message that says how to write the path instead;
// symbolic links are left to os.Root, which refuses to follow them out.
func cleanPath(param, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return ".", nil
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(slashed, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%s %q is absolute, but paths are relative to the sandbox root: write it like %q", param, p, strings.TrimLeft(slashed, "/"))
	}
	clean := path.Clean(slashed)
	if !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", fmt.Errorf("%s %q leads outside the sandbox: paths must stay inside the sandbox root (remove the \"..\")", param, p)
	}
	return clean, nil
}

// fileError words an error from the file system for the agent.
func fileError(op, p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot %s %q: it does not exist in the sandbox; list_files or glob_files show what is there", op, p)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("cannot %s %q: it already exists", op, p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot %s %q: permission denied by the operating system", op, p)
	case strings.Contains(err.Error(), "escapes from parent"):
		// os.Root's error for a symbolic link (or "..") that points out of
		// the sandbox; it has no exported sentinel.
		return fmt.Errorf("cannot %s %q: the path leads outside the sandbox through a symbolic link, and only files inside the sandbox can be used", op, p)
	}
	return fmt.Errorf("cannot %s %q: %w", op, p, err)
}

func addFilesTools(g *toolfold.Group, sb *sandbox) {
	tool(g, &mcp.Tool{
		Name:        "list_files",
		Description: "List the files and directories in a sandbox directory (the root by default), optionally recursively. Returns each entry's path, type, size and modification time.",
		Annotations: readOnly("List files"),
	}, sb.list)

	tool(g, &mcp.Tool{
		Name:        "read_file",
		Description: "Read a file in the sandbox, whole or from a byte offset. Returns the content as text (or base64 for binary data), its size and whether more remains.",
		Annotations: readOnly("Read file"),
	}, sb.read)

	tool(g, &mcp.Tool{
		Name:        "write_file",
		Description: "Write text (or base64 data) to a file in the sandbox, creating it and its directories as needed; replaces the file's content unless append is set. Returns the bytes written and the new size.",
		// Replacing a file's content loses it, hence destructive.
		Annotations: destructive("Write file", false),
		InputSchema: schemaFor[writeFileInput](func(p map[string]*jsonschema.Schema) { enum(p["encoding"], "utf-8", "base64") }),
	}, sb.write)

	tool(g, &mcp.Tool{
		Name:        "file_info",
		Description: "Describe a file or directory in the sandbox without reading it: type, size, permissions, modification time, symbolic link target, entry count for a directory and SHA-256 for a file up to 16 MiB.",
		Annotations: readOnly("File info"),
	}, sb.info)

	tool(g, &mcp.Tool{
		Name:        "make_directory",
		Description: "Create a directory in the sandbox, with any missing parents. Returns whether it was created (false when it already existed).",
		Annotations: additive("Make directory", true),
	}, sb.mkdir)

	tool(g, &mcp.Tool{
		Name:        "move_file",
		Description: "Move or rename a file or directory inside the sandbox. Refuses to replace an existing target unless overwrite is set. Returns the new path.",
		Annotations: destructive("Move file", false),
	}, sb.move)

	tool(g, &mcp.Tool{
		Name:        "delete_file",
		Description: "Delete a file, a symbolic link or an empty directory in the sandbox; a directory with content needs recursive. Returns what was deleted.",
		Annotations: destructive("Delete file", false),
	}, sb.remove)
}

// ---- list_files

type listFilesInput struct {
	Path       string `json:"path,omitempty" jsonschema:"the directory to list, relative to the sandbox root; default . (the root)"`
	Recursive  bool   `json:"recursive,omitempty" jsonschema:"list subdirectories' contents too"`
	MaxEntries int    `json:"max_entries,omitempty" jsonschema:"return at most this many entries; default 500, at most 5000"`
}

type fileEntry struct {
	Path     string    `json:"path" jsonschema:"the path relative to the sandbox root, with / separators"`
	Type     string    `json:"type" jsonschema:"file, directory, symlink or other"`
	Size     int64     `json:"size" jsonschema:"size in bytes (0 for directories)"`
	Modified time.Time `json:"modified" jsonschema:"last modification time, RFC 3339"`
}

type listFilesOutput struct {
	Path      string      `json:"path" jsonschema:"the directory listed"`
	Count     int         `json:"count" jsonschema:"how many entries are returned"`
	Truncated bool        `json:"truncated" jsonschema:"true when there were more entries than max_entries"`
	Entries   []fileEntry `json:"entries" jsonschema:"the entries, directories first, then by path"`
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

func (sb *sandbox) list(_ context.Context, in listFilesInput) (listFilesOutput, error) {
	dir, err := cleanPath("path", in.Path)
	if err != nil {
		return listFilesOutput{}, err
	}
	limit, err := limitOr(in.MaxEntries, 500, 5000, "max_entries")
	if err != nil {
		return listFilesOutput{}, err
	}
	out := listFilesOutput{Path: dir, Entries: []fileEntry{}}
	err = sb.with(func(root *os.Root) error {
		st, err := root.Stat(filepath.FromSlash(dir))
		if err != nil {
			return fileError("list", dir, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("cannot list %q: it is a file, not a directory; read it with read_file or describe it with file_info", dir)
		}
		fsys := root.FS()
		add := func(p string, d fs.DirEntry) error {
			if len(out.Entries) >= limit {
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
			out.Entries = append(out.Entries, e)
			return nil
		}
		if in.Recursive {
			return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || p == dir {
					return nil // unreadable entries are skipped, not fatal
				}
				return add(p, d)
			})
		}
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return fileError("list", dir, err)
		}
		for _, d := range entries {
			if err := add(path.Join(dir, d.Name()), d); err != nil {
				break
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return listFilesOutput{}, err
	}
	slices.SortFunc(out.Entries, func(a, b fileEntry) int {
		if (a.Type == "directory") != (b.Type == "directory") && !in.Recursive {
			if a.Type == "directory" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	out.Count = len(out.Entries)
	return out, nil
}

// ---- read_file

const (
	defaultReadBytes = 64 << 10
	maxReadBytes     = 1 << 20
	maxWriteBytes    = 10 << 20
	maxHashBytes     = 16 << 20
)

type readFileInput struct {
	Path     string `json:"path" jsonschema:"the file to read, relative to the sandbox root"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"the byte to start at, from 0; use next_offset of the previous call to continue"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes; default 65536, at most 1048576"`
}

type readFileOutput struct {
	Path       string `json:"path" jsonschema:"the file read"`
	Content    string `json:"content" jsonschema:"the bytes read, as text, or as base64 when encoding is base64"`
	Encoding   string `json:"encoding" jsonschema:"utf-8 for text, base64 for binary data"`
	Size       int64  `json:"size" jsonschema:"the file's whole size in bytes"`
	Offset     int64  `json:"offset" jsonschema:"where this read started"`
	BytesRead  int    `json:"bytes_read" jsonschema:"how many bytes content holds"`
	NextOffset int64  `json:"next_offset" jsonschema:"where the next read should start"`
	EOF        bool   `json:"eof" jsonschema:"true when the end of the file was reached"`
}

func (sb *sandbox) read(_ context.Context, in readFileInput) (readFileOutput, error) {
	p, err := cleanPath("path", in.Path)
	if err != nil {
		return readFileOutput{}, err
	}
	limit, err := limitOr(in.MaxBytes, defaultReadBytes, maxReadBytes, "max_bytes")
	if err != nil {
		return readFileOutput{}, err
	}
	if in.Offset < 0 {
		return readFileOutput{}, fmt.Errorf("offset is %d: pass 0 or more", in.Offset)
	}
	var out readFileOutput
	err = sb.with(func(root *os.Root) error {
		f, err := root.Open(filepath.FromSlash(p))
		if err != nil {
			return fileError("read", p, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fileError("read", p, err)
		}
		if st.IsDir() {
			return fmt.Errorf("cannot read %q: it is a directory; list it with list_files", p)
		}
		if in.Offset > st.Size() {
			return fmt.Errorf("offset %d is past the end of %q, which has %d bytes", in.Offset, p, st.Size())
		}
		buf := make([]byte, limit)
		n, err := f.ReadAt(buf, in.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return fileError("read", p, err)
		}
		buf = buf[:n]
		out = readFileOutput{Path: p, Size: st.Size(), Offset: in.Offset, Encoding: "utf-8"}
		// A read that stops inside a multi-byte character would look like
		// binary data: end it before that character instead.
		if !utf8.Valid(buf) && in.Offset+int64(n) < st.Size() {
			for cut := 1; cut <= 3 && cut < len(buf); cut++ {
				if utf8.Valid(buf[:len(buf)-cut]) {
					buf = buf[:len(buf)-cut]
					break
				}
			}
		}
		if utf8.Valid(buf) {
			out.Content = string(buf)
		} else {
			out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(buf)
		}
		out.BytesRead = len(buf)
		out.NextOffset = in.Offset + int64(len(buf))
		out.EOF = out.NextOffset >= st.Size()
		return nil
	})
	return out, err
}

// ---- write_file

type writeFileInput struct {
	Path        string `json:"path" jsonschema:"the file to write, relative to the sandbox root, e.g. notes/todo.txt"`
	Content     string `json:"content" jsonschema:"what to write: text, or base64 when encoding is base64"`
	Encoding    string `json:"encoding,omitempty" jsonschema:"utf-8 (default) to write content as text, base64 to write the bytes it encodes"`
	Append      bool   `json:"append,omitempty" jsonschema:"add to the end of the file instead of replacing its content"`
	NoOverwrite bool   `json:"no_overwrite,omitempty" jsonschema:"fail instead of replacing a file that already exists"`
}

type writeFileOutput struct {
	Path         string `json:"path" jsonschema:"the file written"`
	Created      bool   `json:"created" jsonschema:"true when the file did not exist before"`
	BytesWritten int    `json:"bytes_written" jsonschema:"how many bytes were written"`
	Size         int64  `json:"size" jsonschema:"the file's size afterwards"`
}

func (sb *sandbox) write(_ context.Context, in writeFileInput) (writeFileOutput, error) {
	p, err := cleanPath("path", in.Path)
	if err != nil {
		return writeFileOutput{}, err
	}
	if p == "." {
		return writeFileOutput{}, errEmpty("path", `a file name such as "notes.txt"`)
	}
	data := []byte(in.Content)
	switch in.Encoding {
	case "", "utf-8":
	case "base64":
		if data, err = base64.StdEncoding.DecodeString(strings.TrimSpace(in.Content)); err != nil {
			return writeFileOutput{}, fmt.Errorf("content is not valid standard base64: %w", err)
		}
	default:
		return writeFileOutput{}, fmt.Errorf("unknown encoding %q: pass %s", in.Encoding, oneOf("utf-8", "base64"))
	}
	if len(data) > maxWriteBytes {
		return writeFileOutput{}, fmt.Errorf("content is %d bytes: write at most %d bytes per call (use append for more)", len(data), maxWriteBytes)
	}
	out := writeFileOutput{Path: p}
	err = sb.with(func(root *os.Root) error {
		name := filepath.FromSlash(p)
		if dir := path.Dir(p); dir != "." {
			if err := root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
				return fileError("create the directory for", p, err)
			}
		}
		_, statErr := root.Lstat(name)
		out.Created = errors.Is(statErr, fs.ErrNotExist)
		flags := os.O_WRONLY | os.O_CREATE
		switch {
		case in.NoOverwrite && !in.Append:
			flags |= os.O_EXCL
		case in.Append:
			flags |= os.O_APPEND
		default:
			flags |= os.O_TRUNC
		}
		f, err := root.OpenFile(name, flags, 0o644)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("cannot write %q: it already exists and no_overwrite is set; choose another name or leave no_overwrite out to replace it", p)
			}
			if st, e := root.Stat(name); e == nil && st.IsDir() {
				return fmt.Errorf("cannot write %q: it is a directory; give a file name inside it", p)
			}
			return fileError("write", p, err)
		}
		n, werr := f.Write(data)
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return fileError("write", p, err)
		}
		out.BytesWritten = n
		if st, err := root.Stat(name); err == nil {
			out.Size = st.Size()
		}
		return nil
	})
	return out, err
}

// ---- file_info

type pathInput struct {
	Path string `json:"path" jsonschema:"the file or directory, relative to the sandbox root"`
}

type fileInfoOutput struct {
	Path          string    `json:"path" jsonschema:"the path described"`
	Type          string    `json:"type" jsonschema:"file, directory, symlink or other"`
	Size          int64     `json:"size" jsonschema:"size in bytes"`
	Mode          string    `json:"mode" jsonschema:"permissions, e.g. -rw-r--r--"`
	Modified      time.Time `json:"modified" jsonschema:"last modification time, RFC 3339"`
	SymlinkTarget string    `json:"symlink_target,omitempty" jsonschema:"where a symbolic link points (it is not followed)"`
	Entries       *int      `json:"entries,omitempty" jsonschema:"for a directory, how many entries it holds directly"`
	SHA256        string    `json:"sha256,omitempty" jsonschema:"for a file up to 16 MiB, the SHA-256 of its content in hex"`
	IsText        *bool     `json:"is_text,omitempty" jsonschema:"for a file up to 16 MiB, whether its content is valid UTF-8 text"`
}

func (sb *sandbox) info(_ context.Context, in pathInput) (fileInfoOutput, error) {
	p, err := cleanPath("path", in.Path)
	if err != nil {
		return fileInfoOutput{}, err
	}
	var out fileInfoOutput
	err = sb.with(func(root *os.Root) error {
		name := filepath.FromSlash(p)
		st, err := root.Lstat(name)
		if err != nil {
			return fileError("describe", p, err)
		}
		out = fileInfoOutput{Path: p, Type: fileType(st.Mode()), Size: st.Size(), Mode: st.Mode().Perm().String(), Modified: st.ModTime().UTC()}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			if target, err := root.Readlink(name); err == nil {
				out.SymlinkTarget = filepath.ToSlash(target)
			}
		case st.IsDir():
			out.Mode = st.Mode().String()
			entries, err := fs.ReadDir(root.FS(), p)
			if err != nil {
				return fileError("describe", p, err)
			}
			out.Entries = ptr(len(entries))
		case st.Mode().IsRegular() && st.Size() <= maxHashBytes:
			data, err := root.ReadFile(name)
			if err != nil {
				return fileError("read", p, err)
			}
			sum := sha256.Sum256(data)
			out.SHA256 = hex.EncodeToString(sum[:])
			out.IsText = ptr(utf8.Valid(data))
		}
		return nil
	})
	return out, err
}

// ---- make_directory

type makeDirOutput struct {
	Path    string `json:"path" jsonschema:"the directory"`
	Created bool   `json:"created" jsonschema:"false when it already existed"`
}

func (sb *sandbox) mkdir(_ context.Context, in pathInput) (makeDirOutput, error) {
	p, err := cleanPath("path", in.Path)
	if err != nil {
		return makeDirOutput{}, err
	}
	if p == "." {
		return makeDirOutput{}, errEmpty("path", `a directory name such as "reports/2024"`)
	}
	out := makeDirOutput{Path: p}
	err = sb.with(func(root *os.Root) error {
		name := filepath.FromSlash(p)
		st, err := root.Stat(name)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("cannot create directory %q: a file with that name exists", p)
		}
		if err := root.MkdirAll(name, 0o755); err != nil {
			return fileError("create directory", p, err)
		}
		out.Created = true
		return nil
	})
	return out, err
}

// ---- move_file

type moveFileInput struct {
	From      string `json:"from" jsonschema:"the file or directory to move, relative to the sandbox root"`
	To        string `json:"to" jsonschema:"its new path, relative to the sandbox root; missing parent directories are created"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace a file that already exists at to"`
}

type moveFileOutput struct {
	From        string `json:"from" jsonschema:"the old path"`
	To          string `json:"to" jsonschema:"the new path"`
	Overwritten bool   `json:"overwritten" jsonschema:"true when an existing file at to was replaced"`
}

func (sb *sandbox) move(_ context.Context, in moveFileInput) (moveFileOutput, error) {
	from, err := cleanPath("from", in.From)
	if err != nil {
		return moveFileOutput{}, err
	}
	to, err := cleanPath("to", in.To)
	if err != nil {
		return moveFileOutput{}, err
	}
	if from == "." || to == "." {
		return moveFileOutput{}, fmt.Errorf("the sandbox root itself cannot be moved or replaced: give paths inside it")
	}
	if from == to {
		return moveFileOutput{}, fmt.Errorf("from and to are the same path %q: give a different new path", from)
	}
	out := moveFileOutput{From: from, To: to}
	err = sb.with(func(root *os.Root) error {
		if _, err := root.Lstat(filepath.FromSlash(from)); err != nil {
			return fileError("move", from, err)
		}
		if st, err := root.Lstat(filepath.FromSlash(to)); err == nil {
			if st.IsDir() {
				return fmt.Errorf("cannot move to %q: a directory is there; to move into it, give the full new path such as %q", to, path.Join(to, path.Base(from)))
			}
			if !in.Overwrite {
				return fmt.Errorf("cannot move to %q: a file is already there; pass overwrite: true to replace it", to)
			}
			out.Overwritten = true
		}
		if dir := path.Dir(to); dir != "." {
			if err := root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
				return fileError("create the directory for", to, err)
			}
		}
		if err := root.Rename(filepath.FromSlash(from), filepath.FromSlash(to)); err != nil {
			return fileError("move", from, err)
		}
		return nil
	})
	return out, err
}

// ---- delete_file

type deleteFileInput struct {
	Path      string `json:"path" jsonschema:"the file, symbolic link or directory to delete, relative to the sandbox root"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a directory with everything in it"`
}

type deleteFileOutput struct {
	Path    string `json:"path" jsonschema:"what was deleted"`
	Type    string `json:"type" jsonschema:"file, directory, symlink or other"`
	Removed int    `json:"removed" jsonschema:"how many entries were removed, the path itself included"`
}

func (sb *sandbox) remove(_ context.Context, in deleteFileInput) (deleteFileOutput, error) {
	p, err := cleanPath("path", in.Path)
	if err != nil {
		return deleteFileOutput{}, err
	}
	if p == "." {
		return deleteFileOutput{}, fmt.Errorf("the sandbox root itself cannot be deleted: give a path inside it (list_files shows them)")
	}
	out := deleteFileOutput{Path: p}
	err = sb.with(func(root *os.Root) error {
		name := filepath.FromSlash(p)
		st, err := root.Lstat(name)
		if err != nil {
			return fileError("delete", p, err)
		}
		out.Type = fileType(st.Mode())
		out.Removed = 1
		if st.IsDir() {
			entries, err := fs.ReadDir(root.FS(), p)
			if err != nil {
				return fileError("delete", p, err)
			}
			if len(entries) > 0 && !in.Recursive {
				return fmt.Errorf("cannot delete %q: the directory holds %d entries; pass recursive: true to delete it with its content", p, len(entries))
			}
			if in.Recursive {
				out.Removed = 0
				_ = fs.WalkDir(root.FS(), p, func(string, fs.DirEntry, error) error { out.Removed++; return nil })
				if err := root.RemoveAll(name); err != nil {
					return fileError("delete", p, err)
				}
				return nil
			}
		}
		if err := root.Remove(name); err != nil {
			return fileError("delete", p, err)
		}
		return nil
	})
	return out, err
}
