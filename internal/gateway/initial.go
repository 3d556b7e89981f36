package gateway

import (
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
	// A new client's view is in its initial state: the per-request render.
	return sortedTools(renderRequest(tmp, presentation{mode: m})), nil
}
