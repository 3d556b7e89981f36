package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScanCatalogs scans the 35 recorded catalogs together, as a
// rebuild does when a server's list changed.
func BenchmarkScanCatalogs(b *testing.B) {
	servers := catalogItems(b)
	n := 0
	for _, items := range servers {
		n += len(items)
	}
	b.ReportMetric(float64(n), "items")
	for b.Loop() {
		Scan(servers)
	}
}

// BenchmarkRescanCatalogs rescans them with the Scanner of the scan
// before, as the gateway does: only the catalog-wide checks run again.
func BenchmarkRescanCatalogs(b *testing.B) {
	servers := catalogItems(b)
	var s Scanner
	s.Scan(servers)
	for b.Loop() {
		s.Scan(servers)
	}
}

// BenchmarkToolItems makes the items of the recorded catalogs' 903 tools,
// as a start judges every tool it reads from the cache.
func BenchmarkToolItems(b *testing.B) {
	servers := catalogTools(b)
	for b.Loop() {
		for _, tools := range servers {
			for _, t := range tools {
				if _, err := ToolItem(t); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkLoadLock reads the lock of the recorded catalogs, as every
// start does.
func BenchmarkLoadLock(b *testing.B) {
	l := NewLock()
	for name, items := range catalogItems(b) {
		Decide(l, name, items, Policy{}, nil)
	}
	text, err := l.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.Run("checked", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseLock(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A restart reads the text its memo saw checked.
	b.Run("seen", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), DefaultLockFile)
		if err := os.WriteFile(path, text, 0o644); err != nil {
			b.Fatal(err)
		}
		m := NewMemo("bench")
		m.Wrote(text)
		for b.Loop() {
			if _, err := m.LoadLock(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
