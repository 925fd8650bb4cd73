// Package integer reads request arguments as Redis reads them. It imports
// nothing of the server, so that the commands (package server) and the
// filter value (package cf, which parses CF.RESERVE's and CF.INSERT's
// arguments) share one reading.
package integer

import "strconv"

// Parse parses b as Redis's string2ll does: an optional minus sign and
// decimal digits, no plus sign, no leading zero (but "0"), no "-0", no
// spaces, within int64. RedisBloom's RedisModule_StringToLongLong reads
// the same way, so "+1", "01" and "-0" are refused as RedisBloom refuses
// them.
func Parse(b []byte) (int64, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || digits[0] < '0' || digits[0] > '9' || digits[0] == '0' && len(b) > 1 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	return v, err == nil
}
