package trust

import "testing"

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
