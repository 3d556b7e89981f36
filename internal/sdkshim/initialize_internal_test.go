package sdkshim

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompactInitializeKeepsWhatTheSDKReads: the compact initialize holds
// every small capability and extension, and clientInfo's name, title and
// version, as sent; what is large or unread is gone.
func TestCompactInitializeKeepsWhatTheSDKReads(t *testing.T) {
	caps := json.RawMessage(`{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},` +
		`"extensions":{"io.modelcontextprotocol/grouping":{},"x/big":{"v":"` + strings.Repeat("b", maxCapabilityValue) + `"}},` +
		`"experimental":{"huge":"` + strings.Repeat("e", maxCapabilityValue) + `"}}`)
	info := json.RawMessage(`{"name":"` + strings.Repeat("n", 300) + `","title":"T","version":"1.2","icons":[{"src":"x"}]}`)
	out, err := CompactInitialize(json.RawMessage(`7`), "initialize", "2025-11-25", caps, info)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID     int `json:"id"`
		Params struct {
			ProtocolVersion string                     `json:"protocolVersion"`
			Capabilities    map[string]json.RawMessage `json:"capabilities"`
			ClientInfo      map[string]any             `json:"clientInfo"`
		} `json:"params"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Params
	want := map[string]string{
		"sampling":    `{"tools":{}}`,
		"elicitation": `{"form":{},"url":{}}`,
		"roots":       `{"listChanged":true}`,
		"extensions":  `{"io.modelcontextprotocol/grouping":{},"x/big":{}}`,
	}
	for k, v := range want {
		if string(p.Capabilities[k]) != v {
			t.Errorf("capability %s = %s, want %s", k, p.Capabilities[k], v)
		}
	}
	if _, ok := p.Capabilities["experimental"]; ok {
		t.Error("an experimental capability over the limit was kept")
	}
	if got.ID != 7 || p.ProtocolVersion != "2025-11-25" || len(p.ClientInfo["name"].(string)) != maxInfoText ||
		p.ClientInfo["title"] != "T" || p.ClientInfo["version"] != "1.2" || p.ClientInfo["icons"] != nil {
		t.Errorf("compact initialize %s", out)
	}
}
