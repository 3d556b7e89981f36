package toolfold_test

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/toolfold/toolfold"
)

// TestLibraryCarriesNoGateway: a library server links the engine (catalog,
// views, exposition, meta-tools, search) and the SDK, never what only the
// gateway command needs: the config loader and YAML, the upstream
// supervisor, the command runner, the tokenizer's tables, metrics.
func TestLibraryCarriesNoGateway(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/toolfold/toolfold").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/toolfold/toolfold/internal/assemble",
		"github.com/toolfold/toolfold/internal/config",
		"github.com/toolfold/toolfold/internal/upstream",
		"github.com/toolfold/toolfold/internal/cmdtool",
		"github.com/toolfold/toolfold/internal/tokens",
		"github.com/toolfold/toolfold/internal/httpapi",
		"github.com/toolfold/toolfold/internal/metrics",
		"github.com/tiktoken-go/tokenizer",
		"go.yaml.in/yaml/v3",
		"github.com/prometheus/client_golang/prometheus",
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	for _, p := range forbidden {
		if deps[p] {
			t.Errorf("the library depends on %s", p)
		}
	}
}

// TestPublicAPIHasNoInternalTypes: no exported method of the library's
// types takes or returns a type of an internal package, which a user can
// neither name nor rely on.
func TestPublicAPIHasNoInternalTypes(t *testing.T) {
	for _, v := range []any{&toolfold.Server{}, &toolfold.Group{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			var params []reflect.Type
			for j := range m.Type.NumIn() {
				params = append(params, m.Type.In(j))
			}
			for j := range m.Type.NumOut() {
				params = append(params, m.Type.Out(j))
			}
			for _, p := range params {
				for p.Kind() == reflect.Pointer || p.Kind() == reflect.Slice || p.Kind() == reflect.Map {
					p = p.Elem()
				}
				if strings.Contains(p.PkgPath(), "/internal/") {
					t.Errorf("(%s).%s uses %s, an internal type", typ, m.Name, p)
				}
			}
		}
	}
}
