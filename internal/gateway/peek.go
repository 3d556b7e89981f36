package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/groupsext"
	"github.com/toolfold/toolfold/internal/sdkshim"
)

// peekClient reads what a client's first message says about it: clientInfo,
// protocol version and whether it declared the groups extension, from an
// initialize request, or from the per-request _meta that 2026-07-28 clients
// send instead. For a 2026-07-28 client it only picks the server; every
// later request is read again on its own. Anything unreadable yields an
// empty ClientInfo; the SDK will report the malformed message itself.
func peekClient(msg []byte) ClientInfo {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			ClientInfo      struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
			Capabilities *mcp.ClientCapabilities    `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return ClientInfo{}
	}
	if m.Method == "initialize" {
		return ClientInfo{Name: sdkshim.ClipInfo(m.Params.ClientInfo.Name), ProtocolVersion: sdkshim.ClipInfo(m.Params.ProtocolVersion),
			Extension: groupsext.DeclaredIn(m.Params.Capabilities)}
	}
	var c ClientInfo
	if raw, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion]; ok {
		_ = json.Unmarshal(raw, &c.ProtocolVersion)
	}
	if raw, ok := m.Params.Meta[mcp.MetaKeyClientInfo]; ok {
		var info struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &info)
		c.Name = sdkshim.ClipInfo(info.Name)
	}
	if raw, ok := m.Params.Meta[mcp.MetaKeyClientCapabilities]; ok {
		var caps mcp.ClientCapabilities
		if json.Unmarshal(raw, &caps) == nil {
			c.Extension = groupsext.DeclaredIn(&caps)
		}
	}
	return c
}
