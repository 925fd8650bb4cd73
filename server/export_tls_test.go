package server

import "time"

// SetHandshakeTimeout sets the TLS handshake bound until the returned
// function restores it.
func SetHandshakeTimeout(d time.Duration) (restore func()) {
	old := handshakeTimeout
	handshakeTimeout = d
	return func() { handshakeTimeout = old }
}
