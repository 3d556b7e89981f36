package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolfold/toolfold/internal/config"
	"golang.org/x/sys/unix"
)

// TestFindPidsCgroup: the pids cgroup is found in v1, in v2, and on a
// hybrid system where both are mounted and pids is bound to one, and
// its absence is explained.
func TestFindPidsCgroup(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, subtree string) string {
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if subtree != "" {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(subtree+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	v1 := mk("v1/pids/user/me", "")
	v2 := mk("v2/user/me", "cpu pids")
	mk("v2off/user/me", "cpu memory") // v2 mounted, pids not enabled for children
	readOnly := mk("ro/pids/user/me", "")
	canWrite := func(dir string) bool { return dir != readOnly }
	tests := []struct {
		name, cgroup, mounts string
		want, wantErr        string
	}{
		{"v1", "3:pids:/user/me\n1:cpu:/\n", "cgroup " + root + "/v1/pids cgroup rw,pids 0 0\n", v1, ""},
		{"v2", "0::/user/me\n", "cgroup2 " + root + "/v2 cgroup2 rw 0 0\n", v2, ""},
		{"hybrid, pids in v1", "8:pids:/user/me\n0::/user/me\n", "cgroup " + root + "/v1/pids cgroup rw,pids 0 0\ncgroup2 " + root + "/v2off cgroup2 rw 0 0\n", v1, ""},
		{"hybrid, pids in v2", "1:cpu:/\n0::/user/me\n", "cgroup " + root + "/cpu cgroup rw,cpu 0 0\ncgroup2 " + root + "/v2 cgroup2 rw 0 0\n", v2, ""},
		{"v2 without pids for children", "0::/user/me\n", "cgroup2 " + root + "/v2off cgroup2 rw 0 0\n", "", "does not enable pids for its children"},
		{"v1 not writable", "3:pids:/user/me\n", "cgroup " + root + "/ro/pids cgroup rw,pids 0 0\n", "", "is not writable"},
		{"no cgroups mounted", "0::/\n", "proc /proc proc rw 0 0\n", "", "no pids cgroup is mounted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findPidsCgroup(tt.cgroup, tt.mounts, canWrite)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestProcessLimitPerHierarchy: a server forking past its process
// limit is refused by the pids cgroup, in v1 and in v2, wherever this
// machine has each; the same start without the limit forks them all
// (the control). It runs as root or not: the cgroup binds both.
func TestProcessLimitPerHierarchy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat(1) to start")
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip("no cgroups")
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := cgroupBases(string(cg), string(mounts))
	const children, limit = 30, 10
	run := func(t *testing.T, k Kernel, processes int) string {
		t.Helper()
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", spawnEnv, children))
		sb := &config.SandboxConfig{Preset: "go", Exec: []string{"/usr/bin", "/bin"}, Limits: config.SandboxLimits{Processes: processes}}
		prep, err := prepare(cmd, "spawner", sb, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		defer prep.Release()
		out, err := output(cmd, prep)
		if err != nil {
			t.Fatalf("the spawner failed: %v", err)
		}
		line, _, _ := bufio.NewReader(strings.NewReader(out)).ReadLine()
		return string(line)
	}
	for _, h := range []struct {
		name  string
		bases []string
	}{{"v1", v1}, {"v2", v2}} {
		t.Run(h.name, func(t *testing.T) {
			base := ""
			for _, b := range h.bases {
				if ctl, err := os.ReadFile(filepath.Join(b, "cgroup.subtree_control")); h.name == "v1" || (err == nil && strings.Contains(string(ctl), "pids")) {
					if writable(b) {
						base = b
						break
					}
				}
			}
			if base == "" {
				t.Skipf("no writable %s pids cgroup here (mounted at %v; in a hybrid system the pids controller is bound to one hierarchy only)", h.name, h.bases)
			}
			k := ProbeKernel()
			k.PidsCgroup = base
			if got := run(t, k, 0); got != fmt.Sprintf("started %d", children) {
				t.Fatalf("control without a process limit: %s", got)
			}
			got := run(t, k, limit)
			if !strings.HasPrefix(got, "refused after ") || !strings.Contains(got, "resource temporarily unavailable") {
				t.Fatalf("with processes %d in the %s cgroup %s: %s, want the fork refused", limit, h.name, base, got)
			}
			t.Log(got)
		})
	}
}

// ioctlEnv makes this test binary open the device it names for writing
// and ask it for terminal attributes (an ioctl), printing the outcome.
const ioctlEnv = "TOOLFOLD_SANDBOX_TEST_IOCTL"

func tryIoctl(dev string) string {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return "open: " + err.Error()
	}
	defer f.Close()
	_, err = unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return fmt.Sprintf("ioctl: %v", err)
}

// TestNoDeviceIoctl: a device granted for writing (the presets grant
// /dev/null and /dev/tty) takes writes but no ioctl, so a server cannot
// type into the user's terminal with TIOCSTI. The control, without a
// sandbox, reaches the device's driver (which answers that /dev/null is
// no terminal).
func TestNoDeviceIoctl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	k := ProbeKernel()
	if k.LandlockABI < 5 {
		t.Skipf("Landlock ABI %d has no device ioctl rule (ABI 5 has)", k.LandlockABI)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(sb *config.SandboxConfig) string {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), ioctlEnv+"=/dev/null")
		prep := Prepared{Start: cmd.Start, Release: func() {}}
		if sb != nil {
			var err error
			if prep, err = prepare(cmd, "ioctl", sb, nil, k); err != nil {
				t.Fatal(err)
			}
			defer prep.Release()
		}
		out, err := output(cmd, prep)
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(out)
	}
	if got := run(nil); got != "ioctl: "+unix.ENOTTY.Error() {
		t.Fatalf("control without a sandbox: %s, want the driver's %q", got, unix.ENOTTY.Error())
	}
	if got := run(&config.SandboxConfig{Preset: "go"}); got != "ioctl: "+unix.EACCES.Error() {
		t.Fatalf("sandboxed: %s, want the ioctl refused (%q)", got, unix.EACCES.Error())
	}
}

// TestThreadStartLeavesToolfoldAlone: the thread that restricts itself
// to start a server ends with its start, so toolfold (its goroutines on
// every thread, and the unsandboxed servers it starts after) keeps its
// own rights.
func TestThreadStartLeavesToolfoldAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	k := ProbeKernel()
	if k.LandlockABI < 1 {
		t.Skip("no Landlock here")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		cmd := exec.Command("cat", secret)
		prep, err := prepare(cmd, "boxed", &config.SandboxConfig{Preset: "go", Exec: []string{"/usr/bin", "/bin"}}, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		if prep.Policy == nil || needsLauncher(prep.Policy) {
			t.Fatal("the start does not go through a restricted thread")
		}
		if out, err := output(cmd, prep); err == nil {
			t.Fatalf("the sandboxed cat read the secret: %q", out)
		}
		prep.Release()
	}
	// Many goroutines at once, so that they spread over the threads.
	errs := make(chan error, 64)
	for range cap(errs) {
		go func() {
			_, err := os.ReadFile(secret)
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatalf("toolfold lost its own rights: %v", err)
		}
	}
	for range 5 {
		if out, err := exec.Command("cat", secret).Output(); err != nil || string(out) != "s3cret" {
			t.Fatalf("a server started without a sandbox after sandboxed ones: %q, %v", out, err)
		}
	}
}
