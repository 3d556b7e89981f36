//go:build !linux

package sandbox

// ProbeKernel: only Linux has the kernel features the sandbox uses.
func ProbeKernel() Kernel { return Kernel{} }

func setup(*Policy, Kernel) (func(), error) { return func() {}, nil }
