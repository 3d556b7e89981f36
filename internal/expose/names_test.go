package expose

import (
	"strings"
	"testing"
)

func TestWireName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct{ in, want string }{
		{"github__create_issue", "github__create_issue"},
		{"code.repos", "code_repos"},
		{"weird name/ü", "weird_name___"},
		{"", "_"},
		{long, strings.Repeat("a", 55) + "_" + WireName(long)[56:]},
	}
	for _, tt := range tests {
		if got := WireName(tt.in); got != tt.want {
			t.Errorf("WireName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if a, b := WireName(long+"x"), WireName(long+"y"); a == b || len(a) != MaxNameLen {
		t.Errorf("long names %q and %q must differ and be 64 long", a, b)
	}
}

func TestShorten(t *testing.T) {
	long := "analytics-and-reporting-for-the-customer-success-organisation-emea-region"
	got := Shorten(long, long, 64, "-")
	if len(got) > 64 || !strings.HasPrefix(got, "analytics-and-reporting-for-the-customer-success-organi-") || len(got) != 64 || strings.Contains(got, "--") {
		t.Errorf("Shorten = %q", got)
	}
	if Shorten(long, long, 64, "-") != got || Shorten(long+"x", long+"x", 64, "-") == got {
		t.Error("Shorten is not stable, or two long names collide")
	}
	// A cut that ends in the separator does not double it.
	dashed := strings.Repeat("ab-", 30)
	if got := Shorten(dashed, dashed, 64, "-"); strings.Contains(got, "--") || len(got) > 64 {
		t.Errorf("Shorten(%q) = %q", dashed, got)
	}
	if Shorten("short", "short", 64, "-") != "short" {
		t.Error("a name that fits was changed")
	}
}

func FuzzWireName(f *testing.F) {
	for _, s := range []string{"", "a", "github__create_issue", "code.repos", strings.Repeat("x", 64), strings.Repeat("y", 65), "ü/ö", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := WireName(name)
		if !ValidWireName(got) {
			t.Fatalf("WireName(%q) = %q is not a valid wire name", name, got)
		}
		if WireName(name) != got {
			t.Fatal("WireName is not deterministic")
		}
		if ValidWireName(name) && got != name {
			t.Fatalf("a valid name %q was changed to %q", name, got)
		}
	})
}
