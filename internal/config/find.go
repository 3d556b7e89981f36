package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ConfigEnvVar names the environment variable that points at a config file.
const ConfigEnvVar = "TOOLFOLD_CONFIG"

// DefaultFileNames are looked for in the working directory, in this order, when
// neither --config nor $TOOLFOLD_CONFIG names a file.
func DefaultFileNames() []string {
	return []string{"toolfold.json", "toolfold.yaml", "toolfold.yml"}
}

// Find locates the config file (docs/design.md#config-lookup): explicit (the --config flag), else
// $TOOLFOLD_CONFIG, else the first of DefaultFileNames in cwd. found is false when
// there is none, and the caller then says how to write one (the demo is
// served only on request). A named file that
// does not exist is an error rather than "not found": silently serving the demo
// instead of the file the user asked for would hide a typo.
// A relative explicit path is returned as given and checked against cwd; an empty
// cwd means the process's working directory.
func Find(explicit string, lookup LookupEnv, cwd string) (path string, found bool, err error) {
	check := func(p, source string) (string, bool, error) {
		full := p
		if !filepath.IsAbs(p) && cwd != "" {
			full = filepath.Join(cwd, p)
		}
		info, statErr := os.Stat(full)
		switch {
		case errors.Is(statErr, fs.ErrNotExist):
			return "", false, fmt.Errorf("the config file %q given by %s does not exist; fix the path or remove %s: %w", p, source, source, statErr)
		case statErr != nil:
			return "", false, fmt.Errorf("cannot use the config file %q given by %s: %w", p, source, statErr)
		case info.IsDir():
			return "", false, fmt.Errorf("%q given by %s is a directory; name the config file inside it", p, source)
		}
		return p, true, nil
	}
	if explicit != "" {
		return check(explicit, "--config")
	}
	if lookup != nil {
		if p, ok := lookup(ConfigEnvVar); ok && p != "" {
			return check(p, "$"+ConfigEnvVar)
		}
	}
	for _, name := range DefaultFileNames() {
		p := name
		if cwd != "" {
			p = filepath.Join(cwd, name)
		}
		info, statErr := os.Stat(p)
		if statErr == nil && !info.IsDir() {
			return p, true, nil
		}
		if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
			return "", false, fmt.Errorf("cannot read %q: %w", p, statErr)
		}
	}
	return "", false, nil
}
