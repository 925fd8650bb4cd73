package rdb

// A Reader reads RDB fields from a payload, in order, from its first
// byte, footer included, as Redis reads a value (doc.go, "Payload"). It
// allocates only for the strings it returns, never more than the limit
// each read is given; every other read allocates nothing but its error.
// After an error the Reader's position is unspecified: stop.
type Reader struct {
	b   []byte
	off int // the next byte to read
}

// NewReader returns a Reader of b. The Reader never writes to b, and the
// strings it returns never alias it.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Len is the number of bytes not yet read. A caller that has read the
// whole value checks that it is 0: Redis ignores bytes after a value, but a
// payload we write never has any.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Offset is the number of bytes read so far, for error messages.
func (r *Reader) Offset() int { return r.off }

// ReadType reads the object type byte that begins a payload's body:
// TypeString, TypeModule, or another of Redis's types, returned as it is.
func (r *Reader) ReadType() (byte, error) {
	if r.off >= len(r.b) {
		return 0, truncated(r.off, "object type")
	}
	r.off++
	return r.b[r.off-1], nil
}
