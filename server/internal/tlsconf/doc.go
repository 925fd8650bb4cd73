// Package tlsconf builds the crypto/tls configurations of redis.conf's
// tls-* settings: the listener's (Server: the key pair, the CAs that sign
// clients' certificates, tls-auth-clients mapped to a ClientAuth, TLS 1.2
// and newer) and the one the server connects to other nodes with (Client:
// the client certificate, the CAs that sign the other nodes'). Each error
// names the setting and the file it could not use, in the words CONFIG SET
// replies with; SettingOf finds the setting again.
//
// It reads files and builds values, nothing more: the listener, each
// connection's handshake, and putting a new configuration in force on
// CONFIG SET are the server's (tls.go).
//
// It imports only the standard library; package server imports it, and
// internal/conf, whose Config holds a Settings.
package tlsconf
