package gateway

import (
	"cmp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/expose"
)

// InitialTools is the tools/list a new client gets in mode m, meta-tools
// included: what the context-cost report measures. Modes the gateway does
// not serve are rendered on the spot.
func (g *Gateway) InitialTools(m expose.Mode) ([]*mcp.Tool, error) {
	st := g.cur.Load()
	e, ok := st.expo[m]
	if !ok {
		var err error
		e, err = expose.Build(st.space, &expose.Options{
			Mode: m, Exposition: g.look().exposition,
			AnnotateDescriptions: g.look().annotate,
			Reserved:             g.look().metaNamesFor(m),
		})
		if err != nil {
			return nil, err
		}
	}
	tmp := &state{space: st.space, look: st.look, expo: map[expose.Mode]*expose.Exposure{m: e}}
	s := &session{g: g, mode: m, st: tmp, view: st.space.New()}
	want := s.desired()
	out := make([]*mcp.Tool, 0, len(want))
	for _, t := range want {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
