package main

import (
	"testing"
)

// TestByteForwardingSwitches: the flag turns byte forwarding off whatever
// the environment says; TOOLFOLD_BYTE_FORWARDING turns it off or leaves
// it on; anything else is a usage error that says what to write.
func TestByteForwardingSwitches(t *testing.T) {
	for _, tc := range []struct {
		flag    bool
		env     string // "-": unset
		off     bool
		wantErr bool
	}{
		{false, "-", false, false},
		{true, "-", true, false},
		{true, "on", true, false},
		{false, "off", true, false},
		{false, "OFF", true, false},
		{false, "on", false, false},
		{false, "sometimes", false, true},
	} {
		lookup := func(k string) (string, bool) {
			if k != "TOOLFOLD_BYTE_FORWARDING" || tc.env == "-" {
				return "", false
			}
			return tc.env, true
		}
		off, err := byteForwardingOff(tc.flag, lookup)
		if off != tc.off || (err != nil) != tc.wantErr {
			t.Errorf("flag %v, env %q: off %v, err %v; want off %v, error %v", tc.flag, tc.env, off, err, tc.off, tc.wantErr)
		}
	}
}
