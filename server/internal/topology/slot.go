package topology

// Slots is Redis Cluster's number of hash slots.
const Slots = 16384

// crc16tab is CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0),
// Redis Cluster's key hash.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// KeySlot is the hash slot of key, as Redis computes it: the CRC16 of the
// key, or of its hash tag (the bytes between the first '{' and the first
// '}' after it, if there are any), mod 16384. It takes a string too, so
// that a scan of the key space does not copy each key. It allocates
// nothing.
func KeySlot[K string | []byte](key K) int {
	if i := indexByte(key, '{'); i >= 0 {
		if j := indexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var c uint16
	for i := 0; i < len(key); i++ {
		c = c<<8 ^ crc16tab[byte(c>>8)^key[i]]
	}
	return int(c & (Slots - 1))
}

func indexByte[K string | []byte](s K, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}
