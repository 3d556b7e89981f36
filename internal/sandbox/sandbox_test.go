package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolfold/toolfold/internal/config"
)

// The test binary plays toolfold (Prepare launches it, and the launcher
// runs in its init) and, told by spawnEnv, the server.
func TestMain(m *testing.M) {
	if n, err := strconv.Atoi(os.Getenv(spawnEnv)); err == nil {
		spawn(n)
		os.Exit(0)
	}
	if dev := os.Getenv(ioctlEnv); dev != "" {
		fmt.Println(tryIoctl(dev))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestResolve(t *testing.T) {
	home := t.TempDir()
	notes := filepath.Join(home, "notes")
	if err := os.Mkdir(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		sb      config.SandboxConfig
		wantErr string
		check   func(t *testing.T, p *Policy)
	}{
		{name: "home expanded, program granted", sb: config.SandboxConfig{Read: []string{"~/notes"}}, check: func(t *testing.T, p *Policy) {
			if len(p.Read) != 1 || p.Read[0] != notes {
				t.Errorf("read = %v, want [%s]", p.Read, notes)
			}
			if len(p.Exec) == 0 || !strings.HasSuffix(p.Exec[0], "true") {
				t.Errorf("exec = %v, want the program", p.Exec)
			}
		}},
		{name: "a missing granted path", sb: config.SandboxConfig{Write: []string{"~/nowhere"}}, wantErr: "create it or take it out"},
		{name: "preset none grants nothing else", sb: config.SandboxConfig{Preset: "none"}, check: func(t *testing.T, p *Policy) {
			if len(p.Read)+len(p.Write) != 0 {
				t.Errorf("read %v write %v", p.Read, p.Write)
			}
		}},
		{name: "preset go grants the system", sb: config.SandboxConfig{Preset: "go"}, check: func(t *testing.T, p *Policy) {
			if !strings.Contains(strings.Join(p.Read, " "), "/etc") {
				t.Errorf("read = %v, want /etc", p.Read)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Resolve("s", &tt.sb, "true", home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

// BenchmarkStart is what the sandbox adds to a server's start: "true"
// prepared, started and waited for, plainly, from a restricted thread
// (with and without a pids cgroup) and through the launcher (a limit
// only a process can take). ns/op is the whole start as toolfold sees
// it; cpu-ms/op the started process's CPU time.
//
//	go test -run '^$' -bench Start -benchtime 200x ./internal/sandbox/
func BenchmarkStart(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the sandbox is enforced on Linux")
	}
	for _, bc := range []struct {
		name string
		sb   *config.SandboxConfig
	}{
		{"plain", nil},
		{"sandbox", &config.SandboxConfig{Preset: "go"}},
		{"sandbox+processes", &config.SandboxConfig{Preset: "go", Limits: config.SandboxLimits{Processes: 64}}},
		{"sandbox+openFiles (launcher)", &config.SandboxConfig{Preset: "go", Limits: config.SandboxLimits{OpenFiles: 256}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command("true")
				prep := Prepared{Start: cmd.Start, Release: func() {}}
				if bc.sb != nil {
					var err error
					if prep, err = Prepare(cmd, "bench", bc.sb, nil); err != nil {
						b.Fatal(err)
					}
				}
				if out, err := output(cmd, prep); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				prep.Release()
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// spawnEnv makes this test binary a program that starts the number of
// children it says (each a "cat" that waits on its stdin) and reports
// how far it got.
const spawnEnv = "TOOLFOLD_SANDBOX_TEST_SPAWN"

// spawn runs in the child: it starts n children and prints "started n"
// or "refused after i: why".
func spawn(n int) {
	var stdins []*os.File
	defer func() {
		for _, w := range stdins {
			w.Close()
		}
	}()
	for i := range n {
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Println("pipe:", err)
			return
		}
		c := exec.Command("cat")
		c.Stdin = r
		err = c.Start()
		r.Close()
		if err != nil {
			w.Close()
			fmt.Printf("refused after %d: %v\n", i, err)
			return
		}
		stdins = append(stdins, w)
	}
	fmt.Printf("started %d\n", n)
}

// output runs a prepared command to its end and returns its stdout.
func output(cmd *exec.Cmd, prep Prepared) (string, error) {
	var out strings.Builder
	cmd.Stdout = &out
	if err := prep.Start(); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}
