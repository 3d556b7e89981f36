package toolfold

import "errors"

// Errors a Server reports when it cannot serve what it was given. They
// come back wrapped, with a message that names the group, tool or value at
// fault, from Run, Connect and Handler (and from the gateway package's
// Open for a mounted server); test for them with errors.Is.
var (
	// ErrUnknownGroup: Options.InitialGroups or Options.ExcludeGroups
	// names a group that was never added.
	ErrUnknownGroup = errors.New("there is no such group")
	// ErrUnknownTool: Group.Include names a tool that was never added.
	ErrUnknownTool = errors.New("there is no such tool")
	// ErrBadExposition: Options.Exposition or a GroupOptions.Exposition is
	// neither ExpositionFlat nor ExpositionGrouped (nor empty).
	ErrBadExposition = errors.New("unknown exposition")
	// ErrBadMode: Options.Mode is not one of the Mode constants (nor
	// empty).
	ErrBadMode = errors.New("unknown mode")
)
