package rdb

import (
	"errors"
	"fmt"
)

// Errors of decoding. Each error a Reader or DecompressLZF returns wraps
// exactly one of ErrTruncated, ErrCorrupt and ErrTooLarge (test with
// errors.Is); a Reader's also say what it found and at which byte. Redis
// replies "Bad data format" to a RESTORE that fails any of them.
var (
	// ErrTruncated: the bytes end inside a field.
	ErrTruncated = errors.New("rdb: payload ends inside a field")
	// ErrCorrupt: a field is not valid RDB (or LZF) encoding, or is not the
	// field the caller asked for.
	ErrCorrupt = errors.New("rdb: malformed payload")
	// ErrTooLarge: a string states a length above the caller's limit.
	// Nothing was allocated for it.
	ErrTooLarge = errors.New("rdb: string longer than the limit")
)

// corrupt returns ErrCorrupt with a detail and the offset it was found at.
func corrupt(off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", ErrCorrupt, fmt.Sprintf(format, args...), off)
}

// truncated returns ErrTruncated naming what was being read, and where.
func truncated(off int, what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrTruncated, what, off)
}
