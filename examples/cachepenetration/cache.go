package main

import (
	"container/list"
	"sync"
)

// lru is a cache of at most size users that evicts the least recently used.
// One mutex guards it: the cache is small and its critical sections are a
// map access and a list splice.
//
// It caches only users that exist. Caching "not found" as well (negative
// caching) does not stop cache penetration: requests for ids that do not
// exist are mostly for ids never asked before, and every one of them misses.
type lru struct {
	mu    sync.Mutex
	size  int
	order list.List // of *user, most recently used first
	index map[int64]*list.Element
}

func newLRU(size int) *lru {
	return &lru{size: size, index: make(map[int64]*list.Element, size)}
}

func (c *lru) get(id int64) (user, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[id]
	if !ok {
		return user{}, false
	}
	c.order.MoveToFront(e)
	return *e.Value.(*user), true
}

func (c *lru) put(u user) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[u.ID]; ok {
		*e.Value.(*user) = u
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.size {
		oldest := c.order.Back()
		delete(c.index, oldest.Value.(*user).ID)
		c.order.Remove(oldest)
	}
	c.index[u.ID] = c.order.PushFront(&u)
}

func (c *lru) remove(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[id]; ok {
		delete(c.index, id)
		c.order.Remove(e)
	}
}
