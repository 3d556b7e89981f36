//go:build !linux

package sandbox

const ioctlEnv = "TOOLFOLD_SANDBOX_TEST_IOCTL"

func tryIoctl(string) string { return "ioctl: not tried off Linux" }
