package gateway

import (
	"encoding/json"
	"testing"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/catalog/catalogtest"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/view"
)

// The per-request lists' fingerprint, which decides whether an Update is
// announced, stays the same for the same catalog built again and changes
// with anything a list shows of a tool: its schema, kept as text, included.
func TestFingerprintFollowsWhatListsShow(t *testing.T) {
	g, err := New(fingerprintSpace(t, "tool a", `{"type":"object","properties":{"q":{"type":"string"}}}`), &Options{Mode: expose.Auto})
	if err != nil {
		t.Fatal(err)
	}
	fp := func(desc, schema string) [32]byte {
		st, err := g.render(fingerprintSpace(t, desc, schema), g.look())
		if err != nil {
			t.Fatal(err)
		}
		return st.fingerprint()
	}
	base := fp("tool a", `{"type":"object","properties":{"q":{"type":"string"}}}`)
	if again := fp("tool a", `{"type":"object","properties":{"q":{"type":"string"}}}`); again != base {
		t.Error("the same catalog built again has another fingerprint: every Update would be announced")
	}
	for name, changed := range map[string][32]byte{
		"schema":      fp("tool a", `{"type":"object","properties":{"q":{"type":"number"}}}`),
		"description": fp("tool A", `{"type":"object","properties":{"q":{"type":"string"}}}`),
	} {
		if changed == base {
			t.Errorf("a tool whose %s changed keeps the fingerprint: the change would not be announced", name)
		}
	}
}

func fingerprintSpace(t *testing.T, desc, schema string) *view.Space {
	t.Helper()
	tool := catalogtest.Tool("a")
	tool.Def.Description = desc
	tool.Def.InputSchema = json.RawMessage(schema)
	space, err := view.NewSpace(catalogtest.Build(t, catalog.Spec{Tools: []*catalog.Tool{tool}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
