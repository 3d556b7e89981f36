package autogroup

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestMemoDerivesAsDerive: over the shared catalogs, a memo's tree is
// Derive's, reused while the tools, options and Taken's answers are the
// same (in memory, and from the file a Flush wrote for the same build),
// and derived again when any of them differs.
func TestMemoDerivesAsDerive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "autogroups", "derived.json")
	m, err := OpenMemo(path, "build 1")
	if err != nil {
		t.Fatal(err)
	}
	servers := loadShared(t)
	opts := func(s sharedServer, taken map[string]bool) Options {
		return Options{Size: 8, Ignore: []string{s.name}, Taken: func(local string) bool { return taken[local] }}
	}
	first := map[string]*Node{}
	for _, s := range servers {
		got := m.Derive(s.tools, opts(s, nil))
		if want := Derive(s.tools, opts(s, nil)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the memo derived another tree than Derive", s.name)
		}
		first[s.name] = got
		if again := m.Derive(s.tools, opts(s, nil)); again != got {
			t.Errorf("%s: the same tools and options were derived again", s.name)
		}
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}

	read, err := OpenMemo(path, "build 1")
	if err != nil {
		t.Fatal(err)
	}
	var big sharedServer
	for _, s := range servers {
		if got := read.Derive(s.tools, opts(s, nil)); !reflect.DeepEqual(got, first[s.name]) {
			t.Errorf("%s: the tree read back differs", s.name)
		}
		if big.name == "" || len(first[s.name].Children) > len(first[big.name].Children) {
			big = s // the most split, for the cases below
		}
	}
	if read.dirty {
		t.Error("a start on the unchanged catalogs derived again")
	}
	if len(first[big.name].Children) == 0 {
		t.Fatalf("no shared catalog was split: %s", big.name)
	}

	// Taken answering otherwise for a name the derivation asked about.
	child := first[big.name].Children[0].Name
	if got := read.Derive(big.tools, opts(big, map[string]bool{child: true})); reflect.DeepEqual(got, first[big.name]) {
		t.Errorf("%s: a tree was reused though %q is now taken", big.name, child)
	} else if want := Derive(big.tools, opts(big, map[string]bool{child: true})); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: with %q taken the memo derived another tree than Derive", big.name, child)
	}

	// A tool's description changed.
	changed := append([]Tool(nil), big.tools...)
	changed[0].Description += " Also archives it."
	read.dirty = false
	read.Derive(changed, opts(big, nil))
	if !read.dirty {
		t.Errorf("%s: a changed description reused the old tree", big.name)
	}

	// A file damaged on disk: a tree that lost a tool, one with a null
	// group. Neither is reused, and neither breaks the start.
	for _, damage := range []func(*Node){
		func(n *Node) { n.Children[0].Tools = n.Children[0].Tools[1:] },
		func(n *Node) { n.Children[0] = nil },
	} {
		key := fingerprint(big.tools, opts(big, nil))
		e := read.entries[key]
		if e == nil {
			t.Fatalf("%s: no tree remembered", big.name)
		}
		broken := *first[big.name]
		broken.Children = append([]*Node(nil), broken.Children...)
		c := *broken.Children[0]
		broken.Children[0] = &c
		damage(&broken)
		read.entries[key] = &memoEntry{Taken: e.Taken, Root: &broken}
		if got := read.Derive(big.tools, opts(big, nil)); !reflect.DeepEqual(got, first[big.name]) {
			t.Errorf("%s: a damaged tree was reused", big.name)
		}
	}

	other, err := OpenMemo(path, "build 2")
	if err == nil || len(other.entries) != 0 {
		t.Errorf("another build's memo was used: %d trees, %v", len(other.entries), err)
	}
}
