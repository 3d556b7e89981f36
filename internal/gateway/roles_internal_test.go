package gateway

import (
	"fmt"
	"testing"

	"github.com/toolfold/toolfold/internal/expose"
)

// TestEachSessionHasItsRole: every way a session is made gives it the
// role that answers for that kind of session, and the roles answer reach
// as their kind must: a view hides what it does not list, a request
// without a view hides nothing it can route.
func TestEachSessionHasItsRole(t *testing.T) {
	g := treeGateway(t, &Options{Mode: expose.Auto})
	st := g.cur.Load()
	shared := g.sharedSessions()[expose.Search]
	if shared == nil {
		t.Fatal("auto mode shares no search server")
	}
	groups := st.expo[expose.Groups]
	hidden, ok := groups.Route("c") // in code.repos, not enabled at first
	if !ok {
		t.Fatal(`groups mode routes no "c"`)
	}
	for _, tc := range []struct {
		name    string
		s       *session
		want    string
		reaches bool
	}{
		{"per-request server", g.perRequest, "*gateway.requestServer", false},
		{"shared server", shared, "gateway.staticServer", true},
		{"own view", g.newSession(expose.Groups, st.space.New()), "gateway.viewServer", false},
		{"request", g.transient(st, presentation{mode: expose.Groups}), "gateway.transientRole", false},
		{"stateless request", g.transient(st, presentation{mode: expose.Groups, stateless: true}), "gateway.transientRole", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := typeName(tc.s.role); got != tc.want {
				t.Errorf("role = %s, want %s", got, tc.want)
			}
			expo, snap := groups, st.space.New().Snapshot()
			if tc.s.role == shared.role {
				expo = st.expo[expose.Search] // its own mode, where nothing is hidden
			}
			if got := tc.s.role.reaches(expo, snap, hidden); got != tc.reaches {
				t.Errorf("reaches a tool of a group not enabled = %v, want %v", got, tc.reaches)
			}
		})
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
