package server

// DecodeOp exposes the op decoder, for FuzzDecodeOp.
func DecodeOp(b []byte) error {
	_, err := decodeOp(b)
	return err
}

// LoadPayload exposes RESTORE's payload decoder, for FuzzDecodeOp.
func LoadPayload(b []byte) error {
	_, err := loadPayload(b, func(_, _ uint64) error { return nil }, func(uint64) {})
	return err
}
