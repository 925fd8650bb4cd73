package peer

import (
	"net"
	"sync"
	"time"
)

// Idle is how long a connection is kept in the pool unused, as Redis keeps
// its cached MIGRATE sockets ten seconds.
const Idle = 10 * time.Second

// Key names a target: connections over TLS and not are kept apart.
type Key struct {
	Addr string // host:port
	TLS  bool
}

// Pool keeps connections to targets between MIGRATEs. The zero Pool is
// empty and ready to use.
type Pool struct {
	mu   sync.Mutex
	idle map[Key][]*Conn // by target, the most recently Put last
}

// Take hands out a connection to k for the caller alone: the one Put last,
// or, if none is idle, a new one from dial. It first closes every
// connection, to any target, idle for longer than Idle. A dial error is
// returned as it is (the caller may log it; ErrConnect is Redis's reply).
func (p *Pool) Take(k Key, dial func() (net.Conn, error)) (*Conn, error) {
	var c *Conn
	now := time.Now()
	p.mu.Lock()
	for key, cs := range p.idle {
		kept := cs[:0]
		for _, x := range cs {
			if now.Sub(x.used) > Idle {
				x.nc.Close()
			} else {
				kept = append(kept, x)
			}
		}
		if len(kept) == 0 {
			delete(p.idle, key)
		} else {
			p.idle[key] = kept
		}
	}
	if cs := p.idle[k]; len(cs) > 0 {
		c, p.idle[k] = cs[len(cs)-1], cs[:len(cs)-1]
	}
	p.mu.Unlock()
	if c != nil {
		return c, nil
	}
	nc, err := dial()
	if err != nil {
		return nil, err
	}
	return NewConn(nc), nil
}

// Put gives c, taken for k, back for the next Take of k; a Broken c is
// closed instead. The caller must not use c after.
func (p *Pool) Put(k Key, c *Conn) {
	if c.broken {
		c.nc.Close()
		return
	}
	c.used = time.Now()
	p.mu.Lock()
	if p.idle == nil {
		p.idle = map[Key][]*Conn{}
	}
	p.idle[k] = append(p.idle[k], c)
	p.mu.Unlock()
}

// CloseAll closes every idle connection (at shutdown). Connections taken
// out are their takers' to Put or close.
func (p *Pool) CloseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	p.idle = nil
}
