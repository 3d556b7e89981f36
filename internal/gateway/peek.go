package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peekClient reads what a client's first message says about it: clientInfo
// and protocol version from an initialize request, or from the per-request
// _meta that 2026-07-28 clients send instead. Anything unreadable yields an
// empty ClientInfo; the SDK will report the malformed message itself.
func peekClient(msg []byte) ClientInfo {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			ClientInfo      struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return ClientInfo{}
	}
	if m.Method == "initialize" {
		return ClientInfo{Name: m.Params.ClientInfo.Name, ProtocolVersion: m.Params.ProtocolVersion}
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
		c.Name = info.Name
	}
	return c
}
