// Package watch tells a long-running process when any of a list of files
// changed content. It watches each file's directory, not the file, so that
// the two ways files are replaced in practice are both seen: an editor's
// rename-save (write a temp file, rename it over the old one) and a
// Kubernetes ConfigMap update (the "..data" symlink is swapped atomically,
// so the file's own inode never changes). A directory event only triggers a
// re-read: a change is reported when a file's content digest differs from
// the last one reported, so touches, chmods and unrelated files in the same
// directory are silent.
package watch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"
)

// Watcher reports content changes of a fixed list of files.
type Watcher struct {
	paths   []string
	fsw     *fsnotify.Watcher
	digests map[string]string
	logger  *slog.Logger
	changes chan struct{}
}

// New watches paths (a file that does not exist yet is watched for its
// creation). The digests read now are the baseline: only later changes are
// reported.
func New(paths []string, logger *slog.Logger) (*Watcher, error) {
	return NewFrom(paths, nil, logger)
}

// NewFrom is [New] with a baseline the caller read already: known maps a
// path (as given in paths) to its [Digest] (or [Absent]), so a file the
// caller has just read and hashed, a lock of thousands of pins, say, is
// not read and hashed again. Paths missing from known are read now.
func NewFrom(paths []string, known map[string]string, logger *slog.Logger) (*Watcher, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: starting the file watcher: %w", err)
	}
	w := &Watcher{fsw: fsw, digests: map[string]string{}, logger: logger, changes: make(chan struct{}, 1)}
	var dirs []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			fsw.Close()
			return nil, fmt.Errorf("watch: %s: %w", p, err)
		}
		if slices.Contains(w.paths, abs) {
			continue
		}
		w.paths = append(w.paths, abs)
		if d, ok := known[p]; ok {
			w.digests[abs] = d
		} else {
			w.digests[abs] = digest(abs)
		}
		if d := filepath.Dir(abs); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if err := fsw.Add(d); err != nil {
			fsw.Close()
			return nil, fmt.Errorf("watch: watching directory %s (it must exist and be readable): %w", d, err)
		}
	}
	return w, nil
}

// Paths returns the absolute paths watched.
func (w *Watcher) Paths() []string { return slices.Clone(w.paths) }

// Changes delivers one value after one or more watched files changed. Changes
// that arrive before the receiver reads coalesce into one value, so a reader
// that is busy reloading gets one more wake-up, not a backlog.
func (w *Watcher) Changes() <-chan struct{} { return w.changes }

// Run reads file-system events until ctx ends, then closes the watcher.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.fsw.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return nil
			}
			w.logger.Debug("watch: event", "name", ev.Name, "op", ev.Op.String())
			w.rescan()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return nil
			}
			// An overflow means events were lost: re-reading every file is the
			// way to not miss the change they carried.
			w.logger.Warn("watch: file watcher error; re-reading watched files", "err", err)
			w.rescan()
		}
	}
}

// rescan re-reads every watched file and signals if any digest moved.
func (w *Watcher) rescan() {
	changed := false
	for _, p := range w.paths {
		d := digest(p)
		if d != w.digests[p] {
			w.digests[p] = d
			changed = true
		}
	}
	if !changed {
		return
	}
	select {
	case w.changes <- struct{}{}:
	default:
	}
}

// Absent is the baseline of a file that does not exist (see [NewFrom]).
const Absent = ""

// Digest is the baseline of a file whose content has SHA-256 sum (see
// [NewFrom]).
func Digest(sum [sha256.Size]byte) string { return string(sum[:]) }

// digest is the file's SHA-256 read through symlinks; "" when absent, and a
// distinct marker when unreadable so that a file turning unreadable is a
// change the reload reports rather than silence.
func digest(path string) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return Digest(sha256.Sum256(b))
}
