package peer

import "time"

// Age makes every idle connection look put back d earlier, so tests reach
// Idle without waiting for it.
func (p *Pool) Age(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.idle {
		for _, c := range cs {
			c.used = c.used.Add(-d)
		}
	}
}
