package server

// SetPubsubLimit sets the bytes one subscriber may have waiting before it
// is disconnected (client-output-buffer-limit pubsub), and returns a
// function that restores the old limit. Call it before starting servers.
func SetPubsubLimit(n int) (restore func()) {
	old := pubsubLimit
	pubsubLimit = n
	return func() { pubsubLimit = old }
}
