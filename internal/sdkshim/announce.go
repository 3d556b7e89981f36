package sdkshim

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The placeholders RegistryAnnouncer puts in a server's registry. Its owner
// answers every list, get, read and call before the registry is consulted,
// so no client sees one.
const (
	PlaceholderPrompt   = "toolfold.list_changed"
	PlaceholderResource = "toolfold://list_changed"
	PlaceholderTool     = "toolfold_list_changed"
)

// RegistryAnnouncer makes the SDK tell a server's clients that a list
// changed which its owner answers from its own state. The SDK sends
// list_changed only when its registry of tools, prompts or resources
// changes, and has no call to send one otherwise
// (TestSDKAnnouncesPromptChangesOnlyFromItsRegistry; docs/sdk-workarounds.md,
// item 2, proposes Server.NotifyListChanged). So each announcement adds a
// placeholder, or removes the one the last added: one change, one
// notification to every session that should hear it, legacy sessions and
// 2026-07-28 listen streams alike, exactly as for a hand-written server.
// (Adding and removing at once relied on the SDK's debounce joining the
// two, which a loaded machine can pull apart: two notifications.)
type RegistryAnnouncer struct {
	server *mcp.Server
	mu     sync.Mutex // orders the announcements
	placed map[string]bool
}

// NewRegistryAnnouncer announces the list changes of s.
func NewRegistryAnnouncer(s *mcp.Server) *RegistryAnnouncer {
	return &RegistryAnnouncer{server: s, placed: map[string]bool{}}
}

// Announce makes the SDK send method, one of the three *ListChanged
// constants, as a change of its registry would: debounced, only where the
// server's capabilities say listChanged, to the sessions that should hear
// it.
func (a *RegistryAnnouncer) Announce(method string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	placed := a.placed[method]
	switch {
	case method == PromptsListChanged && !placed:
		a.server.AddPrompt(&mcp.Prompt{Name: PlaceholderPrompt}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return nil, errPlaceholder
		})
	case method == PromptsListChanged:
		a.server.RemovePrompts(PlaceholderPrompt)
	case method == ResourcesListChanged && !placed:
		a.server.AddResource(&mcp.Resource{Name: PlaceholderPrompt, URI: PlaceholderResource}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, errPlaceholder
		})
	case method == ResourcesListChanged:
		a.server.RemoveResources(PlaceholderResource)
	case method == ToolsListChanged && !placed:
		a.server.AddTool(&mcp.Tool{Name: PlaceholderTool, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errPlaceholder
		})
	case method == ToolsListChanged:
		a.server.RemoveTools(PlaceholderTool)
	default:
		_, err := listChangedRequest(method, nil)
		return err
	}
	a.placed[method] = !placed
	return nil
}

// errPlaceholder answers a request that reached a placeholder, which the
// owner's middleware should have answered first.
var errPlaceholder = errors.New("toolfold's list-change placeholder was reached: a middleware that should answer this request did not; please report it")
