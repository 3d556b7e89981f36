package autogroup

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestSplitWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"TwilioApiV2010--CreateQueue", "twilio api v2010 create queue"},
		{"r2_list_buckets", "r2 list buckets"},
		{"API-get-block-children", "api get block children"},
		{"CreateIncomingPhoneNumberAssignedAddOn", "create incoming phone number assigned addon"},
		{"HTTPServer", "http server"},
		{"", ""},
		{"ÉtatÜber_straße", "état über straße"},
		{"İstanbulTrip", "istanbul trip"},
		{"\xffAbcDef\xfe", "abc def"},
	} {
		if got := strings.Join(splitWords(c.in), " "); got != c.want {
			t.Errorf("splitWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSplitWordsLowersAsToLower requires splitWords, which lowercases rune
// by rune as it goes, to give the words that lowercasing each finished word
// with strings.ToLower gives (its earlier way), over every name and
// description of the shared catalogs.
func TestSplitWordsLowersAsToLower(t *testing.T) {
	// splitWordsToLower is splitWords as it was: words split on the
	// original case, then lowercased whole.
	splitWordsToLower := func(s string) []string {
		var out []string
		var cur []rune
		flush := func() {
			if len(cur) > 0 {
				out = append(out, strings.ToLower(string(cur)))
				cur = cur[:0]
			}
		}
		rs := []rune(s)
		for i, r := range rs {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				flush()
				continue
			}
			if unicode.IsUpper(r) && len(cur) > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		}
		flush()
		for i := 0; i+1 < len(out); i++ {
			if out[i] == "add" && out[i+1] == "on" {
				out = append(out[:i:i], append([]string{"addon"}, out[i+2:]...)...)
			}
		}
		return out
	}
	n := 0
	for _, server := range loadShared(t) {
		for _, tool := range server.tools {
			for _, text := range []string{tool.Name, tool.Description, "ÉtatÜber_straße İstanbulTrip \xffAbc ǅemal ΣΊΣΥΦΟΣ"} {
				got, want := splitWords(text), splitWordsToLower(text)
				if !slices.Equal(got, want) {
					t.Fatalf("splitWords(%q) = %q, want %q", text, got, want)
				}
				n += len(got)
			}
		}
	}
	if n == 0 {
		t.Fatal("the shared catalogs gave no words")
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{"buckets": "bucket", "policies": "policy", "status": "status", "analytics": "analytics", "kvs": "kv", "addresses": "address", "is": "is"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

func tools(names ...string) []Tool {
	out := make([]Tool, len(names))
	for i, n := range names {
		out[i] = Tool{ID: "s__" + n, Name: n, Description: "Does " + n}
	}
	return out
}

// placed maps each tool to the dotted path of the group it sits in.
func placed(root *Node) map[string]string {
	out := map[string]string{}
	root.Walk(func(path []string, n *Node) {
		for _, id := range n.Tools {
			out[id] = strings.Join(path, ".")
		}
	})
	return out
}

func TestDeriveGroupsByResource(t *testing.T) {
	var names []string
	for _, res := range []string{"Queue", "Call", "Message", "Address"} {
		for _, verb := range []string{"Create", "Fetch", "List", "Update", "Delete"} {
			names = append(names, "Api--"+verb+res)
		}
	}
	root := Derive(tools(names...), Options{Size: 6})
	got := placed(root)
	for id, want := range map[string]string{"s__Api--CreateQueue": "queue", "s__Api--DeleteCall": "call", "s__Api--ListMessage": "message", "s__Api--FetchAddress": "address"} {
		if got[id] != want {
			t.Errorf("%s sits in %q, want %q", id, got[id], want)
		}
	}
	if len(root.Tools) != 0 || len(root.Children) != 4 {
		t.Errorf("want four resource groups and nothing left over, got %d children, %d left", len(root.Children), len(root.Tools))
	}
}

func TestDeriveSmallGroupStaysWhole(t *testing.T) {
	root := Derive(tools("a_get", "a_put", "b_get"), Options{})
	if len(root.Children) != 0 || len(root.Tools) != 3 {
		t.Errorf("three tools need no groups: %+v", root)
	}
}

func TestDeriveNestsDeeperWhenAChildIsTooBig(t *testing.T) {
	var names []string
	for _, sub := range []string{"Credential", "Domain", "IpAddress", "Registration"} {
		for _, verb := range []string{"Create", "Fetch", "List", "Update", "Delete"} {
			names = append(names, verb+"Sip"+sub)
		}
	}
	for _, res := range []string{"Queue", "Call"} {
		for _, verb := range []string{"Create", "Fetch", "List", "Update", "Delete"} {
			names = append(names, verb+res)
		}
	}
	root := Derive(tools(names...), Options{Size: 8})
	got := placed(root)
	if got["s__FetchSipDomain"] != "sip.domain" || got["s__ListQueue"] != "queue" {
		t.Errorf("want sip.domain and queue, got %v", got)
	}
}

func TestDeriveReadVersusChange(t *testing.T) {
	var ts []Tool
	for i := range 10 {
		ts = append(ts, Tool{ID: fmt.Sprintf("look%d", i), Name: fmt.Sprintf("x%d", i), ReadOnly: true}, Tool{ID: fmt.Sprintf("poke%d", i), Name: fmt.Sprintf("y%d", i)})
	}
	root := Derive(ts, Options{Size: 10})
	got := placed(root)
	if got["look3"] != "read" || got["poke3"] != "change" {
		t.Errorf("tools with nothing in common split by access: %v", got)
	}
}

var localNamePattern = regexp.MustCompile(`^[a-z0-9_]+$`)

// checkTree holds the invariants of every derivation: each tool placed
// exactly once, local names valid and unique among siblings, groups
// sorted, no empty derived group.
func checkTree(t *testing.T, in []Tool, root *Node) {
	t.Helper()
	seen := map[string]int{}
	root.Walk(func(path []string, n *Node) {
		for _, id := range n.Tools {
			seen[id]++
		}
		if len(path) > 0 && n.Size() == 0 {
			t.Errorf("derived group %v is empty", path)
		}
		if len(path) > 0 && !localNamePattern.MatchString(n.Name) {
			t.Errorf("derived group %v has an invalid name %q", path, n.Name)
		}
		if !slices.IsSortedFunc(n.Children, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("children of %v are not sorted", path)
		}
		for i := 1; i < len(n.Children); i++ {
			if n.Children[i].Name == n.Children[i-1].Name {
				t.Errorf("two children of %v are named %q", path, n.Children[i].Name)
			}
		}
	})
	ids := map[string]bool{}
	for _, tl := range in {
		ids[tl.ID] = true
	}
	for id := range ids {
		if seen[id] != 1 {
			t.Errorf("%s is placed %d times", id, seen[id])
		}
	}
	if len(seen) != len(ids) {
		t.Errorf("%d tools placed, %d given", len(seen), len(ids))
	}
}

func FuzzDerive(f *testing.F) {
	f.Add("CreateQueue FetchQueue ListQueue kv_get kv_put r2_list_buckets get_dashboard_by_uid", "Create a queue", 3)
	f.Add("a b c d e f g h i j k l m n", "", 2)
	f.Add("x_1 x_2 x_3 x_4 x_5 y_1 y_2 AddOn--On ___ ÄÖÜ", "über ß", 4)
	f.Fuzz(func(t *testing.T, names, desc string, size int) {
		var in []Tool
		seen := map[string]bool{}
		for i, n := range strings.Fields(names) {
			id := fmt.Sprintf("%d:%s", i, n)
			if seen[id] {
				continue
			}
			seen[id] = true
			in = append(in, Tool{ID: id, Name: n, Description: desc + " " + n, ReadOnly: i%2 == 0})
		}
		size = size%20 + 1
		a := Derive(in, Options{Size: size})
		checkTree(t, in, a)
		b := Derive(reversed(in), Options{Size: size})
		if renderTree("s", a) != renderTree("s", b) {
			t.Errorf("the order tools arrive in changed the tree")
		}
	})
}

func reversed(in []Tool) []Tool {
	out := slices.Clone(in)
	slices.Reverse(out)
	return out
}

// TestSharedTreesStable removes each tool of the big shared catalogs in
// turn and counts the other tools that change group: the promise is that
// one tool added or removed upstream moves little besides itself.
func TestSharedTreesStable(t *testing.T) {
	if testing.Short() {
		t.Skip("derives every big shared catalog once per tool")
	}
	total, moved, worst, worstWhat := 0, 0, 0, ""
	for _, s := range loadShared(t) {
		if len(s.tools) <= DefaultSize {
			continue
		}
		full := placed(Derive(s.tools, Options{Ignore: []string{s.name}}))
		for i := range s.tools {
			less := slices.Delete(slices.Clone(s.tools), i, i+1)
			after := placed(Derive(less, Options{Ignore: []string{s.name}}))
			n := 0
			for id, at := range after {
				if full[id] != at {
					n++
				}
			}
			total++
			moved += n
			if n > worst {
				worst, worstWhat = n, s.tools[i].ID
			}
		}
	}
	t.Logf("removing one tool: %d removals, %.2f other tools move on average; worst %d (removing %s)", total, float64(moved)/float64(total), worst, worstWhat)
	if float64(moved)/float64(total) > 3 {
		t.Errorf("removing one tool moves %.2f others on average, want at most 3", float64(moved)/float64(total))
	}
}

// BenchmarkDeriveShared derives every shared catalog once, as a catalog
// build does when a server's tools arrive.
func BenchmarkDeriveShared(b *testing.B) {
	servers := loadShared(b)
	for b.Loop() {
		for _, s := range servers {
			Derive(s.tools, Options{Ignore: []string{s.name}})
		}
	}
}

// TestDeriveRehomesLeftovers: a tool no resource of the names took goes to
// the group its description names, not to a bucket of leftovers; a
// server just over the target size stays whole.
func TestDeriveRehomesLeftovers(t *testing.T) {
	var ts []Tool
	for _, res := range []string{"issue", "release", "tag", "webhook"} {
		for _, verb := range []string{"create", "get", "list", "update", "delete"} {
			name := verb + "_" + res
			ts = append(ts, Tool{ID: "s__" + name, Name: name, Description: verb + " a " + res})
		}
	}
	ts = append(ts, Tool{ID: "s__add_label", Name: "add_label", Description: "Add a label to an issue"},
		Tool{ID: "s__search_code", Name: "search_code", Description: "Search code"})
	at := placed(Derive(ts, Options{}))
	if at["s__add_label"] != "issue" {
		t.Errorf("add_label sits in %q, want issue: %v", at["s__add_label"], at)
	}
	if at["s__search_code"] != "" {
		t.Errorf("search_code sits in %q, want the top", at["s__search_code"])
	}
	small := Derive(ts[:DefaultSize+2], Options{})
	if len(small.Children) != 0 || small.Description == "" {
		t.Errorf("a group of %d tools was split: %+v", DefaultSize+2, small)
	}
}
