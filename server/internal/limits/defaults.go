package limits

// Defaults of the client limits that a Config leaves at zero, Redis's where
// Redis has the limit (maxclients, proto-max-bulk-len,
// client-query-buffer-limit).
const (
	DefaultMaxClients  = 10000
	DefaultMaxBulk     = 512 << 20
	DefaultQueryBuffer = 1 << 30
	DefaultMaxArgs     = 1 << 20
	DefaultMaxItem     = 64 << 10 // this server's own: the longest item or key
)

// Or returns n, or def if n is not positive: a limit's zero value means
// its default.
func Or(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
