package sandbox

import "fmt"

// landlockABI is the newest Landlock ABI the launcher asks for: files
// (with truncate and device ioctls), TCP, and the scopes that keep the
// server from signalling, or connecting to abstract unix sockets of,
// processes outside its sandbox.
const landlockABI = 6

// Kernel is what the machine can enforce. ProbeKernel reads it from the
// running kernel; tests give one to see each refusal.
type Kernel struct {
	// Linux: the sandbox is built on Linux features alone.
	Linux bool
	// LandlockABI is the kernel's Landlock ABI, 0 where it has none.
	LandlockABI int
	// Root: RLIMIT_NPROC does not bind a process run as root, so its
	// process limit needs a pids cgroup.
	Root bool
	// PidsCgroup is the directory where a start's pids cgroup is made,
	// "" where there is none; PidsCgroupErr says why.
	PidsCgroup    string
	PidsCgroupErr error
}

// Unenforceable names each part of p the running kernel cannot enforce.
func Unenforceable(p *Policy) []string { return ProbeKernel().Missing(p) }

// Missing names each part of p that k cannot enforce, each worded for
// the user who asked for it.
func (k Kernel) Missing(p *Policy) []string {
	if !k.Linux {
		return []string{"the sandbox is enforced on Linux only (Landlock); on this system nothing in the block is"}
	}
	var missing []string
	if k.LandlockABI < 1 {
		missing = append(missing, "this kernel has no Landlock (Linux 5.13 or later with landlock among its LSMs), so no file or network rule can be enforced")
	} else {
		if k.LandlockABI < 4 && !p.AllNetwork {
			missing = append(missing, fmt.Sprintf("Landlock ABI %d has no TCP rules (ABI 4, Linux 6.7, has), so the network is not restricted", k.LandlockABI))
		}
		if k.LandlockABI < landlockABI {
			missing = append(missing, fmt.Sprintf("Landlock ABI %d does not keep the server from signalling processes outside its sandbox or reaching their abstract unix sockets (ABI 6, Linux 6.12, does)", k.LandlockABI))
		}
	}
	if p.Processes > 0 && k.Root && k.PidsCgroup == "" {
		missing = append(missing, fmt.Sprintf("the process limit cannot bind a server run as root without a pids cgroup (%v)", k.PidsCgroupErr))
	}
	return missing
}
