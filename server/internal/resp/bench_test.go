package resp

import (
	"fmt"
	"io"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/tidwall/redcon"
)

// loopReader serves data again and again, as a client that keeps sending
// the same pipeline.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// pipeline returns n CF.ADD requests with 16-byte items.
func pipeline(n int) []byte {
	var b []byte
	for i := range n {
		b = resptest.AppendRequest(b, "CF.ADD", "key", fmt.Sprintf("%016d", i))
	}
	return b
}

// BenchmarkRead parses pipelined requests with this package's Reader and,
// side by side, with redcon's (the reader the server used before): ns per
// request.
func BenchmarkRead(b *testing.B) {
	for _, depth := range []int{1, 16} {
		data := pipeline(depth)
		b.Run(fmt.Sprintf("pipeline=%d/reader=resp", depth), func(b *testing.B) {
			rd := NewReader(&loopReader{data: data})
			b.ReportAllocs()
			b.SetBytes(int64(len(data) / depth))
			for range b.N {
				for {
					args, err := rd.Next(true, defaultLimits)
					if err != nil {
						b.Fatal(err)
					}
					if args != nil {
						break
					}
					if err := rd.Fill(defaultLimits); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("pipeline=%d/reader=redcon", depth), func(b *testing.B) {
			rd := redcon.NewReader(&loopReader{data: data})
			b.ReportAllocs()
			b.SetBytes(int64(len(data) / depth))
			var pending []redcon.Command
			for range b.N {
				if len(pending) == 0 {
					var err error
					if pending, err = rd.ReadCommands(); err != nil && err != io.EOF {
						b.Fatal(err)
					}
				}
				pending = pending[1:]
			}
		})
	}
}

// TestReadAllocatesNothing: parsing a request allocates nothing once the
// buffer has grown.
func TestReadAllocatesNothing(t *testing.T) {
	rd := NewReader(&loopReader{data: pipeline(16)})
	next := func() {
		for {
			args, err := rd.Next(true, defaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if args != nil {
				return
			}
			if err := rd.Fill(defaultLimits); err != nil {
				t.Fatal(err)
			}
		}
	}
	next()
	if n := testing.AllocsPerRun(1000, next); n != 0 {
		t.Errorf("%.1f allocations a request", n)
	}
}
