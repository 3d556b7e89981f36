package toolfold

import (
	"log/slog"

	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/expose"
)

// Mode is how the catalog is presented to a client.
type Mode string

const (
	// ModeAuto gives clients known to refresh their tool list the groups
	// mode and every other client the search mode. It is the default.
	ModeAuto Mode = "auto"
	// ModeFlat lists every tool: no folding at all.
	ModeFlat Mode = "flat"
	// ModeGroups lists ungrouped tools, the tools of enabled groups and the
	// meta-tools enable_tools, disable_tools and call_tool; the list changes
	// (with notifications/tools/list_changed) as the client enables groups.
	ModeGroups Mode = "groups"
	// ModeGrouped lists one tool per top-level group, with an "action"
	// property choosing among the group's tools; the list never changes.
	ModeGrouped Mode = "grouped"
	// ModeSearch lists discovery meta-tools and ungrouped tools; the list
	// never changes and every tool is reached through call_tool.
	ModeSearch Mode = "search"
)

// Exposition is how one group's tools appear on the wire.
type Exposition string

const (
	// ExpositionFlat exposes one wire tool per tool. It is the default.
	ExpositionFlat Exposition = "flat"
	// ExpositionGrouped exposes the group as one wire tool whose "action"
	// property picks the tool.
	ExpositionGrouped Exposition = "grouped"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Name and Version identify the server to clients.
	Name    string
	Version string
	// Instructions are sent to clients when they connect.
	Instructions string
	// Mode is the presentation; empty means ModeAuto.
	Mode Mode
	// Exposition applies to groups that do not choose their own; empty
	// means ExpositionFlat.
	Exposition Exposition
	// MaxTools caps how many distinct grouped tools one client may have
	// enabled at once; zero means no limit.
	MaxTools int
	// InitialGroups are enabled for every new client, with their parents.
	InitialGroups []string
	// ExcludeGroups removes groups, their subgroups and every tool in them:
	// clients never see them, even through call_tool.
	ExcludeGroups []string
	// ReadOnly serves only tools that declare readOnlyHint.
	ReadOnly bool
	// HideUngrouped hides tools that are in no group.
	HideUngrouped bool
	// PlainDescriptions turns off the [READ-ONLY] and [DESTRUCTIVE] markers
	// that are otherwise added to tool descriptions.
	PlainDescriptions bool
	// ResetTools offers the reset_tools meta-tool in the groups mode.
	ResetTools bool
	// RefreshingClients are the clientInfo.name values that ModeAuto treats
	// as honouring list_changed; nil means a built-in list.
	RefreshingClients []string
	// SearchingClients are the clientInfo.name values that ModeAuto gives
	// the flat list, for clients that search their tools themselves; nil
	// means a built-in list, an empty list none.
	SearchingClients []string
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
}

// GroupOptions describe a group. The zero value is usable.
type GroupOptions struct {
	// Description says what the group's tools are for; agents read it when
	// deciding what to enable.
	Description string
	// Instructions are returned to the agent when it enables the group.
	Instructions string
	// Tags label the group.
	Tags []string
	// Enabled turns the group on for every new client.
	Enabled bool
	// Exposition overrides the server's default for this group.
	Exposition Exposition
}

func (m Mode) internal() (expose.Mode, error) { return expose.ParseMode(string(m)) }

func (e Exposition) internal() (catalog.Exposition, error) { return catalog.ParseExposition(string(e)) }
