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
//
// # TLS
//
// The server's ServeTLS serves a listener over TLS (crypto/tls, TLS 1.2 and newer) with
// redis.conf's settings (its Config.TLS, and tls.go): tls-cert-file and
// tls-key-file, the server's certificate and key; tls-ca-cert-file, the CAs
// of the clients' certificates; tls-auth-clients yes (the default: a
// client must present a certificate those CAs signed), optional (verified
// if presented) or no (none asked for). The server's TLSConfig builds the same
// tls.Config for anyone else, and names the setting and file it could not
// use. cuckoo serve's --tls-port serves TLS beside the plain port, and
// --port 0 (port 0 in a --config file) turns the plain port off; CONFIG GET
// tls-port and INFO's tls_port report the TLS listener's port, port and
// tcp_port 0 when there is no plain one.
//
// The handshake runs in the connection's goroutine, never in the accept
// loop, within 10 seconds (or timeout, if shorter): a client that connects
// and sends nothing is closed then. CONFIG SET of a tls-* setting builds a
// new configuration from the files, and new connections get it (setting a
// file to its own name reloads it: a renewed certificate is put in force
// with no restart, as in Redis); a file that does not load fails the SET and
// leaves the old configuration in force. An expired certificate is loaded
// with a warning in the log: clients refuse it.
//
// Between nodes, as in Redis: with tls-replication yes a replica connects
// to its primary over TLS, and with tls-cluster yes MIGRATE connects to its
// target over TLS; both verify the other node's certificate against
// tls-ca-cert-file for the host they dial, and present
// tls-client-cert-file and tls-client-key-file (by default the server's own
// certificate, which must then be made for client authentication too).
package tlsconf
