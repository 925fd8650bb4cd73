package pubsub

import "fmt"

// CheckInvariants reports the first broken invariant of r: the two indexes
// mirror each other, and neither holds an empty set.
func (r *Registry[S]) CheckInvariants() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for k := range Kind(kinds) {
		for name, subs := range r.subscribers[k] {
			if len(subs) == 0 {
				return fmt.Errorf("kind %d: %q has an empty set of subscribers", k, name)
			}
			for sub := range subs {
				if _, ok := r.subscriptions[k][sub][name]; !ok {
					return fmt.Errorf("kind %d: %v is a subscriber of %q without the subscription", k, sub, name)
				}
			}
		}
		for sub, names := range r.subscriptions[k] {
			if len(names) == 0 {
				return fmt.Errorf("kind %d: %v has an empty set of subscriptions", k, sub)
			}
			for name := range names {
				if _, ok := r.subscribers[k][name][sub]; !ok {
					return fmt.Errorf("kind %d: %v has %q without being its subscriber", k, sub, name)
				}
			}
		}
	}
	return nil
}
