package sdkshim

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/toolfold/toolfold/internal/rawcall"
)

// What a session keeps of its client's initialize request is bounded,
// whatever the client sends: the SDK keeps the request's params for the
// session's life (TestSDKKeepsTheInitializeParams; docs/sdk-workarounds.md,
// item 10, proposes ServerOptions.KeepInitializeParams), so a client
// padding them would otherwise make a cap on sessions no bound on memory.
// CompactInitialize makes the request to hand the SDK instead, with only
// what it reads, each part within these limits.
const (
	// maxInfoText bounds each of clientInfo's name, title and version.
	maxInfoText = 256
	// maxCapabilityValue bounds one capability's value (and one
	// extension's settings); a larger one is dropped, and a larger
	// extension keeps its name with empty settings.
	maxCapabilityValue = 4 << 10
	// maxCapabilities bounds how many capabilities and extensions are
	// kept.
	maxCapabilities = 32
)

// CompactInitialize re-encodes an initialize request's params with only
// what the SDK and the gateway read, within the limits above: the protocol
// version, the capabilities and clientInfo's name, title and version.
// _meta and everything else are dropped.
func CompactInitialize(id json.RawMessage, method string, protocolVersion string, caps, info json.RawMessage) ([]byte, error) {
	type params struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities,omitempty"`
		ClientInfo      json.RawMessage `json:"clientInfo,omitempty"`
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  params          `json:"params"`
	}{"2.0", id, method, params{clip(protocolVersion, maxInfoText), compactCapabilities(caps), compactClientInfo(info)}})
}

// compactCapabilities keeps the capabilities whose values are small, and
// of the extensions each name with its settings if they are small.
func compactCapabilities(caps json.RawMessage) json.RawMessage {
	if len(caps) == 0 || caps[0] != '{' {
		return caps
	}
	kept := map[string]json.RawMessage{}
	_ = rawcall.Members(caps, func(k, v []byte) bool {
		if len(kept) >= maxCapabilities || len(k) > maxInfoText {
			return len(kept) < maxCapabilities
		}
		name := string(k) // Members hands keys without their quotes
		switch {
		case name == "extensions" && len(v) > 0 && v[0] == '{':
			kept[name] = compactExtensions(v)
		case len(v) <= maxCapabilityValue:
			kept[name] = json.RawMessage(v)
		}
		return true
	})
	out, err := json.Marshal(kept)
	if err != nil {
		return json.RawMessage("{}")
	}
	return out
}

func compactExtensions(exts []byte) json.RawMessage {
	kept := map[string]json.RawMessage{}
	_ = rawcall.Members(exts, func(k, v []byte) bool {
		name := string(k)
		if len(name) > maxInfoText {
			return true
		}
		if len(v) > maxCapabilityValue {
			v = []byte("{}")
		}
		kept[name] = json.RawMessage(v)
		return len(kept) < maxCapabilities
	})
	out, err := json.Marshal(kept)
	if err != nil {
		return json.RawMessage("{}")
	}
	return out
}

// compactClientInfo keeps clientInfo's name, title and version, clipped.
func compactClientInfo(info json.RawMessage) json.RawMessage {
	if len(info) == 0 || info[0] != '{' {
		return info
	}
	var in struct {
		Name    string `json:"name"`
		Title   string `json:"title,omitempty"`
		Version string `json:"version"`
	}
	if json.Unmarshal(info, &in) != nil {
		return info // the SDK says what is wrong with it
	}
	in.Name, in.Title, in.Version = clip(in.Name, maxInfoText), clip(in.Title, maxInfoText), clip(in.Version, maxInfoText)
	out, err := json.Marshal(in)
	if err != nil {
		return info
	}
	return out
}

// ClipInfo cuts a text of clientInfo (or a protocol version) as
// CompactInitialize does, so that what its owner reports of a client is
// what the SDK keeps.
func ClipInfo(s string) string { return clip(s, maxInfoText) }

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
