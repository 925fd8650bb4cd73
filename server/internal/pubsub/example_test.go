package pubsub_test

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

// A subscriber of a channel and of a pattern matching it receives a
// message twice, in its protocol.
func Example() {
	type client struct{ name string }
	var r pubsub.Registry[*client]
	alice := &client{"alice"}
	confirm := func(name string, n int) { fmt.Printf("subscribed to %s (%d)\n", name, n) }
	r.Subscribe(alice, pubsub.Channel, [][]byte{[]byte("news")}, confirm)
	r.Subscribe(alice, pubsub.Pattern, [][]byte{[]byte("n*")}, confirm)

	resp3 := func(*client) bool { return false }
	n := r.Publish(pubsub.Channel, []byte("news"), []byte("hello"), resp3, func(c *client, msg []byte) {
		fmt.Printf("to %s: %q\n", c.name, msg)
	})
	fmt.Println("deliveries:", n)
	// Output:
	// subscribed to news (1)
	// subscribed to n* (1)
	// to alice: "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
	// to alice: "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
	// deliveries: 2
}
