package upstream

import "strings"

// Instructions returns what the server said in its initialize result's
// instructions, with the secrets of its config masked (the same
// masking as its errors and stderr), from the live connection or the cache,
// never starting anything. ok is false when nothing is known of the server
// yet; an empty string with ok means it gave none.
//
// A client connected to the server directly shows these to its model;
// through toolfold they become the instructions of the server's group.
func (m *Manager) Instructions(name string) (text string, ok bool) {
	s, err := m.lookup(name)
	if err != nil {
		return "", false
	}
	ir, ok := s.initResult()
	if !ok {
		return "", false
	}
	return strings.TrimSpace(s.secrets.String(ir.Instructions)), true
}
