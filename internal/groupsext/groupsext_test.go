package groupsext

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("very_long_group_name_", 5)
	tests := []struct {
		name  string
		input []string
		want  map[string]string
	}{
		{"valid names keep themselves", []string{"files", "math", "text-encode"},
			map[string]string{"files": "files", "math": "math", "text-encode": "text-encode"}},
		{"dots, underscores and capitals", []string{"files.search", "My_Group", "a..b__c"},
			map[string]string{"files.search": "files-search", "My_Group": "my-group", "a..b__c": "a-b-c"}},
		{"leading and trailing junk is trimmed", []string{"_x_", ".y."},
			map[string]string{"_x_": "x", ".y.": "y"}},
		{"a valid original wins a collision", []string{"files-search", "files.search", "Files_Search"},
			map[string]string{"files-search": "files-search", "files.search": "files-search-" + hash8("files.search"), "Files_Search": "files-search-" + hash8("Files_Search")}},
		{"long names are cut with a hash", []string{long},
			map[string]string{long: strings.TrimRight(sanitize(long)[:55], "-") + "-" + hash8(long)}},
		{"no letters or digits", []string{"..."}, map[string]string{"...": "group-" + hash8("...")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Names(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			for in, want := range tt.want {
				if got[in] != want {
					t.Errorf("%q maps to %q, want %q", in, got[in], want)
				}
				if !Valid(got[in]) {
					t.Errorf("%q maps to %q, which breaks the name rule", in, got[in])
				}
			}
		})
	}
}

func TestNamesIgnoreOrder(t *testing.T) {
	a, err := Names([]string{"x.y", "x-y", "X_Y", "z"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Names([]string{"z", "X_Y", "x-y", "x.y"})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%q maps to %q in one order and %q in another", k, v, b[k])
		}
	}
}

func TestDeclared(t *testing.T) {
	decode := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		meta string
		want bool
	}{
		{`{"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/grouping": {}}}}`, true},
		// The retired dialect's identifier is the membership key, not the
		// extension.
		{`{"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/groups": {}}}}`, false},
		{`{"io.modelcontextprotocol/clientCapabilities": {"extensions": {"other": {}}}}`, false},
		{`{"io.modelcontextprotocol/clientCapabilities": {}}`, false},
		{`{"io.modelcontextprotocol/clientCapabilities": "nonsense"}`, false},
		{`{}`, false},
	}
	for _, tt := range tests {
		if got := Declared(decode(tt.meta)); got != tt.want {
			t.Errorf("Declared(%s) = %v, want %v", tt.meta, got, tt.want)
		}
	}
	typed := map[string]any{MetaKeyClientCapabilities: &mcp.ClientCapabilities{Extensions: map[string]any{ID: map[string]any{}}}}
	if !Declared(typed) {
		t.Error("Declared misses a typed ClientCapabilities value")
	}
	if !DeclaredIn(&mcp.ClientCapabilities{Extensions: map[string]any{ID: struct{}{}}}) || DeclaredIn(nil) {
		t.Error("DeclaredIn is wrong")
	}
}

func TestMetaGroups(t *testing.T) {
	var decoded map[string]any
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/groups": ["a", 3, "b"]}`), &decoded); err != nil {
		t.Fatal(err)
	}
	if got := MetaGroups(decoded); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("MetaGroups(decoded) = %q", got)
	}
	if got := (Group{Meta: map[string]any{MetaKey: []string{"p"}}}).Parents(); !slices.Equal(got, []string{"p"}) {
		t.Errorf("Parents = %q", got)
	}
	if got := MetaGroups(map[string]any{MetaKey: "a"}); got != nil {
		t.Errorf("a string is not a list: %q", got)
	}
}

// FuzzNames checks the rule and the absence of collisions for any names.
func FuzzNames(f *testing.F) {
	for _, seed := range []string{"files.search", "A_B", "...", strings.Repeat("x", 100), "files-search\nfiles.search", "ä.ö"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		in := strings.Split(joined, "\n")
		got, err := Names(in)
		if err != nil {
			return // a hash collision is reported, never hidden
		}
		seen := map[string]string{}
		for _, n := range in {
			out := got[n]
			if !Valid(out) {
				t.Fatalf("%q maps to %q, which breaks the name rule", n, out)
			}
			if prev, ok := seen[out]; ok && prev != n {
				t.Fatalf("%q and %q both map to %q", prev, n, out)
			}
			seen[out] = n
		}
	})
}

func hash8(s string) string { return hashed("x", s)[2:] }
