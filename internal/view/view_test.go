package view_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/view"
)

func visibleIDs(cat *catalog.Catalog, s view.Snapshot) string {
	var ids []string
	s.Tools.Each(func(i int) { ids = append(ids, string(cat.Tools()[i].ID)) })
	return strings.Join(ids, ",")
}

func groupIDs(gs []*catalog.Group) string {
	var ids []string
	for _, g := range gs {
		ids = append(ids, string(g.ID))
	}
	return strings.Join(ids, ",")
}

func reasons(errs []view.GroupError) string {
	var rs []string
	for _, e := range errs {
		rs = append(rs, e.Group+":"+string(e.Reason))
	}
	return strings.Join(rs, ",")
}

func TestEnable(t *testing.T) {
	tests := []struct {
		name     string
		opts     view.Options
		before   []string // enabled first, must succeed
		enable   []string
		enabled  string
		errors   string
		visible  string
		contains string // a phrase the first error's message must hold
	}{
		{name: "root", enable: []string{"code"}, enabled: "code", visible: "a,b,u"},
		{name: "parent then child in one call", enable: []string{"code", "code.repos"}, enabled: "code,code.repos", visible: "a,b,c,d,u"},
		{name: "child before parent fails alone", enable: []string{"code.repos", "code"}, enabled: "code", errors: "code.repos:parent_not_enabled", visible: "a,b,u", contains: `enable "code" first`},
		{name: "unknown names nearest", enable: []string{"dcos"}, errors: "dcos:unknown_group", visible: "u", contains: `did you mean "docs"`},
		{name: "already enabled", before: []string{"docs"}, enable: []string{"docs"}, errors: "docs:already_enabled", visible: "a,f,u"},
		{name: "three levels", enable: []string{"code", "code.repos", "code.repos.br"}, enabled: "code,code.repos,code.repos.br", visible: "a,b,c,d,e,u"},
		{name: "limit counts a shared tool once", opts: view.Options{MaxTools: 3}, enable: []string{"code", "docs"}, enabled: "code,docs", visible: "a,b,f,u"},
		{name: "over the limit", opts: view.Options{MaxTools: 3}, enable: []string{"code", "code.repos"}, enabled: "code", errors: "code.repos:over_limit", visible: "a,b,u", contains: "would make 4 tools visible, over the limit of 3"},
		{name: "ungrouped hidden", opts: view.Options{HideUngrouped: true}, enable: []string{"docs"}, enabled: "docs", visible: "a,f"},
		{name: "each group fails alone", enable: []string{"nope", "docs", "docs"}, enabled: "docs", errors: "nope:unknown_group,docs:already_enabled", visible: "a,f,u"},
	}
	cat := catalogtest.Tree(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			space, err := view.NewSpace(cat, &tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			v := space.New()
			if len(tt.before) > 0 {
				if ch := v.Enable(tt.before); len(ch.Errors) > 0 {
					t.Fatalf("setup: %v", ch.Errors)
				}
			}
			ch := v.Enable(tt.enable)
			if got := groupIDs(ch.Enabled); got != tt.enabled {
				t.Errorf("enabled = %q, want %q", got, tt.enabled)
			}
			if got := reasons(ch.Errors); got != tt.errors {
				t.Errorf("errors = %q, want %q", got, tt.errors)
			}
			if got := visibleIDs(cat, ch.After); got != tt.visible {
				t.Errorf("visible = %q, want %q", got, tt.visible)
			}
			if tt.contains != "" && (len(ch.Errors) == 0 || !strings.Contains(ch.Errors[0].Message, tt.contains)) {
				t.Errorf("first error %v does not contain %q", ch.Errors, tt.contains)
			}
			if want := tt.enabled != ""; ch.Changed() != want {
				t.Errorf("Changed() = %v, want %v", ch.Changed(), want)
			}
		})
	}
}

func TestOverLimitCarriesCountAndLimit(t *testing.T) {
	space, _ := view.NewSpace(catalogtest.Tree(t), &view.Options{MaxTools: 2})
	ch := space.New().Enable([]string{"code", "docs"})
	if len(ch.Errors) != 1 {
		t.Fatalf("errors = %v, want one", ch.Errors)
	}
	if e := ch.Errors[0]; e.Count != 3 || e.Limit != 2 || e.Group != "docs" {
		t.Errorf("error = %+v, want docs with count 3 and limit 2", e)
	}
}

func TestParentNotEnabledNamesParent(t *testing.T) {
	space, _ := view.NewSpace(catalogtest.Tree(t), nil)
	ch := space.New().Enable([]string{"code.repos"})
	if len(ch.Errors) != 1 || ch.Errors[0].Parent != "code" {
		t.Fatalf("errors = %+v, want parent_not_enabled naming code", ch.Errors)
	}
}

func TestDisable(t *testing.T) {
	tests := []struct {
		name     string
		before   []string
		disable  []string
		disabled string
		errors   string
		visible  string
	}{
		{name: "cascades to descendants", before: []string{"code", "code.repos", "code.repos.br", "docs"}, disable: []string{"code"}, disabled: "code,code.repos,code.repos.br", visible: "a,f,u"},
		{name: "child only", before: []string{"code", "code.repos"}, disable: []string{"code.repos"}, disabled: "code.repos", visible: "a,b,u"},
		{name: "not enabled", disable: []string{"docs"}, errors: "docs:not_enabled", visible: "u"},
		{name: "unknown", disable: []string{"x"}, errors: "x:unknown_group", visible: "u"},
		{name: "shared tool stays while another group holds it", before: []string{"code", "docs"}, disable: []string{"code"}, disabled: "code", visible: "a,f,u"},
	}
	cat := catalogtest.Tree(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			space, _ := view.NewSpace(cat, nil)
			v := space.New()
			if ch := v.Enable(tt.before); len(ch.Errors) > 0 {
				t.Fatalf("setup: %v", ch.Errors)
			}
			ch := v.Disable(tt.disable)
			if got := groupIDs(ch.Disabled); got != tt.disabled {
				t.Errorf("disabled = %q, want %q", got, tt.disabled)
			}
			if got := reasons(ch.Errors); got != tt.errors {
				t.Errorf("errors = %q, want %q", got, tt.errors)
			}
			if got := visibleIDs(cat, ch.After); got != tt.visible {
				t.Errorf("visible = %q, want %q", got, tt.visible)
			}
		})
	}
}

func TestReset(t *testing.T) {
	cat := catalogtest.Tree(t)
	space, _ := view.NewSpace(cat, nil)
	v := space.New()
	v.Enable([]string{"docs", "code"})
	ch := v.Reset(map[string]bool{"code.repos": true, "code": true, "docs": false, "code.repos.br": false, "zzz": true})
	if got := groupIDs(ch.Enabled); got != "code.repos" {
		t.Errorf("enabled = %q, want code.repos", got)
	}
	if got := groupIDs(ch.Disabled); got != "docs" {
		t.Errorf("disabled = %q, want docs", got)
	}
	if got := reasons(ch.Errors); got != "zzz:unknown_group" {
		t.Errorf("errors = %q", got)
	}
	if got := visibleIDs(cat, ch.After); got != "a,b,c,d,u" {
		t.Errorf("visible = %q", got)
	}
	// A child without its parent stays off and says why.
	ch = v.Reset(map[string]bool{"code.repos": true})
	if got := reasons(ch.Errors); got != "code.repos:parent_not_enabled" {
		t.Errorf("errors = %q", got)
	}
	if got := visibleIDs(cat, ch.After); got != "u" {
		t.Errorf("visible = %q, want only the ungrouped tool", got)
	}
}

func TestInitialState(t *testing.T) {
	tools := []*catalog.Tool{catalogtest.Tool("a"), catalogtest.Tool("b"), catalogtest.Tool("c")}
	cat := catalogtest.Build(t, catalog.Spec{Tools: tools, Groups: []catalog.GroupSpec{
		{ID: "p", Members: catalog.Members{Tools: []catalog.ToolID{"a"}}},
		{ID: "p.c", Parent: "p", Default: catalog.Enabled, Members: catalog.Members{Tools: []catalog.ToolID{"b"}}},
		{ID: "q", Members: catalog.Members{Tools: []catalog.ToolID{"c"}}},
	}})
	space, err := view.NewSpace(cat, &view.Options{InitialGroups: []catalog.GroupID{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	// A default-enabled child brings its parent; initial groups are on.
	if got := visibleIDs(cat, space.New().Snapshot()); got != "a,b,c" {
		t.Errorf("initial visible = %q, want a,b,c", got)
	}
	if _, err := view.NewSpace(cat, &view.Options{InitialGroups: []catalog.GroupID{"qq"}}); err == nil || !strings.Contains(err.Error(), `did you mean "q"`) {
		t.Errorf("unknown initial group: err = %v", err)
	}
}

func TestViewsAreIsolated(t *testing.T) {
	cat := catalogtest.Tree(t)
	space, _ := view.NewSpace(cat, nil)
	one, two := space.New(), space.New()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(2)
		go func() { defer wg.Done(); one.Enable([]string{"code"}); one.Disable([]string{"code"}) }()
		go func() { defer wg.Done(); two.Enable([]string{"docs"}) }()
	}
	wg.Wait()
	if got := visibleIDs(cat, one.Snapshot()); got != "u" {
		t.Errorf("view one = %q, want u", got)
	}
	if got := visibleIDs(cat, two.Snapshot()); got != "a,f,u" {
		t.Errorf("view two = %q, want a,f,u", got)
	}
}

func TestEnableable(t *testing.T) {
	space, _ := view.NewSpace(catalogtest.Tree(t), nil)
	v := space.New()
	if got := groupIDs(v.Enableable()); got != "code,docs" {
		t.Errorf("fresh = %q", got)
	}
	v.Enable([]string{"code"})
	if got := groupIDs(v.Enableable()); got != "code.repos,docs" {
		t.Errorf("after code = %q", got)
	}
}

func TestSet(t *testing.T) {
	var s view.Set
	for _, i := range []int{0, 63, 64, 200} {
		s.Add(i)
	}
	var got []int
	s.Each(func(i int) { got = append(got, i) })
	if !slices.Equal(got, []int{0, 63, 64, 200}) || s.Len() != 4 || !s.Has(200) || s.Has(1) {
		t.Fatalf("set = %v", got)
	}
	o := s.Clone()
	o.Remove(63)
	if !s.Has(63) || o.Has(63) || s.Equal(o) {
		t.Fatal("clone is not independent")
	}
	if d := s.Minus(o); d.Len() != 1 || !d.Has(63) {
		t.Fatal("minus")
	}
	if !view.NewSet(10).Equal(view.Set{}) {
		t.Fatal("empty sets of different capacity must be equal")
	}
}

// TestEnableUnfoldsAnEmptyParent: a group with no tools of its own whose
// groups inside hold small tools is enabled with them in one call; a big
// one, or one over the limit, unfolds a level at a time.
func TestEnableUnfoldsAnEmptyParent(t *testing.T) {
	tools := []*catalog.Tool{}
	var ids []catalog.ToolID
	// Each test tool's definition is about 106 bytes: together they weigh
	// more than UnfoldBytes.
	for i := range view.UnfoldBytes/90 + 1 {
		tl := catalogtest.Tool(string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		tools = append(tools, tl)
		ids = append(ids, tl.ID)
	}
	cat := catalogtest.Build(t, catalog.Spec{Tools: tools, Groups: []catalog.GroupSpec{
		{ID: "small"},
		{ID: "small.one", Parent: "small", Members: catalog.Members{Tools: ids[:2]}},
		{ID: "small.two", Parent: "small", Members: catalog.Members{Tools: ids[2:4]}},
		{ID: "small.two.deep", Parent: "small.two", Members: catalog.Members{Tools: ids[4:5]}},
		{ID: "big"},
		{ID: "big.all", Parent: "big", Members: catalog.Members{Tools: ids}},
	}})
	tests := []struct {
		opts    view.Options
		enable  []string
		enabled string
		errors  string
	}{
		{enable: []string{"small"}, enabled: "small,small.one,small.two,small.two.deep"},
		{enable: []string{"small", "small.one"}, enabled: "small,small.one,small.two,small.two.deep"},
		{enable: []string{"big"}, enabled: "big"},
		{opts: view.Options{MaxTools: 4}, enable: []string{"small"}, enabled: "small"},
	}
	for _, tt := range tests {
		space, err := view.NewSpace(cat, &tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		ch := space.New().Enable(tt.enable)
		if got := groupIDs(ch.Enabled); got != tt.enabled || reasons(ch.Errors) != tt.errors {
			t.Errorf("%+v enable %v: enabled %s, errors %s; want %s, errors %q", tt.opts, tt.enable, got, reasons(ch.Errors), tt.enabled, tt.errors)
		}
	}
}
