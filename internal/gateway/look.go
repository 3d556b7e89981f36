package gateway

import (
	"slices"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
	"github.com/toolfold/toolfold/internal/meta"
)

// look is how the gateway presents its catalog: the Options a config
// reload may change while clients are connected (UpdateWith). Each state
// carries the look it was rendered with, so a request reads the catalog
// and its presentation in one load and never mixes two reloads.
type look struct {
	// mode is the configured mode (possibly auto).
	mode expose.Mode
	// modes are the concrete modes rendered: those mode serves, and those
	// of the shared sessions made under an earlier look, whose clients keep
	// the mode they were given until they reconnect.
	modes []expose.Mode
	// menu says the groups exposure carries the groups mode's meta-tools:
	// the mode is groups or auto, or a session of the groups mode made
	// under an earlier look is still open.
	menu                  bool
	names                 meta.Names
	exposition            catalog.Exposition
	annotate, resetTools  bool
	refreshing, searching []string
	noBytes               bool
	// answerBytes is Options.AnswerBytesInFlight, set on the answer
	// budget by each UpdateWith.
	answerBytes int64
}

// newLook reads the presentation out of opts (whose Mode is set).
func newLook(o *Options) *look {
	lk := &look{
		mode: o.Mode, names: o.Meta.WithDefaults(), exposition: o.Exposition,
		annotate: o.AnnotateDescriptions, resetTools: o.ResetTools,
		refreshing: o.RefreshingClients, searching: o.SearchingClients,
		noBytes: o.NoByteForwarding, answerBytes: o.AnswerBytesInFlight,
	}
	switch lk.mode {
	case expose.Auto:
		// The table in the README: flat for clients that search
		// themselves, groups for refreshing ones, search for the rest.
		lk.modes = []expose.Mode{expose.Groups, expose.Search, expose.Flat}
	case expose.Groups:
		lk.modes = []expose.Mode{expose.Groups}
	default:
		// The groups exposure serves the groups extension in every mode.
		lk.modes = []expose.Mode{lk.mode, expose.Groups}
	}
	lk.menu = lk.mode == expose.Groups || lk.mode == expose.Auto
	return lk
}

// keeping returns lk widened to the modes still served to open sessions
// of an earlier look: a shared session's mode stays rendered, and so do
// the groups mode's meta-tools while a session of that mode is open.
func (lk *look) keeping(shared []expose.Mode, groupsViews bool) *look {
	out := *lk
	out.modes = slices.Clone(lk.modes)
	for _, m := range shared {
		if !slices.Contains(out.modes, m) {
			out.modes = append(out.modes, m)
		}
	}
	out.menu = out.menu || groupsViews
	return &out
}

// look is the presentation of the catalog served now.
func (g *Gateway) look() *look { return g.cur.Load().look }

// withLook is o with lk's presentation: what a part's gateway is made
// with after a reload changed the parent's.
func withLook(o Options, lk *look) Options {
	o.Mode, o.Meta, o.Exposition = lk.mode, lk.names, lk.exposition
	o.AnnotateDescriptions, o.ResetTools = lk.annotate, lk.resetTools
	o.RefreshingClients, o.SearchingClients = lk.refreshing, lk.searching
	o.NoByteForwarding, o.AnswerBytesInFlight = lk.noBytes, lk.answerBytes
	return o
}
