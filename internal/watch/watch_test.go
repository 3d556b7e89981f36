package watch

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// waitChange fails the test when no change arrives; the deadline is a
// failure bound, not a wait for something to settle.
func waitChange(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case <-w.Changes():
	case <-time.After(20 * time.Second):
		t.Fatal("no change reported")
	}
}

func start(t *testing.T, paths ...string) *Watcher {
	t.Helper()
	w, err := New(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChangeIsSeen(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string) (watched string)
		change func(t *testing.T, dir string)
	}{
		{
			name: "edit in place",
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "c.json"), "1")
				return filepath.Join(dir, "c.json")
			},
			change: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "c.json"), "2") },
		},
		{
			name: "rename-save",
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "c.json"), "1")
				return filepath.Join(dir, "c.json")
			},
			change: func(t *testing.T, dir string) {
				tmp := filepath.Join(dir, ".c.json.swp")
				write(t, tmp, "2")
				if err := os.Rename(tmp, filepath.Join(dir, "c.json")); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name:  "created later",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "toolfold.lock") },
			change: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "toolfold.lock"), "pins")
			},
		},
		{
			// The layout the kubelet writes for a mounted ConfigMap: the file is a
			// symlink into ..data, and ..data is a symlink to a timestamped
			// directory that an update replaces by renaming a new symlink over it.
			name: "configmap symlink swap",
			setup: func(t *testing.T, dir string) string {
				mustMkdir(t, filepath.Join(dir, "..v1"))
				write(t, filepath.Join(dir, "..v1", "c.json"), "1")
				mustSymlink(t, "..v1", filepath.Join(dir, "..data"))
				mustSymlink(t, filepath.Join("..data", "c.json"), filepath.Join(dir, "c.json"))
				return filepath.Join(dir, "c.json")
			},
			change: func(t *testing.T, dir string) {
				mustMkdir(t, filepath.Join(dir, "..v2"))
				write(t, filepath.Join(dir, "..v2", "c.json"), "2")
				mustSymlink(t, "..v2", filepath.Join(dir, "..data_tmp"))
				if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := start(t, tt.setup(t, dir))
			tt.change(t, dir)
			waitChange(t, w)
		})
	}
}

// TestSameContentIsSilent drives rescan directly, so the absence of a change
// is checked without waiting for events that should not come.
func TestSameContentIsSilent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	write(t, p, "1")
	w, err := New([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.fsw.Close()
	write(t, p, "1")                                  // rewritten, same bytes
	write(t, filepath.Join(dir, "other.json"), "zzz") // unrelated neighbour
	w.rescan()
	select {
	case <-w.Changes():
		t.Fatal("a rewrite with the same content was reported as a change")
	default:
	}
	write(t, p, "2")
	w.rescan()
	w.rescan() // a second scan with no new content adds nothing
	select {
	case <-w.Changes():
	default:
		t.Fatal("a content change was not reported")
	}
	select {
	case <-w.Changes():
		t.Fatal("one change was reported twice")
	default:
	}
}

func TestMissingDirectoryIsAClearError(t *testing.T) {
	_, err := New([]string{filepath.Join(t.TempDir(), "nope", "c.json")}, nil)
	if err == nil {
		t.Fatal("want an error for a file in a missing directory")
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestNewFromTakesTheCallersBaseline: the digest the caller hands over is
// the baseline, not the file read again, so content that moved since the
// caller read it is a change at the next scan, and the content the caller
// read is not.
func TestNewFromTakesTheCallersBaseline(t *testing.T) {
	tests := []struct {
		name    string
		read    string // what the caller read: "" for no file
		now     string // the file's content when the watch starts
		changed bool
	}{
		{name: "same as read", read: "1", now: "1", changed: false},
		{name: "changed since read", read: "1", now: "2", changed: true},
		{name: "created since read", read: "", now: "1", changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "toolfold.lock")
			known := Absent
			if tt.read != "" {
				known = Digest(sha256.Sum256([]byte(tt.read)))
			}
			write(t, p, tt.now)
			w, err := NewFrom([]string{p}, map[string]string{p: known}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.fsw.Close()
			w.rescan()
			select {
			case <-w.Changes():
				if !tt.changed {
					t.Fatal("the content the caller read was reported as a change")
				}
			default:
				if tt.changed {
					t.Fatal("content that moved since the caller read it was not reported")
				}
			}
		})
	}
}
