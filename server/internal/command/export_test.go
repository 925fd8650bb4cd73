package command

// LegacyKeys exposes the legacy first/last/step and movablekeys derivation.
func (s *Spec) LegacyKeys() (first, last, step int, movable bool) { return s.legacyKeys() }
