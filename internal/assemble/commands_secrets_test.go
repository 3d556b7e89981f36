package assemble

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold/internal/config"
)

// TestCommandResultsHoldNoSecret: a program given a secret through its env
// and its argv (both from ${VAR}) that prints it on stdout and stderr and
// fails: no part of the tool's result holds it, the failure still reads,
// and a ${HOME} path is not masked.
func TestCommandResultsHoldNoSecret(t *testing.T) {
	env := map[string]string{"LEAK_SECRET": "leak-secret-5d2c71", "ARG_SECRET": "arg-secret-90ab3e", "HOME": "/home/ann"}
	cfg, diags := config.Parse("toolfold.json", []byte(`{"commands": {"leak": {"command": "sh", "env": {"TOKEN": "${LEAK_SECRET}", "WHERE": "${HOME}/notes"},
		"actions": {"fail": {"argv": ["-c", "echo \"the token $TOKEN was rejected, given $0, in $WHERE\" >&2; echo \"stdout has $TOKEN\"; exit 1", "--token=${ARG_SECRET}"]}}}}}`),
		config.Options{LookupEnv: config.MapEnv(env)})
	if diags.HasErrors() {
		t.Fatal(diags.String())
	}
	p, err := FromConfig(context.Background(), cfg, Switches{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tool *mcp.ToolHandler
	for _, tl := range p.Spec.Tools {
		if tl.ID == "leak__fail" {
			tool = &tl.Handler
		}
	}
	if tool == nil {
		t.Fatal("no leak__fail tool")
	}
	res, err := (*tool)(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "leak__fail"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	all := string(raw)
	for name, secret := range map[string]string{"LEAK_SECRET": env["LEAK_SECRET"], "ARG_SECRET": env["ARG_SECRET"]} {
		if strings.Contains(all, secret) {
			t.Errorf("the result holds %s:\n%s", name, all)
		}
	}
	for _, want := range []string{"the token *** was rejected, given --token=***, in /home/ann/notes", "stdout has ***", "exit code 1", `"argv":["sh","-c"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the result lacks %q:\n%s", want, all)
		}
	}
	if !res.IsError {
		t.Error("the failed run is not an error result")
	}
}
